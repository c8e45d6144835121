// CachingAllocator: the CPU allocator behind every tensor. Freed blocks go
// to a per-thread free list of their size class (no lock), overflow to a
// shared pool (one mutex), and only a miss in both reaches the system.
// A steady-state loop of ops therefore never calls malloc.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fastt {

struct AllocatorStats {
  int64_t allocated_bytes;       // handed out and not yet freed
  int64_t peak_allocated_bytes;  // high-water mark (exact on one thread;
                                 // an upper bound across threads)
  int64_t cached_bytes;          // held in free lists, ready for reuse
  int64_t system_allocs;         // calls that reached the system allocator
  int64_t system_frees;
  int64_t alloc_requests;        // every allocate() call
};

class CachingAllocator {
 public:
  static constexpr size_t kAlignment = 64;

  // Returns kAlignment-aligned memory of at least `nbytes` (0 allowed).
  // Throws OutOfMemoryError after freeing the cache and retrying.
  static void* allocate(size_t nbytes);
  // `nbytes` must be the size passed to allocate().
  static void deallocate(void* p, size_t nbytes);

  static AllocatorStats stats();
  // allocate() calls made by the calling thread so far (no lock; the
  // profiler reads it per kernel call).
  static int64_t thread_alloc_requests();
  static void reset_peak();
  // Returns every cached block (this thread's and the shared pool's) to
  // the system.
  static void empty_cache();
  // Size class index and the rounded size it serves (exposed for tests).
  // Inline: both run on every allocate/deallocate.
  static int size_class(size_t nbytes);
  static size_t class_size(int cls);

  static constexpr int kSmallClasses = 16;  // 64 .. 1024 B, step 64
};

inline int CachingAllocator::size_class(size_t n) {
  if (n <= 1024) return n == 0 ? 0 : int((n - 1) / 64);
  // n > 1024: 2^p <= n-1 < 2^(p+1), then four quarter steps per power.
  int p = 63 - __builtin_clzll(uint64_t(n - 1));
  size_t base = size_t(1) << p;
  int q = int((n - 1 - base) / (base / 4));  // 0..3
  return kSmallClasses + (p - 10) * 4 + q;
}

inline size_t CachingAllocator::class_size(int c) {
  if (c < kSmallClasses) return size_t(c + 1) * 64;
  int p = (c - kSmallClasses) / 4 + 10;
  int q = (c - kSmallClasses) % 4;
  size_t base = size_t(1) << p;
  return base + (base / 4) * size_t(q + 1);
}

}  // namespace fastt
