// Stream pool and event operations (stream.h). Every call checks its CUDA
// error and names the operation.
#include "kernels/cuda/stream.h"

#include <mutex>
#include <utility>
#include <vector>

#include "csrc/errors.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_error.h"

namespace fastt {
namespace cuda {

namespace {
// Streams are never destroyed (the allocator and users may hold their
// handles); a round-robin pool per (device, priority) bounds their number.
constexpr int kStreamsPerPool = 32;
struct StreamPool {
  int priority;
  std::vector<cudaStream_t> streams;
  int next = 0;
};
std::mutex g_pool_mutex;
std::vector<StreamPool> g_pools[kMaxDevices];
}  // namespace

Stream Stream::create(int device, int priority) {
  check_device(device, "Stream");
  DeviceGuard guard(device);
  int least = 0, greatest = 0;
  FASTT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                   "Stream");
  if (priority > least) priority = least;
  if (priority < greatest) priority = greatest;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  StreamPool* pool = nullptr;
  for (StreamPool& p : g_pools[device])
    if (p.priority == priority) pool = &p;
  if (!pool) {
    g_pools[device].push_back(StreamPool{priority, {}, 0});
    pool = &g_pools[device].back();
  }
  if (int(pool->streams.size()) < kStreamsPerPool) {
    cudaStream_t s = nullptr;
    FASTT_CUDA_CHECK(
        cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority),
        "Stream");
    pool->streams.push_back(s);
    return Stream(s, device);
  }
  cudaStream_t s = pool->streams[size_t(pool->next)];
  pool->next = (pool->next + 1) % kStreamsPerPool;
  return Stream(s, device);
}

int Stream::priority() const { return stream_priority(handle_, device_); }
bool Stream::query() const { return stream_query(handle_, device_); }
void Stream::synchronize() const { stream_synchronize(handle_, device_); }
void Stream::wait_event(const Event& event) const {
  if (event.recorded()) stream_wait_event(handle_, device_, event.handle());
}
void Stream::wait_stream(const Stream& other) const {
  Event e;
  e.record(other);
  wait_event(e);
}

bool stream_query(cudaStream_t stream, int device) {
  check_device(device, "Stream.query");
  DeviceGuard guard(device);
  cudaError_t err = cudaStreamQuery(stream);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  FASTT_CUDA_CHECK(err, "Stream.query");
  check_device_errors(device);
  return true;
}

void stream_synchronize(cudaStream_t stream, int device) {
  check_device(device, "Stream.synchronize");
  DeviceGuard guard(device);
  FASTT_CUDA_CHECK(cudaStreamSynchronize(stream), "Stream.synchronize");
  check_device_errors(device);
}

void stream_wait_event(cudaStream_t stream, int device, cudaEvent_t event) {
  check_device(device, "Stream.wait_event");
  DeviceGuard guard(device);
  FASTT_CUDA_CHECK(cudaStreamWaitEvent(stream, event, 0), "Stream.wait_event");
}

int stream_priority(cudaStream_t stream, int device) {
  check_device(device, "Stream.priority");
  DeviceGuard guard(device);
  int p = 0;
  FASTT_CUDA_CHECK(cudaStreamGetPriority(stream, &p), "Stream.priority");
  return p;
}

cudaEvent_t event_create(int device, bool enable_timing, bool blocking,
                         bool interprocess) {
  check_device(device, "Event");
  DeviceGuard guard(device);
  unsigned flags = (enable_timing ? cudaEventDefault : cudaEventDisableTiming) |
                   (blocking ? cudaEventBlockingSync : 0u) |
                   (interprocess ? cudaEventInterprocess : 0u);
  FASTT_CHECK(!(interprocess && enable_timing), ValueError,
              "Event: an interprocess event cannot enable timing");
  cudaEvent_t e = nullptr;
  FASTT_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags), "Event");
  return e;
}

void event_destroy(cudaEvent_t event) {
  if (event) (void)cudaEventDestroy(event);
}

void event_record(cudaEvent_t event, cudaStream_t stream, int device) {
  check_device(device, "Event.record");
  DeviceGuard guard(device);
  FASTT_CUDA_CHECK(cudaEventRecord(event, stream), "Event.record");
}

bool event_query(cudaEvent_t event, int device) {
  if (!event) return true;
  cudaError_t err = cudaEventQuery(event);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  FASTT_CUDA_CHECK(err, "Event.query");
  check_device(device, "Event.query");
  check_device_errors(device);
  return true;
}

void event_synchronize(cudaEvent_t event, int device) {
  if (!event) return;
  FASTT_CUDA_CHECK(cudaEventSynchronize(event), "Event.synchronize");
  check_device(device, "Event.synchronize");
  check_device_errors(device);
}

float event_elapsed_time(cudaEvent_t start, cudaEvent_t end) {
  FASTT_CHECK(start && end, RuntimeError,
              "elapsed_time: both events must be recorded first");
  float ms = 0;
  FASTT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, end),
                   "Event.elapsed_time (both events need enable_timing=True "
                   "and must have completed)");
  return ms;
}

Event::Event(bool enable_timing, bool blocking, bool interprocess)
    : flags_((blocking ? 1u : 0u) | (interprocess ? 2u : 0u)),
      timing_(enable_timing) {}

Event::~Event() { event_destroy(event_); }

Event::Event(Event&& o) noexcept
    : event_(std::exchange(o.event_, nullptr)),
      device_(o.device_),
      flags_(o.flags_),
      timing_(o.timing_) {}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    event_destroy(event_);
    event_ = std::exchange(o.event_, nullptr);
    device_ = o.device_;
    flags_ = o.flags_;
    timing_ = o.timing_;
  }
  return *this;
}

void Event::record(const Stream& stream) {
  if (!event_) {
    event_ = event_create(stream.device(), timing_, flags_ & 1u, flags_ & 2u);
    device_ = stream.device();
  }
  FASTT_CHECK(device_ == stream.device(), ValueError,
              "Event.record: event on device cuda:{} cannot be recorded on "
              "a stream of cuda:{}",
              device_, stream.device());
  event_record(event_, stream.handle(), device_);
}

bool Event::query() const { return event_query(event_, device_); }
void Event::synchronize() const { event_synchronize(event_, device_); }
float Event::elapsed_time(const Event& end) const {
  FASTT_CHECK(timing_ && end.timing_, ValueError,
              "elapsed_time: both events must be created with "
              "enable_timing=True");
  return event_elapsed_time(event_, end.event_);
}

}  // namespace cuda
}  // namespace fastt
