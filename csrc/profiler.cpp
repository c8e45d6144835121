// The profiler behind csrc/profiler.h, and the dispatch hook it shares
// with capture (csrc/capture.h). lookup_kernel (dispatch.h) calls
// hooked_kernel while a session runs or a step is recorded; it returns the
// trampoline of that (op, device, dtype) entry, which hands the call to
// the recording thread's capture or times the real kernel and records one
// ProfileEvent in the calling thread's buffer.
#include "profiler.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <utility>

#include "allocator.h"
#include "capture.h"
#include "dispatch.h"
#include "errors.h"

namespace fastt {

bool g_dispatch_hooked = false;

namespace profiler {
namespace {

bool g_profiling = false;  // a session runs

constexpr int kNumEntries = kNumOps * kNumDeviceTypes * kNumDTypes;

// A thread's events in fixed chunks that never move: only the owning
// thread appends (no lock), publishing each chunk's count with a release
// store, so stop() on another thread reads complete events only.
struct Chunk {
  static constexpr int kCap = 2048;
  ProfileEvent ev[kCap];
  std::atomic<int> n{0};
  std::atomic<Chunk*> next{nullptr};
};
struct ThreadBuffer {
  Chunk* head = new Chunk;
  Chunk* tail = head;  // the owner's only
  ThreadBuffer() = default;
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;
  ~ThreadBuffer() {
    for (Chunk* c = head; c;) {
      Chunk* next = c->next.load(std::memory_order_relaxed);
      delete c;
      c = next;
    }
  }
  void append(const ProfileEvent& e) {
    Chunk* c = tail;
    int k = c->n.load(std::memory_order_relaxed);
    if (FASTT_UNLIKELY(k == Chunk::kCap)) {
      Chunk* fresh = new Chunk;
      c->next.store(fresh, std::memory_order_release);
      tail = c = fresh;
      k = 0;
    }
    c->ev[k] = e;
    c->n.store(k + 1, std::memory_order_release);
  }
  void read_into(std::vector<ProfileEvent>& out) const {
    for (Chunk* c = head; c; c = c->next.load(std::memory_order_acquire)) {
      int k = c->n.load(std::memory_order_acquire);
      out.insert(out.end(), c->ev, c->ev + k);
    }
  }
};

struct Session {
  std::mutex mu;
  uint64_t id = 0;  // bumped by each start()
  bool running = false;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};
// Never destroyed: threads may still finish a kernel during static
// destruction.
Session& session() {
  static Session* s = new Session;
  return *s;
}
std::atomic<uint64_t> g_session_id{0};

struct ThreadState {
  uint64_t session = 0;  // the session `buf` belongs to
  std::shared_ptr<ThreadBuffer> buf;
  int64_t last_end = 0;     // previous kernel's end (the tax baseline)
  int64_t last_allocs = 0;  // allocator requests at that point
  int64_t t_lookup = 0;     // this thread's latest profiled lookup
  int32_t tid = 0;
};
// Heap-allocated on a thread's first profiled op: only the pointer lives
// in TLS (the module's whole TLS block counts against glibc's static TLS
// surplus, shared with every other extension in the process).
thread_local std::unique_ptr<ThreadState> t_state_owner;
ThreadState& thread_state() {
  ThreadState* ts = t_state_owner.get();
  if (FASTT_UNLIKELY(ts == nullptr)) {
    t_state_owner.reset(new ThreadState());
    ts = t_state_owner.get();
  }
  return *ts;
}

// Gives the thread a buffer in the running session (once per session).
// Returns false when no session runs.
FASTT_NOINLINE bool join_slow(ThreadState& ts) {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.running) return false;
  ts.buf = std::make_shared<ThreadBuffer>();
  ts.tid = current_thread_id();
  s.buffers.push_back(ts.buf);
  ts.session = s.id;
  ts.last_end = now_ns();
  ts.last_allocs = CachingAllocator::thread_alloc_requests();
  return true;
}
inline bool join(ThreadState& ts) {
  if (FASTT_LIKELY(ts.session ==
                   g_session_id.load(std::memory_order_acquire)) &&
      FASTT_LIKELY(ts.buf != nullptr))
    return true;
  return join_slow(ts);
}

// Runs g_dispatch's kernel for flat entry `e` and records it. The kernel is
// read from the table rather than from a saved pointer, so any number of
// lookups may happen between a lookup and its call.
FASTT_NOINLINE void run_profiled(int e, KernelArgs& a) {
  KernelFn fn = (&g_dispatch[0][0][0])[e];
  ThreadState& ts = thread_state();
  const int64_t t_lookup = ts.t_lookup;
  const int64_t prev_end = ts.last_end;
  const int64_t prev_allocs = ts.last_allocs;
  const int64_t t0 = now_ns();
  // A kernel that runs ops itself: their tax counts from this start.
  ts.last_end = t0;
  fn(a);
  const int64_t t1 = now_ns();
  const int64_t allocs = CachingAllocator::thread_alloc_requests();
  ts.last_end = t1;
  ts.last_allocs = allocs;
  if (!g_profiling || !join(ts)) return;
  ProfileEvent ev{uint16_t(e / (kNumDeviceTypes * kNumDTypes)),
                  ts.tid,
                  t_lookup,
                  t0,
                  t1,
                  prev_end,
                  allocs - prev_allocs};
  ts.buf->append(ev);
}

FASTT_NOINLINE void run_hooked(int e, KernelArgs& a) {
  if (FASTT_UNLIKELY(g_capturing) && capture::record_and_run(e, a)) return;
  run_kernel_entry(e, a);
}

template <int E>
void trampoline(KernelArgs& a) {
  run_hooked(E, a);
}
template <int... E>
constexpr std::array<KernelFn, sizeof...(E)> make_trampolines(
    std::integer_sequence<int, E...>) {
  return {{&trampoline<E>...}};
}
constexpr std::array<KernelFn, kNumEntries> kTrampolines =
    make_trampolines(std::make_integer_sequence<int, kNumEntries>{});

}  // namespace

int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

int32_t current_thread_id() {
  static thread_local int32_t tid = int32_t(syscall(SYS_gettid));
  return tid;
}

const char* op_name(uint16_t op) {
  FASTT_CHECK(op < kNumOps, IndexError, "profiler.op_name: no op with id {}",
              op);
  return fastt::op_name(Op(op));
}

bool is_enabled() { return g_profiling; }

void start() {
  {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mu);
    FASTT_CHECK(!s.running, RuntimeError,
                "profiler.start: a profiling session is already running; "
                "stop it first");
    s.running = true;
    s.buffers.clear();
    g_session_id.store(++s.id, std::memory_order_release);
  }
  join(thread_state());  // this thread's first tax counts from here
  g_profiling = true;
  refresh_dispatch_hook();
}

std::vector<ProfileEvent> stop() {
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mu);
    FASTT_CHECK(s.running, RuntimeError,
                "profiler.stop: no profiling session is running");
    s.running = false;
    g_profiling = false;
    refresh_dispatch_hook();
    buffers.swap(s.buffers);
  }
  std::vector<ProfileEvent> out;
  for (auto& b : buffers) b->read_into(out);
  return out;
}

}  // namespace profiler

KernelFn hooked_kernel(Op op, DeviceType dev, DType dtype) {
  if (profiler::g_profiling) {
    profiler::ThreadState& ts = profiler::thread_state();
    ts.t_lookup = profiler::now_ns();
    profiler::join(ts);
  }
  return profiler::kTrampolines[(int(op) * kNumDeviceTypes + int(dev)) *
                                    kNumDTypes +
                                int(dtype)];
}

void refresh_dispatch_hook() {
  // One lock for every writer, so the last one to refresh sees both flags
  // as the others left them.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  g_dispatch_hooked = profiler::g_profiling || g_capturing;
}

void run_kernel_entry(int entry, KernelArgs& a) {
  if (profiler::g_profiling) {
    profiler::run_profiled(entry, a);
  } else {
    (&g_dispatch[0][0][0])[entry](a);
  }
}

}  // namespace fastt
