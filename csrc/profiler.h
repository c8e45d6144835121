// fastt::profiler: per-kernel events (lookup, kernel start/end, allocations)
// recorded through the hook in lookup_kernel (dispatch.h). Off by default;
// when off the hook costs one load and a predicted branch per op.
#pragma once
#include <cstdint>
#include <vector>

namespace fastt {
namespace profiler {

// One kernel call. Times are CLOCK_MONOTONIC nanoseconds (the clock behind
// std::chrono::steady_clock and Python's time.monotonic_ns()).
struct ProfileEvent {
  uint16_t op;          // an Op value (dispatch.h)
  int32_t thread;       // OS thread id (gettid)
  int64_t t_lookup;     // the thread's last lookup_kernel before the call
  int64_t t_start;      // kernel entry
  int64_t t_end;        // kernel return
  int64_t prev_end;     // previous event's t_end on this thread (or, for its
                        // first event, when the thread joined the session)
  int64_t allocs;       // allocator requests on this thread since prev_end
  // Framework tax: time on this thread between the previous kernel and
  // this one (binding, checks, allocation, dispatch, autograd, caller code).
  int64_t tax_ns() const { return t_start - prev_end; }
  int64_t kernel_ns() const { return t_end - t_start; }
};

// Starts a session; RuntimeError if one is already running.
void start();
// Ends the session and returns every thread's events, each thread's in
// order; RuntimeError if none is running.
std::vector<ProfileEvent> stop();
bool is_enabled();
// The clock events use.
int64_t now_ns();
// The thread id events carry for the calling thread.
int32_t current_thread_id();
// The op's name as in ops.def ("add", "relu", ...).
const char* op_name(uint16_t op);

}  // namespace profiler
}  // namespace fastt
