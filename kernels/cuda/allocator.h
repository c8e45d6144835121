// CUDA memory: the per-device stream-ordered caching allocator (the logic
// is csrc/device_allocator.h; this plugs in cudaMalloc/cudaFree/events) and
// a caching allocator of page-locked host memory for pin_memory().
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "csrc/device_allocator.h"
#include "csrc/storage.h"

namespace fastt {
namespace cuda {

// The allocator of a device (created on first use; lives for the process).
DeviceCachingAllocator& device_allocator(int device);
// Device memory used in order on the device's current stream.
void* device_alloc(size_t nbytes, int device);
void device_free(void* p, size_t nbytes, int device);
// Marks the block starting at `p` as used by `stream` (Tensor.record_stream).
void record_stream(void* p, int device, cudaStream_t stream);
DeviceAllocatorStats device_memory_stats(int device);
void reset_peak_memory_stats(int device);
void reset_accumulated_memory_stats(int device);
// Returns cached device blocks of every device touched so far, and cached
// pinned host blocks whose copies completed.
void empty_cache();

// Pinned host memory: a CPU Storage whose bytes are page-locked
// (cudaHostAlloc), returned to a host cache when the storage dies.
Storage* pinned_storage(size_t nbytes);
// Whether `p` points into a pinned block handed out by pinned_storage().
bool is_pinned(const void* p);
// A non_blocking copy on `stream` uses the pinned block holding `p`: the
// block is not reused before the copy completes. False (nothing recorded)
// when `p` is not in pinned memory.
bool record_host_use(const void* p, cudaStream_t stream);
struct HostAllocatorStats {
  int64_t allocated_bytes, reserved_bytes, num_host_allocs;
};
HostAllocatorStats host_memory_stats();

}  // namespace cuda
}  // namespace fastt
