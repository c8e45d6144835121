// The per-thread heap block of csrc/thread_state.h.
#include "csrc/thread_state.h"

#include "csrc/capture.h"

namespace fastt {

ThreadState& thread_state() {
  thread_local std::unique_ptr<ThreadState> s;
  if (FASTT_UNLIKELY(!s)) s = std::make_unique<ThreadState>();
  return *s;
}

ThreadState::~ThreadState() {
  if (recorder != nullptr) capture::thread_exit(recorder);
}

}  // namespace fastt
