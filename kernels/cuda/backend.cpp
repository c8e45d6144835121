// The CUDA backend's entry: device memory through the caching allocator on
// the current stream, copies between devices and the host, and the CUDA
// column of the dispatch table (ops without a CUDA kernel yet are marked
// unsupported so errors say so).
#include <cuda_runtime.h>

#include "csrc/dispatch.h"
#include "csrc/storage.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_error.h"
#include "kernels/cuda/runtime.h"

namespace fastt {
namespace cuda {
#define FASTT_CUDA_FAMILY(name) void register_##name##_cuda_kernels();
#include "kernels/cuda/registry.def"
#undef FASTT_CUDA_FAMILY

namespace {
void* storage_alloc(size_t nbytes, int index) {
  if (nbytes == 0) return nullptr;
  require_device("allocate");
  return device_alloc(nbytes, index);
}

// Copies go on the current stream of the device involved. The host waits
// (cudaStreamSynchronize) whenever it reads or writes the bytes itself:
// always for pageable host memory, and for pinned memory unless the copy is
// non_blocking; then an event on the pinned block keeps it from reuse until
// the copy is done. A blocking copy to the host raises what the device's
// kernels reported meanwhile (device_error.h): .item(), .cpu() and
// printing are where a deferred bad index shows up. Copies to a device
// leave it pending (making a tensor should not fail for an earlier op).
void device_copy(void* dst, Device dst_dev, const void* src, Device src_dev,
                 size_t nbytes, bool non_blocking) {
  if (nbytes == 0) return;
  if (dst_dev.is_cuda() && src_dev.is_cuda()) {
    // Between two GPUs (same-device copies run the copy kernel): queue on
    // the source's stream and wait, since the destination's stream does not
    // know about this work. Nor does the source's stream know about work
    // still queued on the destination's that reads or writes dst's old
    // bytes: wait for that first.
    {
      DeviceGuard dst_guard(dst_dev.index);
      FASTT_CUDA_CHECK(cudaStreamSynchronize(current_stream(dst_dev.index)),
                       "copy_ (device to device)");
    }
    DeviceGuard guard(src_dev.index);
    cudaStream_t s = current_stream(src_dev.index);
    FASTT_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_dev.index, src,
                                         src_dev.index, nbytes, s),
                     "copy_ (device to device)");
    FASTT_CUDA_CHECK(cudaStreamSynchronize(s), "copy_ (device to device)");
    return;
  }
  const bool to_device = dst_dev.is_cuda();
  const int index = to_device ? dst_dev.index : src_dev.index;
  const void* host = to_device ? src : dst;
  DeviceGuard guard(index);
  cudaStream_t s = current_stream(index);
  const char* what = to_device ? "copy_ (host to device)"
                               : "copy_ (device to host)";
  FASTT_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, nbytes,
                      to_device ? cudaMemcpyHostToDevice
                                : cudaMemcpyDeviceToHost,
                      s),
      what);
  if (non_blocking && record_host_use(host, s)) return;  // pinned
  FASTT_CUDA_CHECK(cudaStreamSynchronize(s), what);
  if (!to_device) check_device_errors(index);
}
}  // namespace

}  // namespace cuda

void register_cuda_kernels() {
  for (int op = 0; op < kNumOps; ++op)
    for (int t = 0; t < kNumDTypes; ++t)
      mark_unsupported(Op(op), DeviceType::CUDA, DType(t), Unsupported::Device);
#define FASTT_CUDA_FAMILY(name) cuda::register_##name##_cuda_kernels();
#include "kernels/cuda/registry.def"
#undef FASTT_CUDA_FAMILY
  DeviceAllocatorHooks hooks;
  hooks.allocate = &cuda::storage_alloc;
  hooks.deallocate = &cuda::device_free;
  hooks.copy = &cuda::device_copy;
  set_device_allocator(DeviceType::CUDA, hooks);
}

}  // namespace fastt
