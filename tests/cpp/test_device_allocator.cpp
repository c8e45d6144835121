// DeviceCachingAllocator on a fake host backend (counting, capacity-limited,
// with events completed by hand): rounding, reuse, splitting, coalescing,
// stream-ordered reuse, record_stream deferral, OOM retry, stats,
// empty_cache, threads, and a randomized invariant check.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "catch.h"
#include "csrc/device_allocator.h"
#include "csrc/errors.h"

using namespace fastt;

namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;
constexpr StreamHandle S1 = 1, S2 = 2, S3 = 3;

// Host memory standing in for a device with `capacity` bytes.
struct FakeBackend : RawBackend {
  struct Event {
    bool recorded = false;
    bool done = false;
    StreamHandle stream = 0;
  };
  size_t capacity;
  size_t used = 0;
  std::map<char*, size_t> live;  // raw allocations
  int raw_allocs = 0, raw_frees = 0, failed_allocs = 0, syncs = 0;
  int events_created = 0, events_destroyed = 0, records = 0;
  std::vector<std::unique_ptr<Event>> events;

  explicit FakeBackend(size_t cap = 256 * MiB) : capacity(cap) {}
  ~FakeBackend() override {
    for (auto& kv : live) std::free(kv.first);
  }
  void* raw_alloc(size_t n) override {
    if (used + n > capacity) {
      ++failed_allocs;
      return nullptr;
    }
    char* p = static_cast<char*>(std::malloc(n));
    REQUIRE(p != nullptr);
    live[p] = n;
    used += n;
    ++raw_allocs;
    return p;
  }
  void raw_free(void* p, size_t n) override {
    auto it = live.find(static_cast<char*>(p));
    REQUIRE(it != live.end());
    REQUIRE(it->second == n);
    used -= n;
    live.erase(it);
    std::free(p);
    ++raw_frees;
  }
  void* event_create() override {
    events.emplace_back(new Event());
    ++events_created;
    return events.back().get();
  }
  void event_record(void* e, StreamHandle s) override {
    Event* ev = static_cast<Event*>(e);
    ev->recorded = true;
    ev->done = false;
    ev->stream = s;
    ++records;
  }
  bool event_query(void* e) override { return static_cast<Event*>(e)->done; }
  void event_destroy(void*) override { ++events_destroyed; }
  void synchronize() override {
    ++syncs;
    for (auto& e : events) e->done = true;
  }
  void mem_info(size_t* free_bytes, size_t* total) override {
    *free_bytes = capacity - used;
    *total = capacity;
  }
  // The device finished everything queued on `s` so far.
  void complete(StreamHandle s) {
    for (auto& e : events)
      if (e->recorded && e->stream == s) e->done = true;
  }
};

struct Fixture {
  FakeBackend backend;
  DeviceCachingAllocator alloc;
  explicit Fixture(size_t cap = 256 * MiB)
      : backend(cap), alloc(&backend, "CUDA", "GPU 0") {}
};

void* off(void* p, size_t n) { return static_cast<char*>(p) + n; }

std::string oom_message(DeviceCachingAllocator& a, size_t n, StreamHandle s) {
  try {
    a.allocate(n, s);
  } catch (const OutOfMemoryError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("device allocator rounds sizes and picks segment sizes",
          "[device_allocator]") {
  using A = DeviceCachingAllocator;
  CHECK(A::round_size(1) == 512);
  CHECK(A::round_size(512) == 512);
  CHECK(A::round_size(513) == 1024);
  CHECK(A::round_size(MiB) == MiB);
  CHECK(A::round_size(MiB + 1) == MiB + 512);
  CHECK(A::segment_size(512) == 2 * MiB);
  CHECK(A::segment_size(MiB) == 2 * MiB);
  CHECK(A::segment_size(MiB + 512) == 20 * MiB);
  CHECK(A::segment_size(10 * MiB - 512) == 20 * MiB);
  CHECK(A::segment_size(10 * MiB) == 10 * MiB);
  CHECK(A::segment_size(11 * MiB) == 12 * MiB);
  CHECK(A::segment_size(12 * MiB) == 12 * MiB);
  CHECK(A::segment_size(12 * MiB + 512) == 14 * MiB);
  CHECK(format_bytes(100) == "100 bytes");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(20 * MiB) == "20.00 MiB");
  CHECK(format_bytes(size_t(3) << 30) == "3.00 GiB");
}

TEST_CASE("device allocator: zero bytes and null frees",
          "[device_allocator]") {
  Fixture f;
  CHECK(f.alloc.allocate(0, S1) == nullptr);
  f.alloc.free(nullptr);
  f.alloc.record_stream(nullptr, S2);
  auto s = f.alloc.stats();
  CHECK(s.alloc_count == 0);
  CHECK(s.free_count == 0);
  CHECK(f.backend.raw_allocs == 0);
}

TEST_CASE("device allocator reuses a freed block on the same stream",
          "[device_allocator]") {
  Fixture f;
  void* p = f.alloc.allocate(1000, S1);
  REQUIRE(p != nullptr);
  CHECK(f.alloc.block_size(p) == 1024);
  CHECK(f.backend.raw_allocs == 1);
  CHECK(f.backend.live.begin()->second == 2 * MiB);  // small segment
  f.alloc.free(p);
  void* q = f.alloc.allocate(1000, S1);
  CHECK(q == p);  // the segment start again: the free block merged back
  f.alloc.free(q);
  CHECK(f.backend.raw_allocs == 1);
  CHECK(f.alloc.stats().num_device_allocs == 1);
}

TEST_CASE("device allocator carves small requests out of one segment",
          "[device_allocator]") {
  Fixture f;
  std::vector<void*> ps;
  for (int i = 0; i < 4; ++i) ps.push_back(f.alloc.allocate(512 * KiB, S1));
  CHECK(f.backend.raw_allocs == 1);
  for (int i = 1; i < 4; ++i)
    CHECK(static_cast<char*>(ps[i]) ==
          static_cast<char*>(ps[i - 1]) + 512 * KiB);
  // The segment is used up: the next request needs a new one.
  void* p5 = f.alloc.allocate(512, S1);
  CHECK(f.backend.raw_allocs == 2);
  auto s = f.alloc.stats();
  CHECK(s.reserved_bytes == int64_t(4 * MiB));
  CHECK(s.allocated_bytes == int64_t(2 * MiB + 512));
  CHECK(s.segments == 2);
  for (void* p : ps) f.alloc.free(p);
  f.alloc.free(p5);
  CHECK(f.alloc.stats().allocated_bytes == 0);
}

TEST_CASE("device allocator splits large segments and keeps remainders",
          "[device_allocator]") {
  Fixture f;
  // 3 MiB comes from a 20 MiB buffer; the rest stays cached for others.
  void* a = f.alloc.allocate(3 * MiB, S1);
  CHECK(f.alloc.block_size(a) == 3 * MiB);
  CHECK(f.alloc.stats().reserved_bytes == int64_t(20 * MiB));
  void* b = f.alloc.allocate(5 * MiB, S1);
  CHECK(b == off(a, 3 * MiB));
  CHECK(f.backend.raw_allocs == 1);
  // 13 MiB does not fit the 12 MiB left; >= 10 MiB gets its own segment,
  // rounded up to 2 MiB.
  void* c = f.alloc.allocate(13 * MiB, S1);
  CHECK(f.backend.raw_allocs == 2);
  CHECK(f.backend.live[static_cast<char*>(c)] == 14 * MiB);
  // A remainder of 1 MiB or less is not split off a large block.
  CHECK(f.alloc.block_size(c) == 14 * MiB);
  CHECK(f.alloc.stats().allocated_bytes == int64_t(3 * MiB + 5 * MiB +
                                                   14 * MiB));
  CHECK(f.alloc.stats().requested_bytes == int64_t(21 * MiB));
  // Small requests never use large segments (their own pool).
  void* s = f.alloc.allocate(4 * KiB, S1);
  CHECK(f.backend.raw_allocs == 3);
  CHECK(f.backend.live[static_cast<char*>(s)] == 2 * MiB);
  // 12 MiB remain cached in the 20 MiB buffer: a 12 MiB request fits.
  void* d = f.alloc.allocate(12 * MiB, S1);
  CHECK(d == off(b, 5 * MiB));
  CHECK(f.backend.raw_allocs == 3);
  for (void* p : {a, b, c, s, d}) f.alloc.free(p);
}

TEST_CASE("device allocator coalesces free neighbours",
          "[device_allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(KiB, S1);
  void* b = f.alloc.allocate(KiB, S1);
  void* c = f.alloc.allocate(KiB, S1);
  CHECK(b == off(a, KiB));
  CHECK(c == off(b, KiB));
  f.alloc.free(a);
  f.alloc.free(c);  // merges with the segment's tail
  // The segment is still in use by b: nothing to release.
  f.alloc.empty_cache();
  CHECK(f.backend.raw_frees == 0);
  CHECK(f.alloc.stats().reserved_bytes == int64_t(2 * MiB));
  // A 2 KiB request cannot use a's 1 KiB hole; it takes the tail at c.
  void* d = f.alloc.allocate(2 * KiB, S1);
  CHECK(d == c);
  f.alloc.free(d);
  f.alloc.free(b);  // a + b + tail merge back into the whole segment
  // The whole segment is one block again: a 1 MiB request starts at a.
  void* e = f.alloc.allocate(MiB, S1);
  CHECK(e == a);
  void* g = f.alloc.allocate(MiB, S1);
  CHECK(g == off(a, MiB));
  CHECK(f.backend.raw_allocs == 1);
  f.alloc.free(e);
  f.alloc.free(g);
  f.alloc.empty_cache();
  CHECK(f.backend.raw_frees == 1);
  CHECK(f.backend.live.empty());
  CHECK(f.alloc.stats().reserved_bytes == 0);
  CHECK(f.alloc.stats().segments == 0);
}

TEST_CASE("device allocator lookup is a best fit", "[device_allocator]") {
  Fixture f;
  void* x1 = f.alloc.allocate(4 * KiB, S1);
  void* s1 = f.alloc.allocate(512, S1);
  void* x2 = f.alloc.allocate(2 * KiB, S1);
  void* s2 = f.alloc.allocate(512, S1);
  void* x3 = f.alloc.allocate(8 * KiB, S1);
  void* s3 = f.alloc.allocate(512, S1);
  f.alloc.free(x1);
  f.alloc.free(x2);
  f.alloc.free(x3);
  CHECK(f.alloc.allocate(2 * KiB, S1) == x2);  // exact fit
  void* y = f.alloc.allocate(3 * KiB, S1);     // 4 KiB hole beats 8 KiB
  CHECK(y == x1);
  // The 1 KiB left of x1's hole serves the next 1 KiB request.
  void* z = f.alloc.allocate(KiB, S1);
  CHECK(z == off(x1, 3 * KiB));
  void* w = f.alloc.allocate(6 * KiB, S1);
  CHECK(w == x3);
  CHECK(f.backend.raw_allocs == 1);
  for (void* p : {x2, y, z, w, s1, s2, s3}) f.alloc.free(p);
  CHECK(f.alloc.stats().active_blocks == 0);
  f.alloc.empty_cache();
  CHECK(f.backend.live.empty());
}

TEST_CASE("device allocator reuse is per stream", "[device_allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(64 * KiB, S1);
  f.alloc.free(a);
  // Another stream may still be ordered before S1's use: no reuse there.
  void* b = f.alloc.allocate(64 * KiB, S2);
  CHECK(b != a);
  CHECK(f.backend.raw_allocs == 2);
  void* c = f.alloc.allocate(64 * KiB, S1);
  CHECK(c == a);
  CHECK(f.backend.raw_allocs == 2);
  f.alloc.free(b);
  f.alloc.free(c);
  // Large pool too.
  void* l1 = f.alloc.allocate(12 * MiB, S1);
  f.alloc.free(l1);
  void* l2 = f.alloc.allocate(12 * MiB, S2);
  CHECK(l2 != l1);
  f.alloc.free(l2);
  CHECK(f.alloc.allocate(12 * MiB, S1) == l1);
  CHECK(f.alloc.allocate(12 * MiB, S2) == l2);
  f.alloc.free(l1);
  f.alloc.free(l2);
  CHECK(f.backend.records == 0);  // no events without record_stream
}

TEST_CASE("device allocator defers reuse after record_stream",
          "[device_allocator]") {
  Fixture f;
  // 20 MiB: a segment of its own, so the only candidate for reuse is p.
  void* p = f.alloc.allocate(20 * MiB, S1);
  f.alloc.record_stream(p, S2);
  f.alloc.record_stream(p, S2);  // recorded once
  f.alloc.record_stream(p, S1);  // the allocation stream: no-op
  f.alloc.free(p);
  CHECK(f.backend.records == 1);
  CHECK(f.backend.events.back()->stream == S2);
  auto s = f.alloc.stats();
  CHECK(s.pending_free_blocks == 1);
  CHECK(s.allocated_bytes == 0);
  CHECK(s.reserved_bytes == int64_t(20 * MiB));

  // S2 has not finished: the block must not be handed out again.
  void* q = f.alloc.allocate(20 * MiB, S1);
  CHECK(q != p);
  CHECK(f.backend.raw_allocs == 2);
  // Nor may empty_cache-less lookups see it while the event is pending.
  f.backend.complete(S3);  // an unrelated stream
  void* r = f.alloc.allocate(20 * MiB, S1);
  CHECK(r != p);
  CHECK(f.backend.raw_allocs == 3);
  f.alloc.free(q);
  f.alloc.free(r);

  // Once S2 completes, the next miss polls the event and reuses p. (q and
  // r went back to S1's pool, so take them first to force a miss.)
  void* q2 = f.alloc.allocate(20 * MiB, S1);
  void* r2 = f.alloc.allocate(20 * MiB, S1);
  CHECK(f.alloc.stats().pending_free_blocks == 1);
  f.backend.complete(S2);
  void* p2 = f.alloc.allocate(20 * MiB, S1);
  CHECK(p2 == p);
  CHECK(f.backend.raw_allocs == 3);
  CHECK(f.alloc.stats().pending_free_blocks == 0);
  for (void* x : {q2, r2, p2}) f.alloc.free(x);
}

TEST_CASE("device allocator waits for every recorded stream",
          "[device_allocator]") {
  Fixture f;
  void* p = f.alloc.allocate(20 * MiB, S1);
  f.alloc.record_stream(p, S2);
  f.alloc.record_stream(p, S3);
  f.alloc.free(p);
  CHECK(f.backend.records == 2);
  f.backend.complete(S2);
  void* q = f.alloc.allocate(20 * MiB, S1);  // S3 still pending
  CHECK(q != p);
  f.backend.complete(S3);
  void* r = f.alloc.allocate(20 * MiB, S1);
  CHECK(r == p);
  CHECK(f.backend.events_created == 2);
  // Events are pooled: a second deferral reuses them.
  f.alloc.record_stream(r, S2);
  f.alloc.free(r);
  CHECK(f.backend.events_created == 2);
  CHECK(f.backend.records == 3);
  f.alloc.free(q);
  // A pending block does not merge with its neighbours, nor is its
  // segment released, until the event completes; empty_cache waits.
  f.alloc.empty_cache();
  CHECK(f.backend.syncs >= 1);
  CHECK(f.backend.live.empty());
  CHECK(f.alloc.stats().pending_free_blocks == 0);
}

TEST_CASE("device allocator keeps a pending block out of merges",
          "[device_allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(KiB, S1);
  void* b = f.alloc.allocate(KiB, S1);
  void* c = f.alloc.allocate(KiB, S1);
  f.alloc.record_stream(b, S2);
  f.alloc.free(b);  // pending
  f.alloc.free(a);
  f.alloc.free(c);
  // a's hole cannot grow into b: a 2 KiB request goes past c.
  void* d = f.alloc.allocate(2 * KiB, S1);
  CHECK(d == c);
  f.alloc.free(d);
  f.alloc.empty_cache();  // waits for S2, merges, releases the segment
  CHECK(f.backend.live.empty());
}

TEST_CASE("device allocator frees the cache and retries when out of memory",
          "[device_allocator]") {
  Fixture f(30 * MiB);
  void* a = f.alloc.allocate(20 * MiB, S1);
  f.alloc.free(a);  // cached on S1
  // S2 cannot reuse it, and 40 MiB do not fit: the cache is flushed.
  void* b = f.alloc.allocate(20 * MiB, S2);
  REQUIRE(b != nullptr);
  auto s = f.alloc.stats();
  CHECK(s.num_alloc_retries == 1);
  CHECK(s.num_device_frees == 1);
  CHECK(s.num_ooms == 0);
  CHECK(s.reserved_bytes == int64_t(20 * MiB));
  CHECK(f.backend.syncs >= 1);
  CHECK(f.backend.failed_allocs == 1);

  // Now nothing can be released: a genuine OOM with the sizes.
  std::string msg = oom_message(f.alloc, 20 * MiB, S2);
  INFO(msg);
  CHECK(msg.find("CUDA out of memory") != std::string::npos);
  CHECK(msg.find("Tried to allocate 20.00 MiB") != std::string::npos);
  CHECK(msg.find("20971520 bytes") != std::string::npos);
  CHECK(msg.find("GPU 0 has a total capacity of 30.00 MiB") !=
        std::string::npos);
  CHECK(msg.find("of which 10.00 MiB is free") != std::string::npos);
  CHECK(msg.find("20.00 MiB is allocated by fastt") != std::string::npos);
  CHECK(msg.find("0 bytes is reserved by fastt but unallocated") !=
        std::string::npos);
  s = f.alloc.stats();
  CHECK(s.num_ooms == 1);
  CHECK(s.alloc_count == 2);  // the failed request is not counted
  CHECK(s.allocated_bytes == int64_t(20 * MiB));

  // Still usable: small requests fit, and freeing b makes room again.
  void* c = f.alloc.allocate(KiB, S2);
  REQUIRE(c != nullptr);
  f.alloc.free(c);
  f.alloc.free(b);
  void* d = f.alloc.allocate(20 * MiB, S2);
  CHECK(d == b);
  f.alloc.free(d);
}

TEST_CASE("device allocator OOM reports cached-but-unallocated bytes",
          "[device_allocator]") {
  Fixture f(24 * MiB);
  void* big = f.alloc.allocate(3 * MiB, S1);  // 20 MiB buffer
  void* small = f.alloc.allocate(KiB, S1);    // 2 MiB segment
  // 22 MiB reserved, 3 MiB + 1 KiB allocated; 12 MiB cannot fit and the
  // cached 17 MiB remainder is in a split segment that cannot be released.
  std::string msg = oom_message(f.alloc, 18 * MiB, S1);
  INFO(msg);
  CHECK(msg.find("Tried to allocate 18.00 MiB") != std::string::npos);
  CHECK(msg.find("3.00 MiB is allocated by fastt") != std::string::npos);
  CHECK(msg.find("19.00 MiB is reserved by fastt but unallocated") !=
        std::string::npos);
  f.alloc.free(big);
  f.alloc.free(small);
  // The 20 MiB buffer is whole again: it serves the request directly.
  void* p = f.alloc.allocate(18 * MiB, S1);
  CHECK(p == big);
  CHECK(f.alloc.stats().num_alloc_retries == 1);
  // 22 MiB more do not fit next to it: the cached 2 MiB small segment
  // goes back, and still it fails.
  CHECK_THROWS_AS(f.alloc.allocate(22 * MiB, S1), OutOfMemoryError);
  CHECK(f.alloc.stats().num_alloc_retries == 2);
  CHECK(f.alloc.stats().reserved_bytes == int64_t(20 * MiB));
  f.alloc.free(p);
}

TEST_CASE("device allocator OOM path waits for pending frees",
          "[device_allocator]") {
  Fixture f(20 * MiB);
  void* p = f.alloc.allocate(20 * MiB, S1);
  f.alloc.record_stream(p, S2);
  f.alloc.free(p);  // pending on S2, device full
  void* q = f.alloc.allocate(20 * MiB, S1);
  CHECK(q == p);  // synchronized, the event completed, reused
  CHECK(f.backend.syncs == 1);
  CHECK(f.backend.raw_frees == 0);
  CHECK(f.alloc.stats().num_ooms == 0);
  f.alloc.free(q);
}

TEST_CASE("device allocator: huge requests raise OutOfMemoryError",
          "[device_allocator]") {
  Fixture f;
  CHECK_THROWS_AS(f.alloc.allocate(size_t(1) << 40, S1), OutOfMemoryError);
  CHECK_THROWS_AS(f.alloc.allocate(~size_t(0) - 5, S1), OutOfMemoryError);
  CHECK(f.alloc.stats().num_ooms == 2);
  CHECK(f.backend.live.empty());
}

TEST_CASE("device allocator statistics", "[device_allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(1000, S1);
  void* b = f.alloc.allocate(3 * MiB, S1);
  auto s = f.alloc.stats();
  CHECK(s.allocated_bytes == int64_t(1024 + 3 * MiB));
  CHECK(s.requested_bytes == int64_t(1000 + 3 * MiB));
  CHECK(s.max_allocated_bytes == s.allocated_bytes);
  CHECK(s.reserved_bytes == int64_t(22 * MiB));
  CHECK(s.max_reserved_bytes == int64_t(22 * MiB));
  CHECK(s.active_blocks == 2);
  CHECK(s.alloc_count == 2);
  CHECK(s.num_device_allocs == 2);
  f.alloc.free(b);
  s = f.alloc.stats();
  CHECK(s.allocated_bytes == 1024);
  CHECK(s.max_allocated_bytes == int64_t(1024 + 3 * MiB));
  CHECK(s.reserved_bytes == int64_t(22 * MiB));  // cached
  CHECK(s.free_count == 1);
  f.alloc.reset_peak();
  s = f.alloc.stats();
  CHECK(s.max_allocated_bytes == 1024);
  CHECK(s.max_reserved_bytes == int64_t(22 * MiB));
  f.alloc.empty_cache();
  s = f.alloc.stats();
  CHECK(s.reserved_bytes == int64_t(2 * MiB));
  CHECK(s.max_reserved_bytes == int64_t(22 * MiB));
  CHECK(s.num_device_frees == 1);
  f.alloc.reset_peak();
  CHECK(f.alloc.stats().max_reserved_bytes == int64_t(2 * MiB));
  f.alloc.reset_accumulated();
  s = f.alloc.stats();
  CHECK(s.alloc_count == 0);
  CHECK(s.free_count == 0);
  CHECK(s.num_device_allocs == 0);
  CHECK(s.allocated_bytes == 1024);  // current values are kept
  f.alloc.free(a);
  CHECK(f.alloc.stats().free_count == 1);
}

TEST_CASE("device allocator: steady state makes no device calls",
          "[device_allocator]") {
  Fixture f;
  const size_t sizes[] = {4, 1000, 64 * KiB, 700 * KiB, 2 * MiB + 3,
                          9 * MiB, 33 * MiB};
  // A simple forward/backward-like pattern: allocate all, free all.
  auto iteration = [&] {
    std::vector<void*> live;
    for (size_t n : sizes) live.push_back(f.alloc.allocate(n, S1));
    for (size_t n : sizes) live.push_back(f.alloc.allocate(n / 2 + 1, S1));
    std::reverse(live.begin(), live.end());
    for (void* p : live) f.alloc.free(p);
  };
  iteration();
  const int64_t warm = f.alloc.stats().num_device_allocs;
  for (int i = 0; i < 200; ++i) iteration();
  auto s = f.alloc.stats();
  CHECK(s.num_device_allocs == warm);
  CHECK(s.num_device_frees == 0);
  CHECK(s.allocated_bytes == 0);
  CHECK(s.alloc_count == 201 * 14);
  CHECK(s.free_count == s.alloc_count);
}

TEST_CASE("device allocator rejects foreign and double frees",
          "[device_allocator]") {
  Fixture f;
  int x = 0;
  CHECK_THROWS_AS(f.alloc.free(&x), ValueError);
  CHECK_THROWS_AS(f.alloc.record_stream(&x, S2), ValueError);
  void* p = f.alloc.allocate(100, S1);
  void* q = f.alloc.allocate(100, S1);
  // An interior pointer is not a block.
  CHECK_THROWS_AS(f.alloc.free(static_cast<char*>(p) + 8), ValueError);
  f.alloc.free(p);
  CHECK_THROWS_AS(f.alloc.free(p), ValueError);
  CHECK(f.alloc.owns(q));
  CHECK_FALSE(f.alloc.owns(p));
  f.alloc.free(q);
  CHECK(f.alloc.stats().free_count == 2);
}

TEST_CASE("device allocator destructor returns cached segments",
          "[device_allocator]") {
  FakeBackend backend;
  {
    DeviceCachingAllocator a(&backend, "CUDA", "GPU 0");
    void* p = a.allocate(5 * MiB, S1);
    void* q = a.allocate(100, S2);
    a.record_stream(q, S1);
    a.free(p);
    a.free(q);
    CHECK(backend.live.size() == 2);
  }
  CHECK(backend.live.empty());
  CHECK(backend.events_destroyed == backend.events_created);
}

TEST_CASE("device allocator is thread-safe", "[device_allocator][threads]") {
  Fixture f;
  auto worker = [&](StreamHandle s, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<void*> live;
    for (int i = 0; i < 3000; ++i) {
      if (live.size() < 8 && (rng() % 3 != 0 || live.empty())) {
        size_t n = 1 + rng() % (rng() % 4 == 0 ? 4 * MiB : 16 * KiB);
        void* p = f.alloc.allocate(n, s);
        // Write the ends: overlapping blocks would show up under ASan/TSan.
        static_cast<char*>(p)[0] = 1;
        static_cast<char*>(p)[n - 1] = 1;
        live.push_back(p);
      } else {
        size_t k = rng() % live.size();
        if (rng() % 5 == 0) f.alloc.record_stream(live[k], s + 100);
        f.alloc.free(live[k]);
        live.erase(live.begin() + long(k));
      }
    }
    for (void* p : live) f.alloc.free(p);
  };
  std::thread t1(worker, S1, 1u), t2(worker, S2, 2u), t3(worker, S1, 3u);
  t1.join();
  t2.join();
  t3.join();
  auto s = f.alloc.stats();
  CHECK(s.allocated_bytes == 0);
  CHECK(s.active_blocks == 0);
  CHECK(s.alloc_count == s.free_count);
  f.alloc.empty_cache();
  CHECK(f.backend.live.empty());
  CHECK(f.alloc.stats().reserved_bytes == 0);
}

TEST_CASE("device allocator keeps its invariants under random use",
          "[device_allocator]") {
  Fixture f(96 * MiB);
  std::mt19937 rng(12345);
  struct Live {
    char* p;
    size_t n;
  };
  std::vector<Live> live;
  int ooms = 0;
  for (int i = 0; i < 5000; ++i) {
    if (rng() % 97 == 0) f.alloc.empty_cache();
    if (rng() % 50 == 0) {
      f.backend.complete(StreamHandle(1 + rng() % 3));
    }
    if (live.empty() || rng() % 2 == 0) {
      const size_t limits[] = {2 * KiB, 600 * KiB, 6 * MiB, 24 * MiB};
      size_t n = 1 + rng() % limits[rng() % 4];
      StreamHandle s = 1 + rng() % 2;
      char* p = nullptr;
      try {
        p = static_cast<char*>(f.alloc.allocate(n, s));
      } catch (const OutOfMemoryError&) {
        ++ooms;
        continue;
      }
      // Inside a backend segment, 512-aligned relative to it, and
      // disjoint from every live block.
      auto seg = f.backend.live.upper_bound(p);
      REQUIRE(seg != f.backend.live.begin());
      --seg;
      REQUIRE(p + n <= seg->first + seg->second);
      REQUIRE((p - seg->first) % 512 == 0);
      for (const Live& l : live)
        REQUIRE((p + n <= l.p || l.p + l.n <= p));
      live.push_back({p, n});
    } else {
      size_t k = rng() % live.size();
      if (rng() % 4 == 0) f.alloc.record_stream(live[k].p, 3);
      f.alloc.free(live[k].p);
      live.erase(live.begin() + long(k));
    }
    auto s = f.alloc.stats();
    int64_t total = 0, req = 0;
    for (const Live& l : live) {
      total += int64_t(f.alloc.block_size(l.p));
      req += int64_t(l.n);
    }
    REQUIRE(s.allocated_bytes == total);
    REQUIRE(s.requested_bytes == req);
    REQUIRE(s.active_blocks == int64_t(live.size()));
    REQUIRE(s.reserved_bytes == int64_t(f.backend.used));
    REQUIRE(s.allocated_bytes <= s.reserved_bytes);
  }
  for (const Live& l : live) f.alloc.free(l.p);
  f.alloc.empty_cache();
  CHECK(f.backend.live.empty());
  CHECK(f.alloc.stats().num_ooms == ooms);
}

TEST_CASE("device allocator without caching: a raw block per allocation",
          "[device_allocator]") {
  FakeBackend backend(64 * KiB);
  DeviceCachingAllocator a(&backend, "CUDA", "GPU 0", /*no_caching=*/true);
  CHECK(a.no_caching());
  CHECK_FALSE(DeviceCachingAllocator(&backend, "CUDA", "GPU 0").no_caching());

  // Exact sizes (up to 4 bytes), one raw_alloc each, no reuse.
  void* p = a.allocate(5, S1);
  REQUIRE(backend.live.count(static_cast<char*>(p)) == 1);
  CHECK(backend.live[static_cast<char*>(p)] == 8);
  CHECK(a.block_size(p) == 8);
  void* q = a.allocate(100, S1);
  CHECK(backend.live[static_cast<char*>(q)] == 100);
  CHECK(backend.raw_allocs == 2);
  DeviceAllocatorStats st = a.stats();
  CHECK(st.allocated_bytes == 108);
  CHECK(st.reserved_bytes == 108);
  CHECK(st.requested_bytes == 105);
  CHECK(st.segments == 2);

  // Freed on its own stream: returned to the device at once.
  a.free(p);
  CHECK(backend.raw_frees == 1);
  CHECK(backend.live.count(static_cast<char*>(p)) == 0);
  void* r = a.allocate(5, S1);
  CHECK(backend.raw_allocs == 3);  // not served from a cache
  a.free(r);

  // Used on another stream: returned only after that stream's work.
  a.record_stream(q, S2);
  a.free(q);
  CHECK(backend.raw_frees == 2);
  CHECK(a.stats().pending_free_blocks == 1);
  CHECK(backend.live.count(static_cast<char*>(q)) == 1);
  backend.complete(S2);
  void* t = a.allocate(4, S1);  // an allocation polls pending frees
  CHECK(backend.raw_frees == 3);
  CHECK(backend.live.count(static_cast<char*>(q)) == 0);
  CHECK(a.stats().pending_free_blocks == 0);
  a.free(t);
  st = a.stats();
  CHECK(st.reserved_bytes == 0);
  CHECK(st.segments == 0);
  CHECK(st.active_blocks == 0);
  CHECK(st.num_device_allocs == st.num_device_frees);
  CHECK(backend.used == 0);

  // Out of memory: pending frees are waited for, then it fails.
  void* big = a.allocate(40 * KiB, S1);
  a.record_stream(big, S3);
  a.free(big);
  const int syncs = backend.syncs;
  void* big2 = a.allocate(40 * KiB, S1);  // fits once the sync freed `big`
  CHECK(backend.syncs == syncs + 1);
  CHECK(a.stats().num_alloc_retries == 1);
  CHECK_THROWS_AS(a.allocate(40 * KiB, S1), OutOfMemoryError);
  a.free(big2);
  CHECK(backend.used == 0);
}
