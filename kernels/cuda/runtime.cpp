// Current device/stream bookkeeping and device properties (runtime.h).
#include "kernels/cuda/runtime.h"

#include <memory>
#include <mutex>

#include "csrc/macros.h"  // FASTT_TLS_IE
#include "csrc/errors.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_error.h"

namespace fastt {
namespace cuda {

namespace {
FASTT_TLS_IE thread_local int t_device = 0;
// Per-device current streams: null (every device on its legacy default
// stream) until the thread first sets one, then a heap array owned by
// t_stream_owner. Only pointers live in TLS: the module's whole TLS block
// counts against glibc's static TLS surplus (tests/python/test_static_tls.py).
FASTT_TLS_IE thread_local cudaStream_t* t_stream = nullptr;
struct StreamTable {
  std::unique_ptr<cudaStream_t[]> streams;
  ~StreamTable() { t_stream = nullptr; }  // calls during thread exit
};
thread_local StreamTable t_stream_owner;
}  // namespace
int g_sm_count[kMaxDevices] = {};

int current_device() { return t_device; }
void ensure_device(int index) {
  if (FASTT_UNLIKELY(index != t_device)) set_device(index);
}
cudaStream_t current_stream() {
  cudaStream_t* s = t_stream;
  return FASTT_LIKELY(s == nullptr) ? nullptr : s[t_device];
}
cudaStream_t current_stream(int device) {
  cudaStream_t* s = t_stream;
  return FASTT_LIKELY(s == nullptr) ? nullptr : s[device];
}

int device_count() {
  static int n = [] {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return c > kMaxDevices ? kMaxDevices : c;
  }();
  return n;
}

void require_device(const char* what) {
  if (device_count() == 0)
    throw RuntimeError(fmt::format(
        "{}: fastt was built with CUDA but no CUDA GPU is available "
        "(cudaGetDeviceCount found none)",
        what));
}

void check_device(int device, const char* what) {
  require_device(what);
  FASTT_CHECK(device >= 0 && device < device_count(), ValueError,
              "{}: invalid device ordinal {} (this machine has {} CUDA "
              "device(s))",
              what, device, device_count());
}

void set_device(int index) {
  check_device(index, "set_device");
  FASTT_CUDA_CHECK(cudaSetDevice(index), "set_device");
  t_device = index;
}

void set_current_stream(int device, cudaStream_t stream) {
  FASTT_CHECK(device >= 0 && device < kMaxDevices, ValueError,
              "set_stream: invalid device ordinal {}", device);
  if (t_stream == nullptr) {
    if (stream == nullptr) return;  // already the default everywhere
    t_stream_owner.streams.reset(new cudaStream_t[kMaxDevices]());
    t_stream = t_stream_owner.streams.get();
  }
  t_stream[device] = stream;
}

DeviceGuard::DeviceGuard(int index) : prev_(t_device) {
  ensure_device(index);
}
DeviceGuard::~DeviceGuard() {
  if (t_device != prev_ && cudaSetDevice(prev_) == cudaSuccess)
    t_device = prev_;
}

void synchronize(int device) {
  check_device(device, "synchronize");
  DeviceGuard guard(device);
  FASTT_CUDA_CHECK(cudaDeviceSynchronize(), "synchronize");
  check_device_errors(device);
}

void stream_priority_range(int* least, int* greatest) {
  require_device("stream_priority_range");
  DeviceGuard guard(current_device());
  FASTT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(least, greatest),
                   "stream_priority_range");
}

void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) {
  check_device(device, "mem_get_info");
  DeviceGuard guard(device);
  FASTT_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes), "mem_get_info");
}

const cudaDeviceProp& device_props(int device) {
  static cudaDeviceProp props[kMaxDevices];
  static std::once_flag once[kMaxDevices];
  check_device(device, "get_device_properties");
  std::call_once(once[device], [device] {
    FASTT_CUDA_CHECK(cudaGetDeviceProperties(&props[device], device),
                     "get_device_properties");
    g_sm_count[device] = props[device].multiProcessorCount;
  });
  return props[device];
}

}  // namespace cuda
}  // namespace fastt
