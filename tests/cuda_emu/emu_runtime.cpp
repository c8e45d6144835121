// The CPU emulation of a CUDA device (tests/cuda_emu): the fiber scheduler
// that runs kernels (one fiber per CUDA thread, random order between
// barriers, blocks in random order), and the runtime API of
// include/cuda_runtime.h over host memory. Launch errors (bad config,
// barrier deadlock, shuffle from an exited lane, a bad CUB call) become a
// pending cudaErrorLaunchFailure that cudaGetLastError reports with a
// message saying what went wrong. x86_64 + GCC only (hand-written context
// switch: swapcontext's signal-mask syscall made runs 50x slower).
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cub/emu_cub.h"
#include "emu_device.h"

// FASTT_EMU_ASAN builds: fiber switches are announced to ASan, shared
// memory is exact-size heap blocks (see tests/cuda_emu/README.md).
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#else
#define EMU_ASAN 0
#endif

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

// ------------------------------------------------------- context switch --
// emu_switch(&save_sp, new_sp): saves callee-saved registers, MXCSR and the
// x87 control word on the current stack, stores the stack pointer in
// *save_sp, and resumes the context whose stack pointer is new_sp.
extern "C" void emu_switch(void** save_sp, void* new_sp);
asm(R"(
  .text
  .globl emu_switch
  .type emu_switch, @function
emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size emu_switch, .-emu_switch
)");

namespace emu {

// ------------------------------------------------------------ counters --
// Every emulated runtime call, launch (also per kernel name) and CUB call
// is counted with a relaxed atomic, so tests can assert how many runtime
// calls an op's host path makes (fastt_emu_counters_json below).
bool g_null_kernels = [] {
  const char* s = std::getenv("FASTT_EMU_NULL_KERNELS");
  return s && *s && std::strcmp(s, "0") != 0;
}();

namespace {
#define FASTT_EMU_APIS(X)                                                  \
  X(cudaGetDeviceCount) X(cudaSetDevice) X(cudaGetDevice)                  \
  X(cudaGetDeviceProperties) X(cudaDeviceSynchronize)                      \
  X(cudaDeviceGetStreamPriorityRange) X(cudaMemGetInfo) X(cudaMalloc)      \
  X(cudaFree) X(cudaHostAlloc) X(cudaMallocHost) X(cudaFreeHost)           \
  X(cudaHostGetDevicePointer) X(cudaMemcpy) X(cudaMemcpyAsync)             \
  X(cudaMemcpyPeerAsync) X(cudaMemset) X(cudaMemsetAsync)                  \
  X(cudaStreamCreate) X(cudaStreamCreateWithFlags)                         \
  X(cudaStreamCreateWithPriority) X(cudaStreamDestroy)                     \
  X(cudaStreamGetPriority) X(cudaStreamQuery) X(cudaStreamSynchronize)     \
  X(cudaStreamWaitEvent) X(cudaEventCreate) X(cudaEventCreateWithFlags)    \
  X(cudaEventDestroy) X(cudaEventRecord) X(cudaEventQuery)                 \
  X(cudaEventSynchronize) X(cudaEventElapsedTime) X(cudaGetLastError)      \
  X(cudaPeekAtLastError) X(cudaGetErrorString) X(cudaGetErrorName)         \
  X(memcpy_HostToHost) X(memcpy_HostToDevice) X(memcpy_DeviceToHost)       \
  X(memcpy_DeviceToDevice) X(memcpy_Default) X(launch) X(cub)            \
  X(cudaStreamBeginCapture) X(cudaStreamEndCapture)                        \
  X(cudaStreamIsCapturing) X(cudaGraphInstantiate) X(cudaGraphLaunch)      \
  X(cudaGraphExecDestroy) X(cudaGraphDestroy)
#define FASTT_EMU_ENUM(n) k_##n,
enum Api { FASTT_EMU_APIS(FASTT_EMU_ENUM) kNumApis };
#undef FASTT_EMU_ENUM
#define FASTT_EMU_NAME(n) #n,
const char* const kApiNames[kNumApis] = {FASTT_EMU_APIS(FASTT_EMU_NAME)};
#undef FASTT_EMU_NAME
constexpr Api kLaunch = k_launch, kCub = k_cub;

std::atomic<uint64_t> g_api_counts[kNumApis];

inline void count(Api a) {
  g_api_counts[a].fetch_add(1, std::memory_order_relaxed);
}

// Counts per string literal (kernel or CUB algorithm name): a lock-free
// open-addressing table keyed by the literal's address; the same name at
// two addresses (two translation units) is merged when read.
struct NameTable {
  static constexpr size_t kSlots = 2048;
  std::atomic<const char*> key[kSlots];
  std::atomic<uint64_t> n[kSlots];
  std::atomic<uint64_t> overflow;
};
NameTable g_kernel_counts, g_cub_counts;

void count_name_add(NameTable& t, const char* name, int64_t v) {
  size_t h = size_t((uintptr_t(name) >> 3) * 0x9e3779b97f4a7c15ull >> 40);
  for (size_t i = 0; i < NameTable::kSlots; ++i, ++h) {
    const size_t j = h % NameTable::kSlots;
    const char* k = t.key[j].load(std::memory_order_acquire);
    if (!k) {
      const char* expect = nullptr;
      if (t.key[j].compare_exchange_strong(expect, name) || expect == name) {
        t.n[j].fetch_add(uint64_t(v), std::memory_order_relaxed);
        return;
      }
      k = expect;
    }
    if (k == name) {
      t.n[j].fetch_add(uint64_t(v), std::memory_order_relaxed);
      return;
    }
  }
  t.overflow.fetch_add(uint64_t(v), std::memory_order_relaxed);
}

inline void count_name(NameTable& t, const char* name) {
  count_name_add(t, name, 1);
}

void reset_names(NameTable& t) {
  for (auto& v : t.n) v.store(0, std::memory_order_relaxed);
  t.overflow.store(0, std::memory_order_relaxed);
}

void json_names(std::string& out, const NameTable& t) {
  std::map<std::string, uint64_t> merged;
  for (size_t j = 0; j < NameTable::kSlots; ++j) {
    const char* k = t.key[j].load(std::memory_order_acquire);
    const uint64_t v = t.n[j].load(std::memory_order_relaxed);
    if (k && v) merged[k] += v;
  }
  if (const uint64_t o = t.overflow.load(std::memory_order_relaxed))
    merged["(table full)"] += o;
  out += "{";
  bool first = true;
  for (const auto& kv : merged) {
    out += (first ? "\"" : ", \"") + kv.first +
           "\": " + std::to_string(kv.second);
    first = false;
  }
  out += "}";
}

constexpr int kMaxThreads = 1024;
constexpr size_t kStack = 256 << 10;  // per fiber, plus a guard page
constexpr size_t kGuard = 4096;
constexpr size_t kDynSmem = 48 << 10;  // no kernel opts into more

struct Barrier {
  int expected = 0, count = 0;
  uint64_t gen = 0;
};

struct Fiber {
  void* sp = nullptr;
  char* stack = nullptr;  // lowest usable byte
  bool done = false;
  Barrier* wait = nullptr;
  uint64_t wait_gen = 0;
  void* asan_fake = nullptr;  // ASan's fake-stack handle while switched out
};

struct Warp {
  Barrier bar;
  int size = 0;
  uint32_t exited = 0;
  alignas(16) unsigned char buf[32][32];
};

// Launch state (one launch at a time: g_launch_mutex).
std::recursive_mutex g_launch_mutex;
Fiber g_fibers[kMaxThreads];
char* g_stack_pool = nullptr;
void* g_sched_sp = nullptr;
int g_cur = -1;
Barrier g_block_bar;
Warp g_warps[kMaxThreads / 32];
uint64_t g_block_gen = 1;
void (*g_body)(void*) = nullptr;
void* g_ctx = nullptr;
bool g_failed = false;
std::string g_fail_msg;
const char* g_name = "";
#if EMU_ASAN
// Dynamic shared memory: a heap block of the launch's exact size.
unsigned char* g_dyn_smem = nullptr;
// The scheduler's stack, as ASan reports it when a fiber starts/resumes.
const void* g_sched_bottom = nullptr;
size_t g_sched_size = 0;
void* g_sched_fake = nullptr;
#else
alignas(64) unsigned char g_dyn_smem[kDynSmem];
#endif
uint64_t g_rng = [] {
  const char* s = std::getenv("FASTT_EMU_SEED");
  const uint64_t v = s ? std::strtoull(s, nullptr, 10) : 0;
  return 0x9e3779b97f4a7c15ull ^ (v * 0xbf58476d1ce4e5b9ull);
}();

// Pending error (like CUDA's: returned and cleared by cudaGetLastError).
cudaError_t g_last_error = cudaSuccess;
std::string g_last_msg;

uint64_t next_rand() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

void set_error(cudaError_t err, std::string msg) {
  if (g_last_error == cudaSuccess) {
    g_last_error = err;
    g_last_msg = std::move(msg);
  }
  if (std::getenv("FASTT_EMU_VERBOSE"))
    std::fprintf(stderr, "cuda_emu: %s\n", g_last_msg.c_str());
}

// Without the annotations ASan takes a fiber's frames for the thread
// stack's and reports false errors (and mishandles noreturn calls).
void yield_to_scheduler() {
  Fiber& f = g_fibers[g_cur];
#if EMU_ASAN
  __sanitizer_start_switch_fiber(&f.asan_fake, g_sched_bottom, g_sched_size);
#endif
  emu_switch(&f.sp, g_sched_sp);
#if EMU_ASAN
  __sanitizer_finish_switch_fiber(f.asan_fake, &g_sched_bottom,
                                  &g_sched_size);
#endif
}

void switch_to_fiber(Fiber& f) {
#if EMU_ASAN
  __sanitizer_start_switch_fiber(&g_sched_fake, f.stack, kStack);
#endif
  emu_switch(&g_sched_sp, f.sp);
#if EMU_ASAN
  __sanitizer_finish_switch_fiber(g_sched_fake, nullptr, nullptr);
#endif
}

// Stops the launch: the scheduler abandons the block's fibers.
[[noreturn]] void fail(const std::string& msg) {
  if (!g_failed) {
    g_failed = true;
    g_fail_msg = msg;
  }
  for (;;) yield_to_scheduler();
}

void complete(Barrier& b) {
  b.count = 0;
  ++b.gen;
}

void barrier_wait(Barrier& b) {
  if (++b.count >= b.expected) {
    complete(b);
    return;
  }
  Fiber& f = g_fibers[g_cur];
  f.wait = &b;
  f.wait_gen = b.gen;
  yield_to_scheduler();
}

void thread_exit() {
  const int t = g_cur;
  g_fibers[t].done = true;
  // Exited threads no longer hold back __syncthreads (as on the hardware),
  // but one exiting while others wait is counted (FASTT_EMU_VERBOSE).
  if (g_block_bar.count > 0 && std::getenv("FASTT_EMU_VERBOSE")) {
    static std::set<std::string> seen;
    if (seen.insert(g_name).second)
      std::fprintf(stderr,
                   "cuda_emu: kernel %s: a thread exited while others wait "
                   "in __syncthreads (undefined by the CUDA guide)\n",
                   g_name);
  }
  if (--g_block_bar.expected > 0 && g_block_bar.count > 0 &&
      g_block_bar.count >= g_block_bar.expected)
    complete(g_block_bar);
  Warp& w = g_warps[t / 32];
  w.exited |= 1u << (t % 32);
  if (--w.bar.expected > 0 && w.bar.count > 0 &&
      w.bar.count >= w.bar.expected)
    complete(w.bar);
}

[[noreturn]] void fiber_entry() {
#if EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &g_sched_bottom, &g_sched_size);
#endif
  g_body(g_ctx);
  thread_exit();
  for (;;) yield_to_scheduler();
}

void ensure_stacks() {
  if (g_stack_pool) return;
  const size_t per = kStack + kGuard;
  void* p = mmap(nullptr, per * kMaxThreads, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("cuda_emu: mmap of fiber stacks");
    std::abort();
  }
  g_stack_pool = static_cast<char*>(p);
  for (int t = 0; t < kMaxThreads; ++t) {
    char* base = g_stack_pool + size_t(t) * per;
    mprotect(base, kGuard, PROT_NONE);  // overflow faults, not corrupts
    g_fibers[t].stack = base + kGuard;
  }
}

void start_fiber(int t) {
  Fiber& f = g_fibers[t];
  f.done = false;
  f.wait = nullptr;
  // Initial frame popped by emu_switch: mxcsr/fpucw, 6 registers, then
  // the return address fiber_entry (entered with rsp % 16 == 8).
  uint64_t* top = reinterpret_cast<uint64_t*>(f.stack + kStack);
#if EMU_ASAN
  // fiber_entry never returns, so ASan's poison of its frame (and of the
  // frames it inlined) outlives the thread: clear it for the next one.
  __asan_unpoison_memory_region(f.stack + kStack - 4096, 4096);
#endif
  --top;  // fiber_entry's (never used) return address
  top[0] = 0;
  --top;  // 16-aligned: after the ret, rsp % 16 == 8 as after a call
  top[0] = reinterpret_cast<uint64_t>(&fiber_entry);
  top -= 6;
  for (int k = 0; k < 6; ++k) top[k] = 0;
  --top;
  const uint32_t mxcsr = 0x1f80, fpucw = 0x037f;
  std::memcpy(reinterpret_cast<char*>(top), &mxcsr, 4);
  std::memcpy(reinterpret_cast<char*>(top) + 4, &fpucw, 4);
  f.sp = top;
}

void run_block(int nt, dim3 block, uint3 bidx, size_t smem) {
  ++g_block_gen;
  if (smem) poison(g_dyn_smem, smem);
  g_block_bar = Barrier();
  g_block_bar.expected = nt;
  for (int w = 0; w * 32 < nt; ++w) {
    Warp& wp = g_warps[w];
    wp.bar = Barrier();
    wp.size = std::min(32, nt - 32 * w);
    wp.bar.expected = wp.size;
    wp.exited = 0;
  }
  for (int t = 0; t < nt; ++t) start_fiber(t);
  blockIdx = bidx;
  static std::vector<int> order;
  order.resize(size_t(nt));
  for (int t = 0; t < nt; ++t) order[size_t(t)] = t;
  int live = nt;
  while (live > 0) {
    // A fresh random order every round: a missing barrier shows up as a
    // wrong result rather than passing by luck of a fixed order.
    for (int k = nt - 1; k > 0; --k)
      std::swap(order[size_t(k)], order[next_rand() % uint64_t(k + 1)]);
    bool ran = false;
    for (int t : order) {
      Fiber& f = g_fibers[t];
      if (f.done) continue;
      if (f.wait && f.wait->gen == f.wait_gen) continue;
      f.wait = nullptr;
      ran = true;
      g_cur = t;
      threadIdx = uint3{unsigned(t) % block.x,
                        unsigned(t) / block.x % block.y,
                        unsigned(t) / (block.x * block.y)};
      switch_to_fiber(f);
      if (g_failed) return;
      if (f.done) --live;
    }
    if (!ran && live > 0) {
      int at_block = 0, at_warp = 0;
      for (int t = 0; t < nt; ++t) {
        if (g_fibers[t].done) continue;
        if (g_fibers[t].wait == &g_block_bar) ++at_block;
        else ++at_warp;
      }
      g_failed = true;
      g_fail_msg = "deadlock: " + std::to_string(at_block) +
                   " thread(s) wait in __syncthreads and " +
                   std::to_string(at_warp) +
                   " in a warp shuffle/sync that can never complete "
                   "(divergent barrier, or a shuffle with exited lanes)";
      return;
    }
  }
}

// Why launch config c is invalid on the GPU ("" if it is valid).
std::string config_error(const Config& c) {
  const dim3 g = c.grid, b = c.block;
  const uint64_t nt = uint64_t(b.x) * b.y * b.z;
  std::string bad;
  if (g.x == 0 || g.y == 0 || g.z == 0 || nt == 0)
    bad = "empty grid or block";
  else if (nt > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64)
    bad = "block of " + std::to_string(nt) + " threads (max 1024)";
  else if (g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    bad = "grid too large";
  else if (c.max_threads && nt > uint64_t(c.max_threads))
    bad = "block of " + std::to_string(nt) +
          " threads exceeds __launch_bounds__(" +
          std::to_string(c.max_threads) + ")";
  else if (c.smem > kDynSmem)
    bad = "dynamic shared memory " + std::to_string(c.smem) +
          " bytes > 48 KiB without cudaFuncSetAttribute";
  return bad;
}

bool check_config(const Config& c, const char* name) {
  std::string bad = config_error(c);
  if (bad.empty()) return true;
  set_error(cudaErrorInvalidConfiguration,
            std::string("launch of ") + name + ": " + bad);
  return false;
}
}  // namespace

void count_launch(const Config& c, const char* name) {
  count(kLaunch);
  count_name(g_kernel_counts, name);
  if (g_null_kernels) check_config(c, name);
}

void count_cub(const char* name) {
  count(kCub);
  count_name(g_cub_counts, name);
}

#if EMU_ASAN
namespace {
// The launch's dynamic shared memory block (exact size) and, when a launch
// failed, its abandoned fibers' stack frames: ASan's redzone poison there
// would otherwise show as false errors in later launches.
struct AsanLaunch {
  int nt;
  unsigned char* prev = g_dyn_smem;
  AsanLaunch(size_t smem, int n) : nt(n) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, smem ? smem : 1) != 0) std::abort();
    g_dyn_smem = static_cast<unsigned char*>(p);
  }
  ~AsanLaunch() {
    std::free(g_dyn_smem);
    g_dyn_smem = prev;
    if (!g_failed) return;
    for (int t = 0; t < nt; ++t)
      if (!g_fibers[t].done)
        __asan_unpoison_memory_region(g_fibers[t].stack, kStack);
  }
};
}  // namespace
#endif

void run_grid(const Config& c, const char* name, void (*body)(void*),
              void* ctx) {
  std::lock_guard<std::recursive_mutex> lock(g_launch_mutex);
  if (!check_config(c, name)) return;
#if EMU_ASAN
  AsanLaunch asan_launch(c.smem, int(uint64_t(c.block.x) * c.block.y *
                                     c.block.z));
#endif
  const dim3 g = c.grid, b = c.block;
  const uint64_t nt = uint64_t(b.x) * b.y * b.z;
  ensure_stacks();
  gridDim = g;
  blockDim = b;
  g_body = body;
  g_ctx = ctx;
  g_name = name;
  g_failed = false;
  const uint64_t nblocks = uint64_t(g.x) * g.y * g.z;
  // Blocks in a random order (they may run in any order on a GPU).
  const uint64_t start = nblocks > 1 ? next_rand() % nblocks : 0;
  const bool reverse = next_rand() & 1;
  for (uint64_t k = 0; k < nblocks; ++k) {
    uint64_t i = (start + (reverse ? nblocks - 1 - k : k)) % nblocks;
    const uint3 bi{unsigned(i % g.x), unsigned(i / g.x % g.y),
                   unsigned(i / (uint64_t(g.x) * g.y))};
    run_block(int(nt), b, bi, c.smem);
    if (g_failed) {
      set_error(cudaErrorLaunchFailure,
                std::string("kernel ") + name + " (block " +
                    std::to_string(bi.x) + "," + std::to_string(bi.y) +
                    "," + std::to_string(bi.z) + " of " +
                    std::to_string(g.x) + "x" + std::to_string(g.y) + "x" +
                    std::to_string(g.z) + ", " + std::to_string(nt) +
                    " threads): " + g_fail_msg);
      return;
    }
  }
}

void syncthreads() { barrier_wait(g_block_bar); }

int lane_id() { return g_cur % 32; }

void shfl(void* out, const void* in, size_t n, int src) {
  const int lane = g_cur % 32;
  Warp& w = g_warps[g_cur / 32];
  std::memcpy(w.buf[lane], in, n);
  barrier_wait(w.bar);
  if (src == lane) {
    std::memcpy(out, in, n);
  } else if (src < 0 || src >= w.size) {
    fail("warp shuffle reads lane " + std::to_string(src) +
         " which does not exist (warp of " + std::to_string(w.size) +
         " threads)");
  } else if (w.exited & (1u << src)) {
    fail("warp shuffle reads lane " + std::to_string(src) +
         " which has exited (undefined on the GPU)");
  } else {
    std::memcpy(out, w.buf[src], n);
  }
  barrier_wait(w.bar);
}

uint64_t block_generation() { return g_block_gen; }
void poison(void* p, size_t n) { std::memset(p, 0xff, n); }
void* dynamic_smem() { return g_dyn_smem; }
#if EMU_ASAN
void* shared_block(size_t n) {
  void* p = nullptr;
  if (posix_memalign(&p, 16, n) != 0) std::abort();
  return p;
}
#endif

// ---------------------------------------------------------- memory map --
namespace {
std::mutex g_mem_mutex;
std::map<uintptr_t, size_t> g_device_blocks;  // start -> bytes
// Pinned host blocks allocated with cudaHostAllocMapped: kernels may take
// pointers into them (zero-copy), copies still see them as host memory.
std::map<uintptr_t, size_t> g_mapped_blocks;

bool in_blocks(const std::map<uintptr_t, size_t>& m, uintptr_t a,
               size_t n) {
  auto it = m.upper_bound(a);
  if (it == m.begin()) return false;
  --it;
  return a >= it->first && a + n <= it->first + it->second;
}
}  // namespace

bool is_device_range(const void* p, size_t n) {
  if (!p) return n == 0;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  auto it = g_device_blocks.upper_bound(a);
  if (it == g_device_blocks.begin()) return false;
  --it;
  return a >= it->first && a + n <= it->first + it->second;
}

bool is_device_ptr(const void* p) {
  if (!p) return true;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  if (in_blocks(g_mapped_blocks, a, 1)) return true;
  auto it = g_device_blocks.upper_bound(a);
  if (it == g_device_blocks.begin()) return false;
  --it;
  return a <= it->first + it->second;
}

void host_pointer_arg(const char* name, int k) {
  set_error(cudaErrorLaunchFailure,
            std::string("kernel ") + name + ": argument " +
                std::to_string(k) +
                " is a host pointer (not device memory): it would fault "
                "on the GPU");
}

cudaError_t cub_fail(const char* what) {
  set_error(cudaErrorInvalidValue, std::string("cub: ") + what);
  return cudaErrorInvalidValue;
}

}  // namespace emu

// ------------------------------------------------------------ runtime --
using emu::g_last_error;
using emu::g_last_msg;

namespace {
struct EmuEvent {
  bool timing;
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};
struct EmuStream {
  int priority;
};
int g_device = 0;
// The emulated device's capacity (so out-of-memory paths can be tested).
constexpr size_t kCapacity = size_t(4) << 30;
size_t g_used = 0;  // under emu::g_mem_mutex

cudaError_t fail_call(cudaError_t err, const std::string& msg) {
  emu::set_error(err, msg);
  return err;
}
// Asynchronous errors of earlier launches surface at the next sync point.
cudaError_t pending() { return g_last_error; }

// ---- stream capture (one at a time) ----
struct EmuGraph {
  std::vector<std::function<void()>> ops;
};
struct CaptureState {
  cudaStream_t stream = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;  // the capturing thread
  std::vector<std::function<void()>> ops;
  bool invalid = false;
  std::string why;  // what invalidated it
};
std::mutex g_capture_mutex;
CaptureState g_cap;  // under g_capture_mutex

// A call that would synchronize with the host while a capture runs fails
// and invalidates the capture (cudaStreamEndCapture then says so): from
// any thread in the global mode, from the capturing thread in the
// thread-local one; in the relaxed mode only waiting on the capturing
// stream itself.
// `on`: a stream the call waits for or queries (other streams than the
// capturing one and the legacy default stream are allowed).
bool refused_in_capture(const char* what, const cudaStream_t* on = nullptr) {
  if (!emu::g_capture_active) return false;
  std::lock_guard<std::mutex> lock(g_capture_mutex);
  if (!emu::g_capture_active) return false;
  if (on && *on != nullptr && *on != g_cap.stream) return false;
  const bool own = on && *on == g_cap.stream;
  if (!own && g_cap.mode == cudaStreamCaptureModeRelaxed) return false;
  if (!own && g_cap.mode == cudaStreamCaptureModeThreadLocal &&
      std::this_thread::get_id() != g_cap.thread)
    return false;
  if (!g_cap.invalid) g_cap.why = what;
  g_cap.invalid = true;
  emu::set_error(cudaErrorStreamCaptureUnsupported,
                 std::string(what) +
                     ": operation not permitted when stream is capturing");
  return true;
}
// Bodies shared by a call and its shorthands (each call counts once).
cudaError_t host_alloc(void** p, size_t nbytes, unsigned flags);
cudaError_t memset_async(void* p, int v, size_t n, cudaStream_t);
cudaError_t stream_create(cudaStream_t* s, unsigned flags, int priority);
cudaError_t event_create(cudaEvent_t* e, unsigned flags);
}  // namespace

#define EMU_COUNT(name) emu::count(emu::k_##name)

std::atomic<bool> emu::g_capture_active{false};

bool emu::defer(cudaStream_t stream, std::function<void()> op) {
  std::lock_guard<std::mutex> lock(g_capture_mutex);
  if (!g_capture_active) return false;
  if (stream == g_cap.stream) {
    if (!g_cap.invalid) g_cap.ops.push_back(std::move(op));
    return true;
  }
  if (stream == nullptr && g_cap.mode != cudaStreamCaptureModeRelaxed &&
      (g_cap.mode == cudaStreamCaptureModeGlobal ||
       std::this_thread::get_id() == g_cap.thread)) {
    if (!g_cap.invalid) g_cap.why = "work queued on the legacy stream";
    g_cap.invalid = true;
    set_error(cudaErrorStreamCaptureImplicit,
              "work queued on the legacy default stream while a stream is "
              "capturing");
    return true;
  }
  return false;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                   cudaStreamCaptureMode mode) {
  EMU_COUNT(cudaStreamBeginCapture);
  if (s == nullptr)
    return fail_call(cudaErrorStreamCaptureUnsupported,
                     "cudaStreamBeginCapture: the legacy default stream "
                     "cannot be captured");
  std::lock_guard<std::mutex> lock(g_capture_mutex);
  if (emu::g_capture_active)
    return fail_call(cudaErrorIllegalState,
                     "cudaStreamBeginCapture: the emulator captures one "
                     "stream at a time");
  g_cap = CaptureState();
  g_cap.stream = s;
  g_cap.mode = mode;
  g_cap.thread = std::this_thread::get_id();
  emu::g_capture_active = true;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  EMU_COUNT(cudaStreamEndCapture);
  std::lock_guard<std::mutex> lock(g_capture_mutex);
  *graph = nullptr;
  if (!emu::g_capture_active || s != g_cap.stream)
    return fail_call(cudaErrorIllegalState,
                     "cudaStreamEndCapture: the stream is not capturing");
  emu::g_capture_active = false;
  const bool invalid = g_cap.invalid;
  const std::string why = g_cap.why;
  std::vector<std::function<void()>> ops = std::move(g_cap.ops);
  g_cap = CaptureState();
  if (invalid)
    return fail_call(cudaErrorStreamCaptureInvalidated,
                     "cudaStreamEndCapture: the capture was invalidated by "
                     "an operation not permitted while capturing (" + why +
                         ")");
  *graph = reinterpret_cast<cudaGraph_t>(new EmuGraph{std::move(ops)});
  return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t s,
                                  cudaStreamCaptureStatus* status) {
  EMU_COUNT(cudaStreamIsCapturing);
  std::lock_guard<std::mutex> lock(g_capture_mutex);
  *status = !emu::g_capture_active || s != g_cap.stream
                ? cudaStreamCaptureStatusNone
                : (g_cap.invalid ? cudaStreamCaptureStatusInvalidated
                                 : cudaStreamCaptureStatusActive);
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long) {
  EMU_COUNT(cudaGraphInstantiate);
  if (!graph)
    return fail_call(cudaErrorInvalidValue, "cudaGraphInstantiate: null");
  *exec = reinterpret_cast<cudaGraphExec_t>(
      new EmuGraph(*reinterpret_cast<EmuGraph*>(graph)));
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  EMU_COUNT(cudaGraphLaunch);
  if (!exec)
    return fail_call(cudaErrorInvalidResourceHandle, "cudaGraphLaunch");
  EmuGraph* g = reinterpret_cast<EmuGraph*>(exec);
  if (emu::g_capture_active &&
      emu::defer(s, [ops = g->ops]() mutable {  // a copy: exec may die
        for (auto& op : ops) op();
      }))
    return pending();
  for (auto& op : g->ops) op();
  return pending();
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  EMU_COUNT(cudaGraphExecDestroy);
  delete reinterpret_cast<EmuGraph*>(exec);
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  EMU_COUNT(cudaGraphDestroy);
  delete reinterpret_cast<EmuGraph*>(graph);
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  EMU_COUNT(cudaGetDeviceCount);
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  EMU_COUNT(cudaSetDevice);
  if (device != 0) return fail_call(cudaErrorInvalidDevice, "cudaSetDevice");
  g_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  EMU_COUNT(cudaGetDevice);
  *device = g_device;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  EMU_COUNT(cudaGetDeviceProperties);
  if (device != 0)
    return fail_call(cudaErrorInvalidDevice, "cudaGetDeviceProperties");
  std::memset(p, 0, sizeof(*p));
  std::snprintf(p->name, sizeof(p->name), "fastt CPU emulation");
  p->totalGlobalMem = kCapacity;
  p->sharedMemPerBlock = 48 << 10;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = p->maxGridSize[2] = 65535;
  p->major = 9;
  p->minor = 0;
  // Small, so grid-stride loops run several rounds on test sizes.
  const char* sm = std::getenv("FASTT_EMU_SM_COUNT");
  p->multiProcessorCount = sm ? std::max(1, std::atoi(sm)) : 2;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
  EMU_COUNT(cudaDeviceSynchronize);
  if (refused_in_capture("cudaDeviceSynchronize"))
    return cudaErrorStreamCaptureUnsupported;
  return pending();
}
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  EMU_COUNT(cudaDeviceGetStreamPriorityRange);
  *least = 0;
  *greatest = -5;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  EMU_COUNT(cudaMemGetInfo);
  std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
  *total_bytes = kCapacity;
  *free_bytes = kCapacity - g_used;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t nbytes) {
  EMU_COUNT(cudaMalloc);
  const size_t n = (nbytes + 255) / 256 * 256;
  {
    std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
    if (g_used + n > kCapacity) return cudaErrorMemoryAllocation;
    g_used += n;
  }
  // Exactly nbytes (256-aligned like cudaMalloc's): under ASan the
  // redzone starts right at the buffer's end.
  void* q = nullptr;
  if (posix_memalign(&q, 256, nbytes ? nbytes : 1) != 0) q = nullptr;
  if (!q) {
    std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
    g_used -= n;
    return cudaErrorMemoryAllocation;
  }
  // Fresh device memory is garbage: NaN / -1 bytes (the first 64 MiB).
  emu::poison(q, std::min(nbytes, size_t(64) << 20));
  {
    std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
    emu::g_device_blocks[reinterpret_cast<uintptr_t>(q)] = nbytes;
  }
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  EMU_COUNT(cudaFree);
  if (!p) return cudaSuccess;
  if (refused_in_capture("cudaFree")) return cudaErrorStreamCaptureUnsupported;
  {
    std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
    auto it = emu::g_device_blocks.find(reinterpret_cast<uintptr_t>(p));
    if (it == emu::g_device_blocks.end())
      return fail_call(cudaErrorInvalidValue, "cudaFree of a non-device "
                                              "pointer");
    g_used -= (it->second + 255) / 256 * 256;
    emu::g_device_blocks.erase(it);
  }
  std::free(p);
  return cudaSuccess;
}
namespace {
cudaError_t host_alloc(void** p, size_t nbytes, unsigned flags) {
  *p = std::aligned_alloc(4096, (nbytes + 4095) / 4096 * 4096);
  if (!*p) return cudaErrorMemoryAllocation;
  if (flags & cudaHostAllocMapped) {
    std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
    emu::g_mapped_blocks[reinterpret_cast<uintptr_t>(*p)] = nbytes;
  }
  return cudaSuccess;
}
}  // namespace
cudaError_t cudaHostAlloc(void** p, size_t nbytes, unsigned flags) {
  EMU_COUNT(cudaHostAlloc);
  return host_alloc(p, nbytes, flags);
}
cudaError_t cudaHostGetDevicePointer(void** pdev, void* phost, unsigned) {
  EMU_COUNT(cudaHostGetDevicePointer);
  std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
  if (!emu::in_blocks(emu::g_mapped_blocks,
                      reinterpret_cast<uintptr_t>(phost), 1))
    return cudaErrorInvalidValue;
  *pdev = phost;  // one address space, as with unified addressing
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, size_t nbytes) {
  EMU_COUNT(cudaMallocHost);
  return host_alloc(p, nbytes, 0);
}
cudaError_t cudaFreeHost(void* p) {
  EMU_COUNT(cudaFreeHost);
  {
    std::lock_guard<std::mutex> lock(emu::g_mem_mutex);
    emu::g_mapped_blocks.erase(reinterpret_cast<uintptr_t>(p));
  }
  std::free(p);
  return cudaSuccess;
}

namespace {
// A copy's pointers must be on the sides its kind says (a wrong kind is a
// real bug that unified addressing would hide).
cudaError_t checked_copy(void* dst, const void* src, size_t n,
                         cudaMemcpyKind kind, const char* what) {
  emu::count(kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault
                 ? emu::Api(emu::k_memcpy_HostToHost + int(kind))
                 : emu::k_memcpy_Default);
  if (n == 0) return pending();
  if (emu::g_null_kernels) {  // no pointer check: it is emulator cost
    std::memmove(dst, src, n);
    return pending();
  }
  const bool dd = emu::is_device_range(dst, n);
  const bool sd = emu::is_device_range(src, n);
  bool ok = true;
  switch (kind) {
    case cudaMemcpyHostToDevice: ok = dd && !sd; break;
    case cudaMemcpyDeviceToHost: ok = sd && !dd; break;
    case cudaMemcpyDeviceToDevice: ok = sd && dd; break;
    case cudaMemcpyHostToHost: ok = !sd && !dd; break;
    default: break;
  }
  if (!ok)
    return fail_call(cudaErrorInvalidValue,
                     std::string(what) + ": pointers (src " +
                         (sd ? "device" : "host") + ", dst " +
                         (dd ? "device" : "host") + ", " +
                         std::to_string(n) +
                         " bytes) do not match the copy kind " +
                         std::to_string(int(kind)));
  std::memmove(dst, src, n);
  return pending();
}
}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n,
                       cudaMemcpyKind kind) {
  EMU_COUNT(cudaMemcpy);
  if (refused_in_capture("cudaMemcpy"))
    return cudaErrorStreamCaptureUnsupported;
  return checked_copy(dst, src, n, kind, "cudaMemcpy");
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n,
                            cudaMemcpyKind kind, cudaStream_t s) {
  EMU_COUNT(cudaMemcpyAsync);
  if (emu::g_capture_active && emu::defer(s, [=] {
        checked_copy(dst, src, n, kind, "cudaMemcpyAsync");
      }))
    return pending();
  return checked_copy(dst, src, n, kind, "cudaMemcpyAsync");
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int, const void* src, int,
                                size_t n, cudaStream_t s) {
  EMU_COUNT(cudaMemcpyPeerAsync);
  if (emu::g_capture_active && emu::defer(s, [=] {
        checked_copy(dst, src, n, cudaMemcpyDeviceToDevice,
                     "cudaMemcpyPeerAsync");
      }))
    return pending();
  return checked_copy(dst, src, n, cudaMemcpyDeviceToDevice,
                      "cudaMemcpyPeerAsync");
}
cudaError_t cudaMemset(void* p, int v, size_t n) {
  EMU_COUNT(cudaMemset);
  if (refused_in_capture("cudaMemset"))
    return cudaErrorStreamCaptureUnsupported;
  return memset_async(p, v, n, nullptr);
}
namespace {
cudaError_t memset_async(void* p, int v, size_t n, cudaStream_t s) {
  if (n == 0) return pending();
  if (!emu::g_null_kernels && !emu::is_device_range(p, n))
    return fail_call(cudaErrorInvalidValue,
                     "cudaMemsetAsync: " + std::to_string(n) +
                         " bytes are not device memory");
  if (emu::g_capture_active &&
      emu::defer(s, [=] { std::memset(p, v, n); }))
    return pending();
  std::memset(p, v, n);
  return pending();
}
}  // namespace
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s) {
  EMU_COUNT(cudaMemsetAsync);
  return memset_async(p, v, n, s);
}

cudaError_t cudaStreamCreate(cudaStream_t* s) {
  EMU_COUNT(cudaStreamCreate);
  return stream_create(s, 0, 0);
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags) {
  EMU_COUNT(cudaStreamCreateWithFlags);
  return stream_create(s, flags, 0);
}
namespace {
cudaError_t stream_create(cudaStream_t* s, unsigned,
                                         int priority) {
  *s = reinterpret_cast<cudaStream_t>(new EmuStream{priority});
  return cudaSuccess;
}
}  // namespace
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags,
                                         int priority) {
  EMU_COUNT(cudaStreamCreateWithPriority);
  return stream_create(s, flags, priority);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  EMU_COUNT(cudaStreamDestroy);
  delete reinterpret_cast<EmuStream*>(s);
  return cudaSuccess;
}
cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority) {
  EMU_COUNT(cudaStreamGetPriority);
  *priority = s ? reinterpret_cast<EmuStream*>(s)->priority : 0;
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
  EMU_COUNT(cudaStreamQuery);
  if (refused_in_capture("cudaStreamQuery", &s))
    return cudaErrorStreamCaptureUnsupported;
  return pending();
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  EMU_COUNT(cudaStreamSynchronize);
  if (refused_in_capture("cudaStreamSynchronize", &s))
    return cudaErrorStreamCaptureUnsupported;
  return pending();
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  EMU_COUNT(cudaStreamWaitEvent);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* e) {
  EMU_COUNT(cudaEventCreate);
  return event_create(e, cudaEventDefault);
}
namespace {
cudaError_t event_create(cudaEvent_t* e, unsigned flags) {
  *e = reinterpret_cast<cudaEvent_t>(
      new EmuEvent{(flags & cudaEventDisableTiming) == 0});
  return cudaSuccess;
}
}  // namespace
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags) {
  EMU_COUNT(cudaEventCreateWithFlags);
  return event_create(e, flags);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  EMU_COUNT(cudaEventDestroy);
  delete reinterpret_cast<EmuEvent*>(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  EMU_COUNT(cudaEventRecord);
  if (!e) return fail_call(cudaErrorInvalidResourceHandle, "cudaEventRecord");
  EmuEvent* ev = reinterpret_cast<EmuEvent*>(e);
  ev->recorded = true;
  ev->at = std::chrono::steady_clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t) {
  EMU_COUNT(cudaEventQuery);
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) {
  EMU_COUNT(cudaEventSynchronize);
  if (refused_in_capture("cudaEventSynchronize"))
    return cudaErrorStreamCaptureUnsupported;
  return pending();
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start,
                                 cudaEvent_t end) {
  EMU_COUNT(cudaEventElapsedTime);
  EmuEvent* a = reinterpret_cast<EmuEvent*>(start);
  EmuEvent* b = reinterpret_cast<EmuEvent*>(end);
  if (!a || !b || !a->timing || !b->timing)
    return fail_call(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime");
  if (!a->recorded || !b->recorded) return cudaErrorInvalidResourceHandle;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  EMU_COUNT(cudaGetLastError);
  const cudaError_t e = g_last_error;
  g_last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() {
  EMU_COUNT(cudaPeekAtLastError);
  return g_last_error;
}
const char* cudaGetErrorString(cudaError_t err) {
  EMU_COUNT(cudaGetErrorString);
  // The emulator's message for the error just reported (the check macros
  // call cudaGetLastError first, then this).
  static thread_local std::string s;
  if (err == cudaSuccess) return "no error";
  s = "cuda_emu: " + (g_last_msg.empty() ? std::string("error")
                                         : g_last_msg);
  return s.c_str();
}
const char* cudaGetErrorName(cudaError_t err) {
  EMU_COUNT(cudaGetErrorName);
  switch (err) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorLaunchOutOfResources:
      return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorStreamCaptureUnsupported:
      return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
      return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureImplicit:
      return "cudaErrorStreamCaptureImplicit";
  }
  return "cudaErrorUnknown";
}

// ------------------------------------------------------------- exports --
// For Python through ctypes on the loaded module (tests/python/
// test_cuda_host_path.py, bench/emu_host.py): the counters as JSON, reset,
// and null mode on/off.
#define FASTT_EMU_EXPORT extern "C" __attribute__((visibility("default")))

FASTT_EMU_EXPORT void fastt_emu_counters_reset() {
  for (auto& c : emu::g_api_counts) c.store(0, std::memory_order_relaxed);
  emu::reset_names(emu::g_kernel_counts);
  emu::reset_names(emu::g_cub_counts);
}

// Writes {"null_kernels": b, "api": {name: n}, "kernels": {name: n},
// "cub": {name: n}} (nonzero counts only) into buf, NUL-terminated and cut
// to n bytes; returns the full length, so a caller can retry bigger.
FASTT_EMU_EXPORT size_t fastt_emu_counters_json(char* buf, size_t n) {
  std::string out = std::string("{\"null_kernels\": ") +
                    (emu::g_null_kernels ? "true" : "false") +
                    ", \"api\": {";
  bool first = true;
  for (int a = 0; a < emu::kNumApis; ++a) {
    const uint64_t v = emu::g_api_counts[a].load(std::memory_order_relaxed);
    if (!v) continue;
    out += (first ? "\"" : ", \"") + std::string(emu::kApiNames[a]) +
           "\": " + std::to_string(v);
    first = false;
  }
  out += "}, \"kernels\": ";
  emu::json_names(out, emu::g_kernel_counts);
  out += ", \"cub\": ";
  emu::json_names(out, emu::g_cub_counts);
  out += "}";
  if (buf && n) {
    const size_t k = std::min(n - 1, out.size());
    std::memcpy(buf, out.data(), k);
    buf[k] = 0;
  }
  return out.size();
}

FASTT_EMU_EXPORT int fastt_emu_null_kernels() {
  return emu::g_null_kernels ? 1 : 0;
}
FASTT_EMU_EXPORT void fastt_emu_set_null_kernels(int on) {
  emu::g_null_kernels = on != 0;
}

// The emulator's own host cost per launch in null mode (what the counted
// path adds to an op's time: count_launch + the launch's cudaGetLastError),
// in ns, timed over n rounds; the rounds are not left in the counters.
FASTT_EMU_EXPORT double fastt_emu_launch_cost_ns(int n) {
  static const char kName[] = "fastt_emu_launch_cost_ns";
  const emu::Config c = emu::cfg(dim3(1), dim3(32));
  const bool was = emu::g_null_kernels;
  emu::g_null_kernels = true;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    emu::count_launch(c, kName);
    (void)cudaGetLastError();
  }
  const auto t1 = std::chrono::steady_clock::now();
  emu::g_null_kernels = was;
  const uint64_t k = uint64_t(n > 0 ? n : 0);
  emu::g_api_counts[emu::k_launch].fetch_sub(k, std::memory_order_relaxed);
  emu::g_api_counts[emu::k_cudaGetLastError].fetch_sub(
      k, std::memory_order_relaxed);
  emu::count_name_add(emu::g_kernel_counts, kName, -int64_t(k));
  return n > 0 ? std::chrono::duration<double, std::nano>(t1 - t0).count() / n
               : 0.0;
}

#if EMU_ASAN
// The ASan build's check of itself (scripts/cuda_emu_asan.sh runs it
// first): one thread of a kernel writes one float past a 10-float
// cudaMalloc buffer (which 0), past a __shared__ float[8] (1), past 32
// bytes of dynamic shared memory (2). Each must draw a heap-buffer-overflow
// report; returns -1 for another `which`.
FASTT_EMU_EXPORT int fastt_emu_asan_selftest(int which) {
  void* p = nullptr;
  if (cudaMalloc(&p, 10 * sizeof(float)) != cudaSuccess) return -1;
  float* out = static_cast<float*>(p);
  const int off = which < 0 || which > 2 ? -1 : which;
  if (off == 0) {
    emu::launch(emu::cfg(dim3(1), dim3(32)), "asan_selftest_global",
                [](float* o) {
                  if (threadIdx.x == 0) o[threadIdx.x + 10] = 1.0f;
                }, out);
  } else if (off == 1) {
    emu::launch(emu::cfg(dim3(1), dim3(32)), "asan_selftest_shared",
                [](float* o) {
                  static emu::Shared<float[8]> sh;
                  float(&s)[8] = sh.get();
                  if (threadIdx.x < 8) s[threadIdx.x] = 1.0f;
                  __syncthreads();
                  volatile unsigned past = 8;  // no -Warray-bounds
                  if (threadIdx.x == 0) s[threadIdx.x + past] = o[0];
                }, out);
  } else if (off == 2) {
    emu::launch(emu::cfg(dim3(1), dim3(32), 32), "asan_selftest_dynamic",
                [](float* o) {
                  float* d = static_cast<float*>(emu::dynamic_smem());
                  if (threadIdx.x == 0) d[threadIdx.x + 8] = o[0];
                }, out);
  }
  (void)cudaGetLastError();
  cudaFree(p);
  return off < 0 ? -1 : 0;
}
#endif
