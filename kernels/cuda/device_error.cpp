// The per-device error slots (device_error.h): lazy allocation in mapped
// pinned memory, and turning a reported record into a typed exception.
#include "kernels/cuda/device_error.h"

#include <cstring>
#include <mutex>

#include "csrc/errors.h"
#include "kernels/cuda/cuda_check.h"

namespace fastt {
namespace cuda {

DeviceError* g_device_error_host[kMaxDevices] = {};
DeviceError* g_device_error_dev[kMaxDevices] = {};

namespace {
std::mutex g_slot_mutex;
}

DeviceError* init_device_error_slot(int device) {
  std::lock_guard<std::mutex> lock(g_slot_mutex);
  if (g_device_error_dev[device]) return g_device_error_dev[device];
  DeviceGuard guard(device);
  void* host = nullptr;
  FASTT_CUDA_CHECK(cudaHostAlloc(&host, sizeof(DeviceError),
                                 cudaHostAllocMapped),
                   "device error slot");
  std::memset(host, 0, sizeof(DeviceError));
  void* dev = nullptr;
  const cudaError_t err = cudaHostGetDevicePointer(&dev, host, 0);
  if (err != cudaSuccess) {
    (void)cudaFreeHost(host);
    FASTT_CUDA_CHECK(err, "device error slot");
  }
  // Lives for the process (kernels may hold its address).
  g_device_error_host[device] = static_cast<DeviceError*>(host);
  __atomic_store_n(&g_device_error_dev[device], static_cast<DeviceError*>(dev),
                   __ATOMIC_RELEASE);
  return g_device_error_dev[device];
}

void raise_device_error(int device) {
  DeviceError* e = g_device_error_host[device];
  const DeviceError r = *e;  // the record, then free the slot for the next
  e->ready = 0;
  __atomic_store_n(&e->claimed, 0, __ATOMIC_RELEASE);
  constexpr const char* kDeferred =
      "reported by the device at the next synchronization";
  const char* op = reinterpret_cast<const char*>(uintptr_t(r.op));
  if (r.kind == kDeviceErrorProbability)
    throw RuntimeError(fmt::format(
        "{}: Expected p_in >= 0 && p_in <= 1 to be true, but got false (on "
        "cuda:{}, {})",
        op ? op : "bernoulli_", device, kDeferred));
  if (r.kind == kDeviceErrorTarget)
    throw IndexError(fmt::format("Target {} is out of bounds. ({} on cuda:{}, "
                                 "{})",
                                 r.value, op ? op : "loss", device,
                                 kDeferred));
  if (op)
    throw_index_out_of_range(
        op, fmt::format("{}(): index {} is out of bounds for dimension {} "
                        "with size {} (on cuda:{}, {})",
                        op, r.value, r.dim, r.bound, device, kDeferred));
  throw IndexError(fmt::format(
      "index {} is out of bounds for dimension {} with size {} (on cuda:{}, "
      "{})",
      r.value, r.dim, r.bound, device, kDeferred));
}

}  // namespace cuda
}  // namespace fastt
