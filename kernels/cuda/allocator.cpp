// The CUDA backend of DeviceCachingAllocator (one per device, created on
// first use and never destroyed: blocks may outlive static destruction) and
// the pinned host cache. Only cache misses reach cudaMalloc/cudaHostAlloc.
#include "kernels/cuda/allocator.h"

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "csrc/errors.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/graph.h"
#include "kernels/cuda/runtime.h"

namespace fastt {
namespace cuda {

namespace {

class CudaBackend final : public RawBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {}
  void* raw_alloc(size_t nbytes) override {
    DeviceGuard guard(device_);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear the sticky-free error state
      return nullptr;
    }
    FASTT_CUDA_CHECK(err, "CUDA caching allocator (cudaMalloc)");
    return p;
  }
  void raw_free(void* p, size_t) override {
    DeviceGuard guard(device_);
    FASTT_CUDA_CHECK(cudaFree(p), "CUDA caching allocator (cudaFree)");
  }
  void* event_create() override {
    DeviceGuard guard(device_);
    cudaEvent_t e = nullptr;
    FASTT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                     "CUDA caching allocator (event)");
    return e;
  }
  void event_record(void* e, StreamHandle stream) override {
    DeviceGuard guard(device_);
    FASTT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e),
                                     reinterpret_cast<cudaStream_t>(stream)),
                     "CUDA caching allocator (record event)");
  }
  bool event_query(void* e) override {
    cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(e));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    FASTT_CUDA_CHECK(err, "CUDA caching allocator (query event)");
    return true;
  }
  void event_destroy(void* e) override {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(e));
  }
  void synchronize() override {
    DeviceGuard guard(device_);
    FASTT_CUDA_CHECK(cudaDeviceSynchronize(),
                     "CUDA caching allocator (synchronize)");
  }
  void mem_info(size_t* free_bytes, size_t* total_bytes) override {
    DeviceGuard guard(device_);
    FASTT_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes),
                     "CUDA caching allocator (mem info)");
  }

 private:
  int device_;
};

struct DeviceState {
  CudaBackend backend;
  DeviceCachingAllocator allocator;
  // FASTT_NO_CUDA_MEMORY_CACHING=1: a cudaMalloc/cudaFree per block, for
  // memory checkers (compute-sanitizer, the emulator's ASan build).
  explicit DeviceState(int d)
      : backend(d),
        allocator(&backend, "CUDA", fmt::format("GPU {}", d),
                  DeviceCachingAllocator::no_caching_from_env()) {}
};
std::atomic<DeviceState*> g_devices[kMaxDevices] = {};
std::once_flag g_device_once[kMaxDevices];

}  // namespace

DeviceCachingAllocator& device_allocator(int device) {
  DeviceState* s =
      device >= 0 && device < kMaxDevices
          ? g_devices[device].load(std::memory_order_acquire)
          : nullptr;
  if (FASTT_LIKELY(s != nullptr)) return s->allocator;
  check_device(device, "CUDA allocator");
  std::call_once(g_device_once[device],
                 [device] {
                   g_devices[device].store(new DeviceState(device),
                                           std::memory_order_release);
                 });
  return g_devices[device].load(std::memory_order_acquire)->allocator;
}

void* device_alloc(size_t nbytes, int device) {
  if (nbytes == 0) return nullptr;
  // A thread that captures a CUDA graph allocates from its private pool.
  if (FASTT_UNLIKELY(graph_capture_active()))
    if (void* p = graph_pool_alloc(nbytes, device)) return p;
  return device_allocator(device).allocate(
      nbytes, reinterpret_cast<StreamHandle>(current_stream(device)));
}

void device_free(void* p, size_t, int device) {
  if (!p) return;
  try {
    if (FASTT_UNLIKELY(g_graph_lent.load(std::memory_order_relaxed) > 0) &&
        graph_pool_free(p))
      return;  // back to its graph's pool
    device_allocator(device).free(p);
  } catch (...) {
    // Storage destruction must not throw; a failure here means a CUDA
    // error the next checked call reports anyway.
  }
}

void record_stream(void* p, int device, cudaStream_t stream) {
  if (!p) return;
  device_allocator(device).record_stream(
      p, reinterpret_cast<StreamHandle>(stream));
}

DeviceAllocatorStats device_memory_stats(int device) {
  return device_allocator(device).stats();
}
void reset_peak_memory_stats(int device) {
  device_allocator(device).reset_peak();
}
void reset_accumulated_memory_stats(int device) {
  device_allocator(device).reset_accumulated();
}

// ---------------------------------------------------------------- pinned --
namespace {

// Host blocks come in power-of-two sizes (>= 4 KiB) so they are reused
// across nearby sizes. A block freed while a non_blocking copy may still
// read or write it waits for the copy's events.
struct HostBlock {
  char* ptr;
  size_t size;
  bool allocated = false;
  std::vector<cudaEvent_t> events;
};

class HostCache {
 public:
  HostBlock* allocate(size_t nbytes) {
    size_t size = 4096;
    while (size < nbytes) size <<= 1;
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    auto& list = free_[size];
    HostBlock* b = nullptr;
    if (!list.empty()) {
      b = list.back();
      list.pop_back();
    } else {
      void* p = nullptr;
      cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocDefault);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        release_cached();  // retry once with the cache returned
        err = cudaHostAlloc(&p, size, cudaHostAllocDefault);
        if (err != cudaSuccess) {
          (void)cudaGetLastError();
          throw OutOfMemoryError(fmt::format(
              "pin_memory: cannot allocate {} of pinned host memory ({})",
              format_bytes(size), cudaGetErrorString(err)));
        }
      }
      b = new HostBlock{static_cast<char*>(p), size, false, {}};
      blocks_.emplace(b->ptr, b);
      reserved_ += int64_t(size);
      ++host_allocs_;
    }
    b->allocated = true;
    allocated_ += int64_t(b->size);
    return b;
  }

  void free(HostBlock* b) {
    std::lock_guard<std::mutex> lock(mutex_);
    b->allocated = false;
    allocated_ -= int64_t(b->size);
    if (b->events.empty()) free_[b->size].push_back(b);
    else pending_.push_back(b);
  }

  HostBlock* find(const void* p) {
    const char* c = static_cast<const char*>(p);
    auto it = blocks_.upper_bound(const_cast<char*>(c));
    if (it == blocks_.begin()) return nullptr;
    --it;
    HostBlock* b = it->second;
    return c < b->ptr + b->size ? b : nullptr;
  }

  bool is_pinned(const void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    HostBlock* b = find(p);
    return b && b->allocated;
  }

  bool record(const void* p, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    HostBlock* b = find(p);
    if (!b || !b->allocated) return false;
    // Drop the events of copies that already finished, so a buffer reused
    // for many copies holds only those in flight.
    size_t kept = 0;
    for (cudaEvent_t old : b->events) {
      if (cudaEventQuery(old) == cudaSuccess) {
        (void)cudaEventDestroy(old);
      } else {
        (void)cudaGetLastError();
        b->events[kept++] = old;
      }
    }
    b->events.resize(kept);
    cudaEvent_t e = nullptr;
    FASTT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                     "non_blocking copy (event)");
    FASTT_CUDA_CHECK(cudaEventRecord(e, stream), "non_blocking copy (event)");
    b->events.push_back(e);
    return true;
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    release_cached();
  }

  HostAllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {allocated_, reserved_, host_allocs_};
  }

 private:
  // Moves pending blocks whose copies all completed to the free lists.
  void process_events() {
    for (size_t i = 0; i < pending_.size();) {
      HostBlock* b = pending_[i];
      while (!b->events.empty()) {
        cudaError_t err = cudaEventQuery(b->events.back());
        if (err == cudaErrorNotReady) break;
        (void)cudaGetLastError();
        (void)cudaEventDestroy(b->events.back());
        b->events.pop_back();
      }
      if (b->events.empty()) {
        free_[b->size].push_back(b);
        pending_[i] = pending_.back();
        pending_.pop_back();
      } else {
        ++i;
      }
    }
  }
  void release_cached() {
    for (auto& kv : free_) {
      for (HostBlock* b : kv.second) {
        blocks_.erase(b->ptr);
        (void)cudaFreeHost(b->ptr);
        reserved_ -= int64_t(b->size);
        delete b;
      }
      kv.second.clear();
    }
  }

  std::mutex mutex_;
  std::map<size_t, std::vector<HostBlock*>> free_;
  std::map<char*, HostBlock*> blocks_;  // every block, by address
  std::vector<HostBlock*> pending_;
  int64_t allocated_ = 0, reserved_ = 0, host_allocs_ = 0;
};

HostCache& host_cache() {
  static HostCache* cache = new HostCache();  // never destroyed (see top)
  return *cache;
}

void free_pinned(void* ctx, void*, size_t) {
  try {
    host_cache().free(static_cast<HostBlock*>(ctx));
  } catch (...) {
  }
}

}  // namespace

Storage* pinned_storage(size_t nbytes) {
  require_device("pin_memory");
  HostBlock* b = host_cache().allocate(nbytes);
  return Storage::wrap(b->ptr, nbytes, kCPU, &free_pinned, b);
}

bool is_pinned(const void* p) {
  if (!p || device_count() == 0) return false;
  return host_cache().is_pinned(p);
}

bool record_host_use(const void* p, cudaStream_t stream) {
  return host_cache().record(p, stream);
}

HostAllocatorStats host_memory_stats() { return host_cache().stats(); }

void empty_cache() {
  for (int d = 0; d < kMaxDevices; ++d)
    if (DeviceState* s = g_devices[d].load(std::memory_order_acquire))
      s->allocator.empty_cache();
  if (device_count() > 0) host_cache().empty_cache();
}

}  // namespace cuda
}  // namespace fastt
