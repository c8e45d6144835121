// Per-(thread, device) library handle state (cuBLAS in linalg.cu, cuDNN in
// cudnn_conv.cpp) that an exiting thread hands to a pool new threads take
// from, so short-lived threads do not leak a handle each.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/cuda/runtime.h"

namespace fastt {
namespace cuda {

// State: copyable, value-initialised to "no handle" with a `created` flag.
// Handles are never destroyed (teardown at exit races the CUDA context's).
template <class State>
struct HandlePool {
  std::mutex mutex;
  std::vector<State> free[kMaxDevices];
  // Leaked on purpose: threads still exit (and hand theirs back) during
  // process teardown.
  static HandlePool& get() {
    static HandlePool* pool = new HandlePool;
    return *pool;
  }
};

// Behind a pointer: the extension's whole TLS segment must fit glibc's
// small static-TLS surplus (runtime.cpp uses initial-exec TLS).
template <class State>
struct ThreadHandleStates {
  std::unique_ptr<State[]> states;
  ~ThreadHandleStates() {
    if (!states) return;
    HandlePool<State>& pool = HandlePool<State>::get();
    std::lock_guard<std::mutex> lock(pool.mutex);
    for (int d = 0; d < kMaxDevices; ++d)
      if (states[d].created) pool.free[d].push_back(states[d]);
  }
};

// This thread's state for device `dev`: a pooled one (as its last thread
// left it) on first use when the pool has one, else value-initialised
// (the caller creates the handle and sets `created`).
template <class State>
State& thread_handle_state(int dev) {
  thread_local ThreadHandleStates<State> t;
  if (FASTT_UNLIKELY(!t.states)) t.states.reset(new State[kMaxDevices]());
  State& s = t.states[dev];
  if (FASTT_UNLIKELY(!s.created)) {
    HandlePool<State>& pool = HandlePool<State>::get();
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (!pool.free[dev].empty()) {
      s = pool.free[dev].back();
      pool.free[dev].pop_back();
    }
  }
  return s;
}

}  // namespace cuda
}  // namespace fastt
