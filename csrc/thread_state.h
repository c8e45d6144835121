// Per-thread state that no hot path reads, in one heap block behind one
// thread_local pointer: fastt._C's static TLS block must stay a few
// hundred bytes (tests/python/test_static_tls.py), so vectors, maps and
// buffers do not go in thread_locals of their own. The hot per-thread
// flags (grad mode, autocast on, saved-tensor hooks on) stay single bytes
// in TLS.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "csrc/autograd.h"
#include "csrc/device.h"
#include "csrc/dtype.h"
#include "csrc/tensor.h"

namespace fastt {
namespace capture {
struct Recorder;
}

struct ThreadState {
  ThreadState() = default;
  ~ThreadState();  // stops a recording the thread left running
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;
  // csrc/capture.cpp: the recording this thread runs (null: none).
  capture::Recorder* recorder = nullptr;
  // autograd/engine.cpp: the saved-tensor hooks stack (innermost last),
  // the epochs of the backward walks running in this thread (outermost
  // first) and, per walk, whether it accumulates into every leaf.
  std::vector<std::shared_ptr<SavedTensorHooks>> saved_hooks;
  std::vector<uint64_t> walks;
  std::vector<bool> walk_accumulates;
  // csrc/autocast.cpp: per device type, on and its dtype; the weight-cast
  // cache (source kept so its address is not reused, and its cast).
  bool autocast_enabled[kNumDeviceTypes] = {false, false};
  DType autocast_dtype[kNumDeviceTypes] = {DType::BFloat16, DType::Float16};
  bool autocast_cache = true;
  std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>>
      autocast_casts;
  // kernels/cpu/linalg.cpp: float staging of 16-bit GEMM operands.
  std::vector<float> gemm_buffer;
  // kernels/cpu/half_block.h (Staging): float32 copies of 16-bit data.
  std::vector<float> half_staging;
  // kernels/cpu/optim.cpp: per-tensor Adam scalars (here, not in a
  // thread_local of that file, which exists once per instruction-set level).
  std::vector<double> adam_scalars;
};

// This thread's block (created on first use, freed at thread exit).
ThreadState& thread_state();

}  // namespace fastt
