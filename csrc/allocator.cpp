// Size classes: multiples of 64 B up to 1 KiB, then four classes per power
// of two (at most 25% slack). Thread-local lists keep the common path to a
// pointer pop; a per-thread byte cap sends the excess to the shared pool so
// producer/consumer threads cannot hoard memory.
#include "allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>

#include "errors.h"

namespace fastt {
namespace {

constexpr int kSmallClasses = 16;  // 64 .. 1024 step 64
constexpr int kNumClasses = kSmallClasses + 4 * 54;  // up to 2^64
constexpr size_t kThreadCacheCap = size_t(64) << 20;  // bytes per thread

struct FreeBlock {
  FreeBlock* next;
};

struct Counters {
  std::atomic<int64_t> allocated{0}, peak{0}, cached{0};
  std::atomic<int64_t> system_allocs{0}, system_frees{0}, requests{0};
};
Counters g_counters;

struct SharedPool {
  std::mutex mu;
  FreeBlock* head[kNumClasses] = {};
};
SharedPool& shared_pool() {
  static SharedPool* pool = new SharedPool();  // never destroyed: threads
  return *pool;                                // may free after exit
}

void* system_alloc(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, CachingAllocator::kAlignment, bytes) != 0)
    return nullptr;
  g_counters.system_allocs.fetch_add(1, std::memory_order_relaxed);
  return p;
}
void system_free(void* p) {
  std::free(p);
  g_counters.system_frees.fetch_add(1, std::memory_order_relaxed);
}

struct ThreadCache {
  FreeBlock* head[kNumClasses] = {};
  size_t bytes = 0;
  bool alive = true;
  void release_all() {
    for (int c = 0; c < kNumClasses; ++c) {
      while (FreeBlock* b = head[c]) {
        head[c] = b->next;
        g_counters.cached.fetch_sub(
            int64_t(CachingAllocator::class_size(c)),
            std::memory_order_relaxed);
        system_free(b);
      }
    }
    bytes = 0;
  }
  ~ThreadCache() {
    release_all();
    alive = false;
  }
};
thread_local ThreadCache t_cache;

void note_allocated(int64_t n) {
  int64_t now =
      g_counters.allocated.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t peak = g_counters.peak.load(std::memory_order_relaxed);
  while (now > peak && !g_counters.peak.compare_exchange_weak(
                           peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

int CachingAllocator::size_class(size_t n) {
  if (n <= 1024) return n == 0 ? 0 : int((n - 1) / 64);
  // n > 1024: find power p with 2^p < n <= 2^(p+1), then quarter steps.
  int p = 63 - __builtin_clzll(uint64_t(n - 1));  // 2^p <= n-1 < 2^(p+1)
  size_t base = size_t(1) << p;
  size_t step = base / 4;
  int q = int((n - 1 - base) / step);  // 0..3
  return kSmallClasses + (p - 10) * 4 + q;
}

size_t CachingAllocator::class_size(int c) {
  if (c < kSmallClasses) return size_t(c + 1) * 64;
  int p = (c - kSmallClasses) / 4 + 10;
  int q = (c - kSmallClasses) % 4;
  size_t base = size_t(1) << p;
  return base + (base / 4) * size_t(q + 1);
}

void* CachingAllocator::allocate(size_t nbytes) {
  g_counters.requests.fetch_add(1, std::memory_order_relaxed);
  FASTT_CHECK(nbytes <= (size_t(1) << 56), OutOfMemoryError,
              "CPU out of memory: tried to allocate {} bytes", nbytes);
  int c = size_class(nbytes);
  size_t size = class_size(c);
  ThreadCache& tc = t_cache;
  if (FASTT_LIKELY(tc.alive)) {
    if (FreeBlock* b = tc.head[c]) {
      tc.head[c] = b->next;
      tc.bytes -= size;
      g_counters.cached.fetch_sub(int64_t(size), std::memory_order_relaxed);
      note_allocated(int64_t(size));
      return b;
    }
  }
  {
    SharedPool& pool = shared_pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    if (FreeBlock* b = pool.head[c]) {
      pool.head[c] = b->next;
      g_counters.cached.fetch_sub(int64_t(size), std::memory_order_relaxed);
      note_allocated(int64_t(size));
      return b;
    }
  }
  void* p = system_alloc(size);
  if (!p) {
    empty_cache();
    p = system_alloc(size);
  }
  FASTT_CHECK(p != nullptr, OutOfMemoryError,
              "CPU out of memory: tried to allocate {} bytes ({} in use)",
              nbytes, g_counters.allocated.load());
  note_allocated(int64_t(size));
  return p;
}

void CachingAllocator::deallocate(void* p, size_t nbytes) {
  if (!p) return;
  int c = size_class(nbytes);
  size_t size = class_size(c);
  g_counters.allocated.fetch_sub(int64_t(size), std::memory_order_relaxed);
  g_counters.cached.fetch_add(int64_t(size), std::memory_order_relaxed);
  auto* b = static_cast<FreeBlock*>(p);
  ThreadCache& tc = t_cache;
  if (FASTT_LIKELY(tc.alive) && tc.bytes + size <= kThreadCacheCap) {
    b->next = tc.head[c];
    tc.head[c] = b;
    tc.bytes += size;
    return;
  }
  SharedPool& pool = shared_pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  b->next = pool.head[c];
  pool.head[c] = b;
}

AllocatorStats CachingAllocator::stats() {
  AllocatorStats s;
  s.allocated_bytes = g_counters.allocated.load();
  s.peak_allocated_bytes = g_counters.peak.load();
  s.cached_bytes = g_counters.cached.load();
  s.system_allocs = g_counters.system_allocs.load();
  s.system_frees = g_counters.system_frees.load();
  s.alloc_requests = g_counters.requests.load();
  return s;
}

void CachingAllocator::reset_peak() {
  g_counters.peak.store(g_counters.allocated.load());
}

void CachingAllocator::empty_cache() {
  if (t_cache.alive) t_cache.release_all();
  SharedPool& pool = shared_pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  for (int c = 0; c < kNumClasses; ++c) {
    while (FreeBlock* b = pool.head[c]) {
      pool.head[c] = b->next;
      g_counters.cached.fetch_sub(int64_t(class_size(c)),
                                  std::memory_order_relaxed);
      system_free(b);
    }
  }
}

}  // namespace fastt
