// CachingAllocator: size classes, reuse in steady state, statistics,
// empty_cache, and concurrent use from several threads (including freeing
// on a thread other than the allocating one).
#include <atomic>
#include <thread>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/allocator.h"
#include "csrc/ops/elementwise.h"

using namespace fastt;
using namespace fastt::test;

TEST_CASE("size classes cover every size with bounded slack",
          "[allocator]") {
  CHECK(CachingAllocator::size_class(0) == 0);
  CHECK(CachingAllocator::class_size(0) == 64);
  CHECK(CachingAllocator::size_class(64) == 0);
  CHECK(CachingAllocator::size_class(65) == 1);
  CHECK(CachingAllocator::class_size(CachingAllocator::size_class(1024)) ==
        1024);
  CHECK(CachingAllocator::class_size(CachingAllocator::size_class(1025)) ==
        1280);
  int prev = -1;
  for (size_t n = 1; n < (size_t(1) << 22); n += n / 7 + 1) {
    int c = CachingAllocator::size_class(n);
    size_t cs = CachingAllocator::class_size(c);
    INFO(n);
    REQUIRE(cs >= n);
    REQUIRE(double(cs) <= double(n) * 1.25 + 64);
    REQUIRE(c >= prev);  // monotone
    prev = c;
    // The class's own size maps back to it; one byte more moves up.
    REQUIRE(CachingAllocator::size_class(cs) == c);
    REQUIRE(CachingAllocator::size_class(cs + 1) == c + 1);
  }
  CHECK(CachingAllocator::class_size(CachingAllocator::size_class(
            size_t(1) << 56)) >= (size_t(1) << 56));
}

TEST_CASE("blocks from 4 MiB on start on a 2 MiB boundary", "[allocator]") {
  // (for transparent huge pages: csrc/allocator.cpp system_alloc)
  for (size_t n : {size_t(4) << 20, (size_t(5) << 20) + 3, size_t(9) << 20}) {
    void* p = CachingAllocator::allocate(n);
    INFO(n);
    CHECK(reinterpret_cast<uintptr_t>(p) % (size_t(2) << 20) == 0);
    static_cast<char*>(p)[0] = 1;
    static_cast<char*>(p)[n - 1] = 2;
    CachingAllocator::deallocate(p, n);
  }
  void* s = CachingAllocator::allocate((size_t(4) << 20) - 4096);
  CHECK(reinterpret_cast<uintptr_t>(s) % CachingAllocator::kAlignment == 0);
  CachingAllocator::deallocate(s, (size_t(4) << 20) - 4096);
}

TEST_CASE("allocations are aligned and reused", "[allocator]") {
  void* p = CachingAllocator::allocate(100);
  CHECK(reinterpret_cast<uintptr_t>(p) % CachingAllocator::kAlignment == 0);
  std::memset(p, 1, 100);
  CachingAllocator::deallocate(p, 100);
  void* q = CachingAllocator::allocate(120);  // same class (128)
  CHECK(q == p);
  CachingAllocator::deallocate(q, 120);
  CachingAllocator::deallocate(nullptr, 10);  // no-op
  void* z = CachingAllocator::allocate(0);
  CHECK(z != nullptr);
  CachingAllocator::deallocate(z, 0);
}

TEST_CASE("a steady loop of ops does not reach the system allocator",
          "[allocator]") {
  Tensor a = make(sample(DType::Float32, 1000, 1), {10, 100},
                  DType::Float32);
  Tensor b = make(sample(DType::Float32, 100, 2), {100}, DType::Float32);
  auto step = [&] {
    Tensor c = mul(add(a, b), a);
    Tensor d = c.t().contiguous();
    Tensor e = add(d, Scalar(1));
  };
  for (int i = 0; i < 10; ++i) step();  // warm up the free lists
  AllocatorStats before = CachingAllocator::stats();
  for (int i = 0; i < 1000; ++i) step();
  AllocatorStats after = CachingAllocator::stats();
  CHECK(after.system_allocs == before.system_allocs);
  CHECK(after.alloc_requests > before.alloc_requests + 1000);
  CHECK(after.allocated_bytes == before.allocated_bytes);
}

TEST_CASE("stats: allocated, peak, cached, empty_cache", "[allocator]") {
  // Idle threads (OpenMP workers) may hold cached blocks: compare deltas.
  CachingAllocator::empty_cache();
  AllocatorStats s0 = CachingAllocator::stats();
  CachingAllocator::reset_peak();
  const size_t n = 1 << 20;  // 1 MiB: its own class
  const int64_t cls = int64_t(
      CachingAllocator::class_size(CachingAllocator::size_class(n)));
  void* p = CachingAllocator::allocate(n);
  AllocatorStats s1 = CachingAllocator::stats();
  CHECK(s1.allocated_bytes == s0.allocated_bytes + cls);
  CHECK(s1.peak_allocated_bytes >= s1.allocated_bytes);
  CHECK(s1.system_allocs == s0.system_allocs + 1);
  CHECK(s1.alloc_requests == s0.alloc_requests + 1);
  void* q = CachingAllocator::allocate(n);
  AllocatorStats s2 = CachingAllocator::stats();
  CHECK(s2.peak_allocated_bytes == s0.allocated_bytes + 2 * cls);
  CachingAllocator::deallocate(q, n);
  CachingAllocator::deallocate(p, n);
  AllocatorStats s3 = CachingAllocator::stats();
  CHECK(s3.allocated_bytes == s0.allocated_bytes);
  CHECK(s3.peak_allocated_bytes == s2.peak_allocated_bytes);
  CHECK(s3.cached_bytes == s0.cached_bytes + 2 * cls);
  CHECK(s3.system_frees == s0.system_frees);
  CachingAllocator::reset_peak();
  CHECK(CachingAllocator::stats().peak_allocated_bytes ==
        s3.allocated_bytes);
  CachingAllocator::empty_cache();
  AllocatorStats s4 = CachingAllocator::stats();
  CHECK(s4.cached_bytes == s0.cached_bytes);
  CHECK(s4.system_frees == s3.system_frees + 2);
  // Tensors account their blocks too.
  {
    Tensor t = Tensor::empty({1 << 18}, DType::Float32);
    CHECK(CachingAllocator::stats().allocated_bytes >=
          s4.allocated_bytes + (1 << 20));
  }
  CHECK(CachingAllocator::stats().allocated_bytes == s4.allocated_bytes);
}

TEST_CASE("out of memory is an error, not a crash", "[allocator]") {
  CHECK_THROWS_AS(CachingAllocator::allocate(size_t(1) << 60),
                  OutOfMemoryError);
  CHECK_THROWS_AS(Tensor::empty({int64_t(1) << 50}, DType::Float32),
                  OutOfMemoryError);
  AllocatorStats s = CachingAllocator::stats();
  CHECK(s.allocated_bytes >= 0);
}

TEST_CASE("threads allocate and free concurrently", "[allocator][threads]") {
  CachingAllocator::empty_cache();
  AllocatorStats before = CachingAllocator::stats();
  constexpr int kThreads = 4, kIters = 2000;
  std::atomic<int> failures{0};
  // Each thread hands half of its blocks to the next thread to free.
  std::vector<std::vector<std::pair<void*, size_t>>> handoff(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &handoff, &failures] {
      std::vector<std::pair<void*, size_t>> mine;
      for (int i = 0; i < kIters; ++i) {
        size_t n = size_t(16 + (i * 37 + t * 101) % 5000);
        auto* p = static_cast<unsigned char*>(CachingAllocator::allocate(n));
        std::memset(p, t + 1, n);
        mine.emplace_back(p, n);
        if (mine.size() > 16) {  // free some, checking nobody else wrote
          auto [q, m] = mine.front();
          mine.erase(mine.begin());
          auto* b = static_cast<unsigned char*>(q);
          if (b[0] != t + 1 || b[m - 1] != t + 1) ++failures;
          CachingAllocator::deallocate(q, m);
        }
        // Tensors and ops from many threads.
        if (i % 50 == 0) {
          Tensor a = Tensor::empty({7, 9}, DType::Float32);
          a.fill_(Scalar(double(t)));
          Tensor c = add(a, a);
          if (get(c, 62) != 2.0 * t) ++failures;
        }
      }
      handoff[size_t(t)] = std::move(mine);
    });
  }
  for (auto& th : threads) th.join();
  // Free every remaining block on different threads than allocated them.
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &handoff, &failures] {
      for (auto [p, n] : handoff[size_t((t + 1) % kThreads)]) {
        auto* b = static_cast<unsigned char*>(p);
        if (b[n - 1] != (t + 1) % kThreads + 1) ++failures;
        CachingAllocator::deallocate(p, n);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  AllocatorStats after = CachingAllocator::stats();
  CHECK(after.allocated_bytes == before.allocated_bytes);
  CHECK(after.alloc_requests >= before.alloc_requests + kThreads * kIters);
  // Exited threads returned their caches: nothing is cached beyond what
  // this thread and the shared pool hold, and all of it can be released.
  CachingAllocator::empty_cache();
  CHECK(CachingAllocator::stats().cached_bytes == before.cached_bytes);
}
