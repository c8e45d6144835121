// The CUDA runtime state every CUDA kernel and binding shares: the calling
// thread's current device and stream, device properties read once, and the
// small helpers a launch needs. Compiled only when fastt has CUDA.
//
// Streams: each thread has a current stream per device, the legacy default
// stream (nullptr) until set_current_stream() changes it, exactly like
// torch.cuda.current_stream(). Every fastt launch and async copy goes to it.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "csrc/macros.h"

namespace fastt {
namespace cuda {

constexpr int kMaxDevices = 16;

// The thread's state lives in runtime.cpp (initial-exec TLS, which nvcc's
// front end does not accept); .cu files reach it through these calls.
int device_count();
int current_device();
void set_device(int index);  // throws ValueError on a bad index
// Makes `index` the current device for the calling thread (cudaSetDevice
// only on a change).
void ensure_device(int index);

cudaStream_t current_stream();
cudaStream_t current_stream(int device);
void set_current_stream(int device, cudaStream_t stream);

// Makes `index` current for a scope and restores the previous device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_;
};

// Waits for all work on a device (cudaDeviceSynchronize), then raises what
// its kernels reported (device_error.h), like every synchronizing call.
void synchronize(int device);
// The range of stream priorities: lower numbers run first (CUDA's
// convention, like torch): greatest <= priority <= least (0).
void stream_priority_range(int* least, int* greatest);
// A device's total and free memory (cudaMemGetInfo).
void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes);

// Properties of a device, read once per process.
const cudaDeviceProp& device_props(int device);
extern int g_sm_count[kMaxDevices];  // 0 until device_props() read it
inline int sm_count(int device) {
  int n = g_sm_count[device];
  return FASTT_LIKELY(n) ? n : device_props(device).multiProcessorCount;
}

// Throws a RuntimeError naming `what` when fastt was built with CUDA but no
// usable GPU is present (the first CUDA call reports that).
void require_device(const char* what);
// require_device(what), then a ValueError naming `what` unless `device` is
// an ordinal of this machine.
void check_device(int device, const char* what);

// Grid for a grid-stride loop: enough blocks to fill the GPU a few times
// over, never more than the work needs.
inline int grid_for(int64_t n, int block) {
  int64_t g = (n + block - 1) / block;
  const int64_t cap = int64_t(sm_count(current_device())) * 8;
  if (g > cap) g = cap;
  return int(g < 1 ? 1 : g);
}

}  // namespace cuda
}  // namespace fastt
