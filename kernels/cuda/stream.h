// CUDA streams and events for C++ users and the Python bindings: Stream is
// a non-owning handle (streams come from a per-device pool and live for the
// process, like torch's); Event owns its cudaEvent_t, created on first use.
#pragma once
#include <cuda_runtime.h>

#include "kernels/cuda/runtime.h"

namespace fastt {
namespace cuda {

class Event;

class Stream {
 public:
  Stream(cudaStream_t handle, int device) : handle_(handle), device_(device) {}
  // A stream from the device's pool of streams of that priority (lower is
  // more urgent; clamped to stream_priority_range()).
  static Stream create(int device, int priority = 0);
  static Stream current(int device) {
    return Stream(current_stream(device), device);
  }
  static Stream default_stream(int device) { return Stream(nullptr, device); }

  cudaStream_t handle() const { return handle_; }
  int device() const { return device_; }
  int priority() const;
  // True when all work queued so far has completed.
  bool query() const;
  void synchronize() const;
  // Work queued on this stream from now on waits for `event` / for all work
  // queued so far on `other`.
  void wait_event(const Event& event) const;
  void wait_stream(const Stream& other) const;
  bool operator==(const Stream& o) const {
    return handle_ == o.handle_ && device_ == o.device_;
  }

 private:
  cudaStream_t handle_;
  int device_;
};

class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false,
                 bool interprocess = false);
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Captures the work queued so far on `stream`.
  void record(const Stream& stream);
  // True when the captured work completed (or nothing was recorded).
  bool query() const;
  void synchronize() const;
  // Milliseconds between this event and `end`; both recorded, completed
  // and created with enable_timing.
  float elapsed_time(const Event& end) const;
  cudaEvent_t handle() const { return event_; }
  bool recorded() const { return event_ != nullptr; }
  int device() const { return device_; }

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
  unsigned flags_;
  bool timing_;
};

// The raw operations behind the classes, on plain handles (the Python
// bindings keep handles as integers).
cudaEvent_t event_create(int device, bool enable_timing, bool blocking,
                         bool interprocess);
void event_destroy(cudaEvent_t event);
void event_record(cudaEvent_t event, cudaStream_t stream, int device);
// Query (on completion) and synchronize raise the errors kernels on the
// event's `device` reported (device_error.h); so do the stream ones.
bool event_query(cudaEvent_t event, int device);
void event_synchronize(cudaEvent_t event, int device);
float event_elapsed_time(cudaEvent_t start, cudaEvent_t end);
bool stream_query(cudaStream_t stream, int device);
void stream_synchronize(cudaStream_t stream, int device);
void stream_wait_event(cudaStream_t stream, int device, cudaEvent_t event);
int stream_priority(cudaStream_t stream, int device);

}  // namespace cuda
}  // namespace fastt
