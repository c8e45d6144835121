// Recording and replaying a step: see capture.h.
#include "capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "allocator.h"
#include "autograd.h"
#include "errors.h"
#include "ops/nn.h"
#include "storage.h"
#include "thread_state.h"

namespace fastt {

bool g_capturing = false;

namespace capture {
namespace {

static_assert(std::is_trivially_copyable_v<KernelArgs>,
              "a recording copies KernelArgs bytewise");

constexpr int kPerOp = kNumDeviceTypes * kNumDTypes;

// The ops whose kernels read the Tensors block of KernelArgs (ops.def).
constexpr bool kTensorsFamily[] = {
#define FASTT_OP(name, family) sizeof(#family) == sizeof("Tensors"),
#include "ops.def"
#undef FASTT_OP
};

// How many tensors the pointer in slot in[k] names: the Tensors rows that
// pass an array there (their layouts: ops.def, ops/nn.h's nn_args).
int64_t tensors_at(Op op, int k, const KernelArgs& a) {
  using namespace nn_args;
  switch (op) {
    case Op::cat: return k == 0 ? a.i0 : 1;
    case Op::index_select:
    case Op::gather:
    case Op::scatter:
    case Op::scatter_add:
    case Op::index_add:
    case Op::index:
    case Op::index_put: return k == 1 && a.i1 >= 0 ? a.i1 : 1;
    case Op::layer_norm: return k == 0 ? kLnN : 1;
    case Op::layer_norm_backward: return k == 0 ? kLnbN : 1;
    case Op::rms_norm: return k == 0 ? kRmsN : 1;
    case Op::rms_norm_backward: return k == 0 ? kRmsbN : 1;
    case Op::cross_entropy:
    case Op::nll_loss: return k == 0 ? kLossN : 1;
    case Op::cross_entropy_backward:
    case Op::nll_loss_backward: return k == 0 ? kLbN : 1;
    case Op::flash_attention: return k == 0 ? kFaFwdN : 1;
    case Op::flash_attention_backward: return k == 0 ? kFbN : 1;
    default: return 1;
  }
}

// Ops a recording cannot replay: their output's shape depends on the data
// (the kernel allocates it), or their arguments hold a host address (the
// optimizer steps, replayed whole by Optimizer.step's host step).
bool unrecordable(Op op) {
  switch (op) {
    case Op::masked_select:
    case Op::nonzero:
    case Op::sgd_step:
    case Op::adam_step:
    case Op::rmsprop_step:
    case Op::adagrad_step:
    case Op::adadelta_step:
    case Op::adamax_step:
    case Op::nadam_step:
    case Op::radam_step:
    case Op::asgd_step:
    case Op::rprop_step: return true;
    default: return false;
  }
}

// ---------------------------------------------------------------- pool --
// The memory of a recording: blocks handed out while it records and given
// back to it (never to the caching allocator) when their storage dies, so
// no address a recorded kernel uses can belong to anything else later.
// While it records, each block's lifetimes are noted against the step
// clock (kernels and host steps recorded so far); plan() then gives the
// lifetimes that ended inside the step new places. Alive while the graph
// or any storage made from it is.
struct Pool {
  // One lifetime of a block: taken before step t0 ran, given back before
  // step t1 ran (t1 < 0: still alive when the recording ended).
  struct Life {
    char* block;
    size_t size;
    int64_t t0, t1;
    size_t offset = 0;  // in its place (plan())
  };
  Device device;  // CPU memory, or a device's (not planned)
  std::mutex mu;
  std::unordered_map<size_t, std::vector<char*>> free_blocks;
  std::vector<std::pair<char*, size_t>> blocks;  // sorted by seal()
  std::vector<std::pair<char*, size_t>> poisoned;  // see set_poison
  std::atomic<int64_t> refs{1};
  size_t bytes = 0;
  bool noting = true;            // lifetimes are noted until seal()
  std::atomic<int64_t> clock{0};  // steps recorded so far
  std::vector<Life> lives;
  std::unordered_map<char*, size_t> open;  // block -> its live Life

  static size_t rounded(size_t n) {
    const size_t a = CachingAllocator::kAlignment;
    return (std::max<size_t>(n, 1) + a - 1) / a * a;
  }
  char* take(size_t nbytes) {
    const size_t n = rounded(nbytes);
    std::lock_guard<std::mutex> lock(mu);
    std::vector<char*>& fl = free_blocks[n];
    char* p;
    if (!fl.empty()) {
      p = fl.back();
      fl.pop_back();
    } else {
      p = raw_alloc(n);
      blocks.emplace_back(p, n);
      bytes += n;
    }
    if (noting) {
      open[p] = lives.size();
      lives.push_back(Life{p, n, clock.load(std::memory_order_relaxed), -1});
    }
    return p;
  }
  void give_back(char* p, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu);
    free_blocks[rounded(nbytes)].push_back(p);
    if (!noting) return;
    auto it = open.find(p);
    if (it == open.end()) return;
    lives[it->second].t1 = clock.load(std::memory_order_relaxed);
    open.erase(it);
  }
  void seal() {
    std::lock_guard<std::mutex> lock(mu);
    noting = false;
    std::sort(blocks.begin(), blocks.end());
  }
  // The block holding p (blocks sorted), or null.
  static const std::pair<char*, size_t>* find(
      const std::vector<std::pair<char*, size_t>>& bs, const char* p) {
    auto it = std::upper_bound(
        bs.begin(), bs.end(), p,
        [](const char* q, const std::pair<char*, size_t>& b) {
          return q < b.first;
        });
    if (it == bs.begin()) return nullptr;
    --it;
    return p < it->first + it->second ? &*it : nullptr;
  }
  bool contains(const char* p) const {  // after seal()
    return find(blocks, p) != nullptr;
  }
  char* raw_alloc(size_t n) {
    if (device.is_cpu())
      return static_cast<char*>(CachingAllocator::allocate(n));
    return static_cast<char*>(
        device_hooks(device.type).allocate(n, device.index));
  }
  void raw_free(char* p, size_t n) {
    if (device.is_cpu())
      CachingAllocator::deallocate(p, n);
    else
      device_hooks(device.type).deallocate(p, n, device.index);
  }
  void unref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    for (auto& b : blocks) raw_free(b.first, b.second);
    for (auto& b : poisoned) raw_free(b.first, b.second);
    delete this;
  }
};

// Tests: blocks the plan frees are filled with 0xff bytes (NaN, -1) and
// kept instead, so a kernel argument the plan failed to move reads
// garbage instead of memory that happens to hold the right values.
std::atomic<bool> g_poison{false};

void release_to_pool(void* ctx, void* data, size_t nbytes) {
  Pool* pool = static_cast<Pool*>(ctx);
  pool->give_back(static_cast<char*>(data), nbytes);
  pool->unref();
}

void keep_memory(void*, void*, size_t) {}  // a shadow owns nothing

// Tensor metadata over memory it does not own (the recorded Tensors-family
// arguments: the memory is the pool's or a tensor the caller keeps).
Tensor shadow(const Tensor& t) {
  if (!t.defined()) return Tensor();
  Storage* s = t.storage();
  Storage* view = Storage::wrap(s->data(), s->nbytes(), s->device(),
                                &keep_memory, nullptr);
  Tensor out = Tensor::from_storage(view, t.sizes(), t.strides(),
                                    t.storage_offset(), t.dtype());
  view->decref();  // from_storage took its own reference
  return out;
}

}  // namespace

// --------------------------------------------------------------- graph --
struct KernelNode {
  KernelArgs args;
  KernelFn fn;
  int entry;
  Generator* gen = nullptr;  // random: reserve again on replay
  uint64_t blocks = 0;
  // The scalar parameters before the call and after it (a kernel may
  // report through them, like bernoulli's invalid-p flag): a replay whose
  // kernel reports something else did not do what the capture did.
  int64_t pre_i[3], post_i[3];
  double pre_f[2], post_f[2];
};

struct Step {
  KernelNode* kernel;  // null: a host step
  size_t host;
  // The first step of a run captured into device graph `graph` (an index
  // in Impl::device_graphs) that ends before step `end`; -1: none.
  int32_t graph = -1;
  uint32_t end = 0;
};

struct GradGuard {
  Tensor leaf;
  Tensor grad;  // accumulated in place: still leaf's .grad on replay
};

DeviceGraphHooks g_graph_hooks;

struct Graph::Impl {
  Pool* pool = new Pool();
  Pool* device_pool = nullptr;  // the CUDA device's memory, if any
  std::vector<void*> device_graphs;
  std::deque<KernelNode> kernels;  // stable addresses (args point inside)
  // A host step and the shadows of the tensors it is given (non-owning,
  // like the kernels' arguments: the plan may move them).
  struct Host {
    std::function<void(Tensor*)> fn;
    std::vector<Tensor> tensors;
    // Touches no tensor data (a .grad assignment): may run after the
    // device graph of a run of CUDA kernels around it.
    bool metadata_only = false;
  };
  std::vector<Host> hosts;
  std::vector<Step> steps;
  std::deque<std::unique_ptr<Tensor[]>> arrays;  // shadows, see own_tensors
  std::deque<std::vector<int64_t>> dims;
  std::vector<Tensor> touched;  // leaves and gradients the engine used
  std::vector<GradGuard> grad_guards;
  std::vector<Tensor> assigned;    // leaves whose .grad the step assigns
  std::vector<Tensor> need_none;   // leaves whose .grad must be None
  std::string reason;
  bool fullgraph = false;
  bool broken = false;
  bool backward = false;
  size_t unplanned_bytes = 0;  // the pool before plan(), 0: not planned
  size_t arena_bytes = 0;
  ~Impl() {
    for (void* dg : device_graphs) g_graph_hooks.destroy(dg);
    pool->unref();
    if (device_pool) device_pool->unref();
  }
};

struct Recorder {
  std::unique_ptr<Graph::Impl> impl;
  int depth = 0;      // inside a recorded kernel
  int suspended = 0;  // inside Suspend
  Generator* pending_gen = nullptr;
  uint64_t pending_blocks = 0;
};

namespace {

std::mutex g_count_mu;
int g_recorders = 0;

void set_recording(Recorder* r) {
  std::lock_guard<std::mutex> lock(g_count_mu);
  g_recorders += r ? 1 : -1;
  thread_state().recorder = r;
  g_capturing = g_recorders > 0;
  refresh_dispatch_hook();
}

// The recorder of this thread when it records here (not suspended, no
// break seen).
Recorder* active() {
  Recorder* r = thread_state().recorder;
  if (r == nullptr || r->suspended > 0 || r->impl->broken) return nullptr;
  return r;
}

void copy_scalars(const KernelArgs& a, int64_t* i, double* f) {
  i[0] = a.i0;
  i[1] = a.i1;
  i[2] = a.i2;
  f[0] = a.f0;
  f[1] = a.f1;
}

int64_t bits(uint64_t v) {
  int64_t i;
  std::memcpy(&i, &v, sizeof(i));
  return i;
}

// Makes node's copy of the Tensors block own what it points to: shadows
// of the tensors (one per distinct TensorImpl; an array as an array) and
// the dims list.
void own_tensors(Graph::Impl& g, KernelNode& n, Op op, const KernelArgs& a) {
  std::vector<std::pair<const TensorImpl*, Tensor*>> seen;
  auto one = [&](const Tensor& t) -> Tensor* {
    if (t.defined())
      for (auto& s : seen)
        if (s.first == t.impl()) return s.second;
    g.arrays.emplace_back(new Tensor[1]);
    Tensor* p = g.arrays.back().get();
    p[0] = shadow(t);
    if (t.defined()) seen.emplace_back(t.impl(), p);
    return p;
  };
  if (a.out) n.args.out = one(*a.out);
  if (a.out2) n.args.out2 = one(*a.out2);
  for (int k = 0; k < kMaxOperands; ++k) {
    if (!a.in[k]) continue;
    const int64_t count = tensors_at(op, k, a);
    if (count == 1) {
      n.args.in[k] = one(*a.in[k]);
      continue;
    }
    g.arrays.emplace_back(new Tensor[size_t(std::max<int64_t>(count, 1))]);
    Tensor* p = g.arrays.back().get();
    for (int64_t j = 0; j < count; ++j) p[j] = shadow(a.in[k][j]);
    n.args.in[k] = p;
  }
  if (a.dims.size() > 0) {
    g.dims.emplace_back(a.dims.begin(), a.dims.end());
    n.args.dims = IntList(g.dims.back().data(), g.dims.back().size());
  }
}

// Points the node's loop operands that named the caller's scalar_buf at
// the node's own copy.
void own_scalars(KernelNode& n, const KernelArgs& a) {
  const char* lo = &a.scalar_buf[0][0];
  const char* hi = lo + sizeof(a.scalar_buf);
  for (int k = 0; k < kMaxOperands; ++k) {
    const char* p = a.data[k];
    if (p >= lo && p < hi)
      n.args.data[k] = &n.args.scalar_buf[0][0] + (p - lo);
  }
}

[[noreturn]] FASTT_NOINLINE void throw_diverged(const KernelNode& n) {
  throw RuntimeError(fmt::format(
      "compiled step: the '{}' kernel reported a different outcome than "
      "when the step was captured (an input it checks is invalid this "
      "time, such as a probability outside [0, 1]); run the step eagerly "
      "to get the op's own error",
      op_name(Op(n.entry / kPerOp))));
}

void run_node(KernelNode& n) {
  KernelArgs& a = n.args;
  a.i0 = n.pre_i[0];
  a.i1 = n.pre_i[1];
  a.i2 = n.pre_i[2];
  a.f0 = n.pre_f[0];
  a.f1 = n.pre_f[1];
  if (n.gen) {
    const Generator::Range r = n.gen->reserve(n.blocks);
    a.i0 = bits(r.seed);
    a.i1 = bits(r.offset);
  }
  n.fn(a);
  const bool same_ints = n.gen ? a.i2 == n.post_i[2]
                               : (a.i0 == n.post_i[0] &&
                                  a.i1 == n.post_i[1] && a.i2 == n.post_i[2]);
  if (FASTT_UNLIKELY(!same_ints ||
                     std::memcmp(&a.f0, &n.post_f[0], sizeof(double)) != 0 ||
                     std::memcmp(&a.f1, &n.post_f[1], sizeof(double)) != 0))
    throw_diverged(n);
}

// ------------------------------------------------------------- planning --
// Calls fn(n, p) for each address step n uses (as check_addresses reads
// them: loop operands, the storages of the Tensors family's shadows and of
// a host step's); fn returns where that address is now, and a shadow whose
// storage moved is made again over the new address.
template <class Fn>
void for_each_address(Graph::Impl& g, Fn&& fn) {
  int64_t n = 0;
  // A step's slots may share one shadow (an in-place op's out and input):
  // each is visited once, or a second visit would map the moved address.
  std::vector<const Tensor*> seen;
  auto one = [&](Tensor* t) {
    if (!t || !t->defined() || !t->storage() || t->numel() == 0) return;
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) return;
    seen.push_back(t);
    Storage* s = t->storage();
    char* base = static_cast<char*>(s->data());
    char* to = fn(n, base);
    if (to == base) return;
    Storage* view =
        Storage::wrap(to, s->nbytes(), s->device(), &keep_memory, nullptr);
    Tensor moved = Tensor::from_storage(view, t->sizes(), t->strides(),
                                        t->storage_offset(), t->dtype());
    view->decref();
    *t = std::move(moved);
  };
  for (const Step& step : g.steps) {
    seen.clear();
    if (step.kernel == nullptr) {
      for (Tensor& t : g.hosts[step.host].tensors) one(&t);
      ++n;
      continue;
    }
    KernelArgs& a = step.kernel->args;
    const Op op = Op(step.kernel->entry / kPerOp);
    if (kTensorsFamily[int(op)]) {
      one(a.out);
      one(a.out2);
      for (int k = 0; k < kMaxOperands; ++k) {
        if (!a.in[k]) continue;
        const int64_t count = tensors_at(op, k, a);
        for (int64_t j = 0; j < count; ++j)
          one(const_cast<Tensor*>(&a.in[k][j]));
      }
    } else if (a.numel > 0) {
      const char* lo = &a.scalar_buf[0][0];
      const char* hi = lo + sizeof(a.scalar_buf);
      for (int k = 0; k < a.nops && k < kMaxOperands; ++k)
        if (a.data[k] && !(a.data[k] >= lo && a.data[k] < hi))
          a.data[k] = fn(n, a.data[k]);
    }
    ++n;
  }
}

// Lays the intermediates out by liveness. Each block lifetime that ended
// inside the step gets a place such that lifetimes that overlap in time
// never overlap in memory (largest first, at the lowest offset that
// fits): in the block of a lifetime that is still alive at the end
// (gradients the step assigns, outputs, what host steps hold), before that
// lifetime starts, or else in one arena. The recorded arguments that named
// such a lifetime move there, and the blocks that hold nothing alive any
// more go back to the allocator; the live lifetimes stay where they are.
// All or nothing: an address a step used at a time none of its block's
// lifetimes covers, or a plan that frees nothing, leaves the pool as it
// was recorded.
void plan(Graph::Impl& g) {
  Pool& pool = *g.pool;
  std::lock_guard<std::mutex> lock(pool.mu);
  std::vector<size_t> dead;
  std::unordered_map<char*, std::vector<size_t>> by_block;
  // Where dead lifetimes can go: the free time of each live lifetime's
  // block (its size, until it starts), then the arena (last, unbounded).
  struct Region {
    char* base;
    size_t size;
    int64_t until;
    std::vector<size_t> lives;
  };
  std::vector<Region> regions;
  // A live lifetime's block is free before it starts only if no host step
  // that may read anything (a Python call: an optimizer's step reading
  // last replay's .grad) runs before that: what the block held since the
  // previous replay must be there for it.
  int64_t first_opaque = int64_t(g.steps.size());
  for (size_t k = 0; k < g.steps.size(); ++k) {
    const Step& st = g.steps[k];
    if (st.kernel == nullptr && g.hosts[st.host].tensors.empty() &&
        !g.hosts[st.host].metadata_only) {
      first_opaque = int64_t(k);
      break;
    }
  }
  for (size_t i = 0; i < pool.lives.size(); ++i) {
    const Pool::Life& l = pool.lives[i];
    by_block[l.block].push_back(i);
    if (l.t1 > l.t0) dead.push_back(i);
    if (l.t1 < 0 && l.t0 > 0 && l.t0 <= first_opaque)
      regions.push_back(Region{l.block, l.size, l.t0, {}});
  }
  std::sort(regions.begin(), regions.end(),
            [](const Region& a, const Region& b) { return a.size < b.size; });
  regions.push_back(Region{nullptr, SIZE_MAX, INT64_MAX, {}});
  std::sort(dead.begin(), dead.end(), [&](size_t a, size_t b) {
    const Pool::Life& x = pool.lives[a];
    const Pool::Life& y = pool.lives[b];
    return x.size != y.size ? x.size > y.size : x.t0 < y.t0;
  });
  std::vector<int> region_of(pool.lives.size(), -1);
  size_t arena_bytes = 0;
  std::vector<std::pair<size_t, size_t>> busy;
  for (size_t i : dead) {
    Pool::Life& l = pool.lives[i];
    for (size_t r = 0; r < regions.size(); ++r) {
      Region& reg = regions[r];
      if (l.size > reg.size || l.t1 > reg.until) continue;
      busy.clear();
      for (size_t j : reg.lives) {
        const Pool::Life& o = pool.lives[j];
        if (o.t0 < l.t1 && l.t0 < o.t1)
          busy.emplace_back(o.offset, o.offset + o.size);
      }
      std::sort(busy.begin(), busy.end());
      size_t off = 0;
      for (const auto& b : busy) {
        if (b.first >= off + l.size) break;
        off = std::max(off, b.second);
      }
      if (off + l.size > reg.size) continue;
      l.offset = off;
      reg.lives.push_back(i);
      region_of[i] = int(r);
      if (reg.base == nullptr)
        arena_bytes = std::max(arena_bytes, off + l.size);
      break;
    }
  }
  size_t freed = 0;
  for (const auto& b : pool.blocks)
    if (!pool.open.count(b.first)) freed += b.second;
  if (freed == 0 || arena_bytes >= freed) return;

  // Where address p used by step n lives after the plan (the same
  // address while only checking that every address has a lifetime).
  char* arena = nullptr;
  bool applying = false, ok = true;
  auto moved = [&](int64_t n, char* p) -> char* {
    const auto* b = Pool::find(pool.blocks, p);
    if (b == nullptr) return p;
    for (size_t i : by_block[b->first]) {
      const Pool::Life& l = pool.lives[i];
      if (l.t0 > n || (l.t1 >= 0 && n >= l.t1)) continue;
      if (l.t1 < 0 || !applying) return p;  // alive at the end: stays
      const Region& reg = regions[size_t(region_of[i])];
      return (reg.base ? reg.base : arena) + l.offset + (p - b->first);
    }
    ok = false;
    return p;
  };
  for_each_address(g, moved);
  if (!ok) return;
  if (arena_bytes > 0)
    arena = static_cast<char*>(CachingAllocator::allocate(arena_bytes));
  applying = true;
  for_each_address(g, moved);

  std::vector<std::pair<char*, size_t>> kept;
  for (const auto& b : pool.blocks) {
    if (pool.open.count(b.first)) {
      kept.push_back(b);
    } else if (g_poison.load(std::memory_order_relaxed)) {
      std::memset(b.first, 0xff, b.second);
      pool.poisoned.push_back(b);
    } else {
      CachingAllocator::deallocate(b.first, b.second);
    }
  }
  if (arena) kept.emplace_back(arena, arena_bytes);
  std::sort(kept.begin(), kept.end());
  pool.blocks = std::move(kept);
  pool.free_blocks.clear();  // nothing takes from the pool any more
  g.unplanned_bytes = pool.bytes;
  pool.bytes = 0;
  for (const auto& b : pool.blocks) pool.bytes += b.second;
  g.arena_bytes = arena_bytes;
}

// Captures each run of consecutive CUDA kernels (random ones excepted:
// their counters are patched on each replay) into a device graph that the
// replay launches instead of the run's kernels. A run whose capture fails
// (a kernel that synchronizes with the host, say) replays kernel by
// kernel as before.
void capture_device_runs(Graph::Impl& g) {
  if (g_graph_hooks.begin == nullptr || g.device_pool == nullptr) return;
  auto graphable = [&g](const Step& s) {
    if (s.kernel == nullptr) return g.hosts[s.host].metadata_only;
    if (s.kernel->gen != nullptr) return false;
    const int entry = s.kernel->entry;
    return DeviceType((entry / kNumDTypes) % kNumDeviceTypes) ==
           DeviceType::CUDA;
  };
  const size_t n = g.steps.size();
  for (size_t i = 0; i < n;) {
    if (!graphable(g.steps[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && graphable(g.steps[j])) ++j;
    while (j > i && g.steps[j - 1].kernel == nullptr) --j;
    if (g.steps[i].kernel == nullptr) {  // a run starts with a kernel
      ++i;
      continue;
    }
    void* capture = g_graph_hooks.begin(g.device_pool->device.index);
    if (capture != nullptr) {
      bool ok = true;
      try {
        for (size_t k = i; k < j; ++k)
          if (g.steps[k].kernel) run_node(*g.steps[k].kernel);
      } catch (...) {
        ok = false;
      }
      void* dg = g_graph_hooks.end(capture);
      if (ok && dg) {
        g.steps[i].graph = int32_t(g.device_graphs.size());
        g.steps[i].end = uint32_t(j);
        g.device_graphs.push_back(dg);
      } else if (dg) {
        g_graph_hooks.destroy(dg);
      }
    }
    i = j;
  }
}

}  // namespace

// ------------------------------------------------------------ recording --
void begin(bool fullgraph) {
  FASTT_CHECK(thread_state().recorder == nullptr, RuntimeError,
              "compile: this thread is already capturing a step (a "
              "compiled function called while another one is captured)");
  auto* r = new Recorder();
  r->impl = std::make_unique<Graph::Impl>();
  r->impl->fullgraph = fullgraph;
  set_recording(r);
}

std::shared_ptr<Graph> end() {
  Recorder* r = thread_state().recorder;
  FASTT_CHECK(r != nullptr, RuntimeError,
              "compile: this thread is not capturing a step");
  set_recording(nullptr);
  std::unique_ptr<Graph::Impl> impl = std::move(r->impl);
  delete r;
  impl->pool->seal();
  if (impl->device_pool) impl->device_pool->seal();
  if (!impl->broken) {
    plan(*impl);
    capture_device_runs(*impl);
  }
  return std::make_shared<Graph>(std::move(impl));
}

void abort() noexcept {
  Recorder* r = thread_state().recorder;
  if (r == nullptr) return;
  set_recording(nullptr);
  delete r;
}

void thread_exit(Recorder* r) noexcept {
  std::lock_guard<std::mutex> lock(g_count_mu);
  g_recorders -= 1;
  g_capturing = g_recorders > 0;
  refresh_dispatch_hook();
  // r is leaked, not freed: its host steps may hold Python objects, and a
  // thread-exit destructor does not hold the GIL (on the main thread it
  // runs after the interpreter is gone).
  (void)r;
}

bool recording() { return active() != nullptr; }
bool in_capture() { return thread_state().recorder != nullptr; }

Suspend::Suspend()
    : active_(FASTT_UNLIKELY(g_capturing) &&
              thread_state().recorder != nullptr) {
  if (active_) ++thread_state().recorder->suspended;
}
void Suspend::release() {
  if (!active_) return;
  active_ = false;
  if (Recorder* r = thread_state().recorder) --r->suspended;
}

static void (*g_break_observer)() = nullptr;

void graph_break(const char* what) {
  Recorder* r = active();
  if (r == nullptr) return;
  Graph::Impl& g = *r->impl;
  if (g.fullgraph)
    throw RuntimeError(fmt::format(
        "compile(fullgraph=True): {} cannot be captured (a graph break: "
        "the step reads or computes data on the host, or its result's "
        "shape depends on the data); move it out of the compiled function "
        "or compile without fullgraph",
        what));
  g.broken = true;
  g.reason = what;
  if (g_break_observer != nullptr) g_break_observer();
}

void set_break_observer(void (*observer)()) { g_break_observer = observer; }

bool host_step(std::function<void()> fn) {
  Recorder* r = active();
  if (r == nullptr || r->depth > 0) return false;
  Graph::Impl& g = *r->impl;
  g.hosts.push_back(Graph::Impl::Host{
      [f = std::move(fn)](Tensor*) { f(); }, {}});
  g.steps.push_back(Step{nullptr, g.hosts.size() - 1});
  g.pool->clock.store(int64_t(g.steps.size()), std::memory_order_relaxed);
  return true;
}

void host_step(std::vector<Tensor> tensors,
               std::function<void(Tensor*)> fn) {
  Recorder* r = active();
  if (r == nullptr || r->depth > 0) return;
  Graph::Impl& g = *r->impl;
  for (Tensor& t : tensors) t = shadow(t);
  g.hosts.push_back(Graph::Impl::Host{std::move(fn), std::move(tensors)});
  g.steps.push_back(Step{nullptr, g.hosts.size() - 1});
  g.pool->clock.store(int64_t(g.steps.size()), std::memory_order_relaxed);
}

void note_reserve(Generator* gen, uint64_t blocks) {
  Recorder* r = active();
  if (r == nullptr || r->depth > 0) return;
  if (gen != &default_generator()) {
    graph_break("a random op with an explicit generator");
    return;
  }
  r->pending_gen = gen;
  r->pending_blocks = blocks;
}

Storage* pool_storage(size_t nbytes, Device device) {
  Recorder* r = active();
  if (r == nullptr) return nullptr;
  Graph::Impl& g = *r->impl;
  Pool* pool = g.pool;
  if (!device.is_cpu()) {
    if (g.device_pool == nullptr) {
      g.device_pool = new Pool();
      g.device_pool->device = device;
      g.device_pool->noting = false;  // device memory is not planned
    }
    if (g.device_pool->device != device) {
      graph_break("work on two CUDA devices");
      return nullptr;
    }
    pool = g.device_pool;
  }
  char* p = pool->take(nbytes);
  pool->refs.fetch_add(1, std::memory_order_relaxed);
  return Storage::wrap(p, nbytes, device, &release_to_pool, pool);
}

void note_grad(const Tensor& leaf, const Tensor& before,
               const Tensor& after) {
  Recorder* r = active();
  if (r == nullptr) return;
  Graph::Impl& g = *r->impl;
  g.touched.push_back(leaf);
  if (before.defined()) g.touched.push_back(before);
  if (after.is_same(before)) {
    g.grad_guards.push_back(GradGuard{leaf, before});
    return;
  }
  if (before.defined()) {  // a new sum of the old .grad (create_graph)
    graph_break("a gradient accumulated out of place (create_graph)");
    return;
  }
  Tensor l = leaf, grad = after;
  const size_t before_hosts = g.hosts.size();
  host_step([l, grad] { fastt::set_grad(l, grad); });
  if (g.hosts.size() > before_hosts) g.hosts.back().metadata_only = true;
  g.assigned.push_back(leaf);
}

void note_backward() {
  if (Recorder* r = active()) r->impl->backward = true;
}

bool record_and_run(int entry, KernelArgs& a) {
  Recorder* r = active();
  if (r == nullptr || r->depth > 0) return false;
  const Op op = Op(entry / kPerOp);
  const auto dev = DeviceType((entry / kNumDTypes) % kNumDeviceTypes);
  if (dev != DeviceType::CPU && dev != DeviceType::CUDA) {
    graph_break("work on a device other than the CPU and CUDA");
    return false;
  }
  if (unrecordable(op)) {
    graph_break(op_name(op));
    return false;
  }
  Graph::Impl& g = *r->impl;
  KernelNode& n = g.kernels.emplace_back();
  // The pool's clock counts steps (kernels and host steps) recorded so
  // far: memory taken or given back while this kernel runs is stamped
  // after it.
  g.steps.push_back(Step{&n, 0});
  g.pool->clock.store(int64_t(g.steps.size()), std::memory_order_relaxed);
  std::memcpy(static_cast<void*>(&n.args), &a, sizeof(KernelArgs));
  n.fn = (&g_dispatch[0][0][0])[entry];
  n.entry = entry;
  if (r->pending_gen) {
    n.gen = r->pending_gen;
    n.blocks = r->pending_blocks;
    r->pending_gen = nullptr;
  }
  own_scalars(n, a);
  const bool tensors = kTensorsFamily[int(op)];
  const TensorImpl* out_before = a.out ? a.out->impl() : nullptr;
  if (tensors) own_tensors(g, n, op, a);
  copy_scalars(a, n.pre_i, n.pre_f);
  ++r->depth;
  try {
    run_kernel_entry(entry, a);
  } catch (...) {
    --r->depth;
    g.kernels.pop_back();
    g.steps.pop_back();
    // Caught inside the step, the error would leave a list that does not
    // do what eager did (a check that fails, a reservation spent).
    graph_break("an error raised inside the step");
    throw;
  }
  --r->depth;
  copy_scalars(a, n.post_i, n.post_f);
  if (tensors && a.out && a.out->impl() != out_before) {
    g.kernels.pop_back();
    g.steps.pop_back();
    graph_break(op_name(op));
  }
  return true;
}

// ---------------------------------------------------------------- graph --
Graph::Graph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Graph::~Graph() = default;

bool Graph::replayable() const { return !impl_->broken; }
const std::string& Graph::break_reason() const { return impl_->reason; }
bool Graph::ran_backward() const { return impl_->backward; }
size_t Graph::num_kernels() const { return impl_->kernels.size(); }
size_t Graph::num_host_steps() const { return impl_->hosts.size(); }
size_t Graph::pool_bytes() const { return impl_->pool->bytes; }
size_t Graph::num_device_graphs() const {
  return impl_->device_graphs.size();
}
void set_device_graph_hooks(DeviceGraphHooks hooks) {
  g_graph_hooks = hooks;
}
size_t Graph::unplanned_bytes() const { return impl_->unplanned_bytes; }
size_t Graph::arena_bytes() const { return impl_->arena_bytes; }
void set_poison(bool on) { g_poison.store(on); }

std::string Graph::check_addresses(std::vector<Tensor>& known) const {
  const Impl& g = *impl_;
  for (const Tensor& t : g.touched) known.push_back(t);
  std::vector<std::pair<const char*, const char*>> ranges;
  for (const Tensor& t : known) {
    if (!t.defined() || !t.storage()) continue;
    const char* p = static_cast<const char*>(t.storage()->data());
    ranges.emplace_back(p, p + t.storage()->nbytes());
  }
  auto owned = [&](const char* p) {
    if (g.pool->contains(p)) return true;
    if (g.device_pool && g.device_pool->contains(p)) return true;
    for (const auto& r : ranges)
      if (p >= r.first && p < r.second) return true;
    return false;
  };
  int64_t bad = -1;
  for_each_address(const_cast<Impl&>(g), [&](int64_t n, char* p) {
    if (bad < 0 && p != nullptr && !owned(p)) bad = n;
    return p;
  });
  if (bad >= 0) {
    const Step& st = g.steps[size_t(bad)];
    const std::string what =
        st.kernel ? fmt::format("the '{}' kernel",
                                op_name(Op(st.kernel->entry / kPerOp)))
                  : std::string("a check replayed on the host");
    return fmt::format(
        "{} uses a tensor that is neither an input of the step nor a "
        "parameter, buffer, gradient or optimizer state of a module or "
        "optimizer it can see (pass that tensor as an argument)",
        what);
  }
  return std::string();
}

bool Graph::grads_unchanged() const {
  for (const GradGuard& gg : impl_->grad_guards)
    if (fastt::grad(gg.leaf).impl() != gg.grad.impl()) return false;
  for (const Tensor& leaf : impl_->need_none)
    if (fastt::grad(leaf).defined()) return false;
  return true;
}

void Graph::guard_assigned_grads(const std::vector<Tensor>& had_grad) {
  Impl& g = *impl_;
  g.need_none.clear();
  for (const Tensor& leaf : g.assigned) {
    bool had = false;
    for (const Tensor& t : had_grad) had = had || t.is_same(leaf);
    if (!had) g.need_none.push_back(leaf);
  }
  // The gradients read but neither assigned nor accumulated into.
  std::vector<GradGuard> read;
  for (const Tensor& leaf : had_grad) {
    const Tensor grad = fastt::grad(leaf);
    if (!grad.defined() || !grad.storage()) continue;
    bool known = false;
    for (const Tensor& t : g.assigned) known = known || t.is_same(leaf);
    for (const GradGuard& gg : g.grad_guards)
      known = known || gg.leaf.is_same(leaf);
    if (!known) read.push_back(GradGuard{leaf, grad});
  }
  if (read.empty()) return;
  std::vector<bool> used(read.size(), false);
  for_each_address(g, [&](int64_t, char* p) {
    for (size_t i = 0; i < read.size(); ++i) {
      const Storage* s = read[i].grad.storage();
      const char* b = static_cast<const char*>(s->data());
      if (p >= b && p < b + s->nbytes()) used[i] = true;
    }
    return p;
  });
  for (size_t i = 0; i < read.size(); ++i)
    if (used[i]) g.grad_guards.push_back(read[i]);
}

void Graph::replay() {
  if (FASTT_UNLIKELY(g_capturing) && thread_state().recorder != nullptr)
    graph_break("a compiled step replayed while another one is captured");
  Impl& g = *impl_;
  const size_t n = g.steps.size();
  for (size_t i = 0; i < n;) {
    const Step& s = g.steps[i];
    if (FASTT_UNLIKELY(s.graph >= 0)) {  // a run of CUDA kernels
      g_graph_hooks.launch(g.device_graphs[size_t(s.graph)]);
      for (size_t k = i; k < s.end; ++k) {  // its .grad assignments
        if (g.steps[k].kernel != nullptr) continue;
        Impl::Host& h = g.hosts[g.steps[k].host];
        h.fn(h.tensors.data());
      }
      i = s.end;
      continue;
    }
    if (FASTT_LIKELY(s.kernel != nullptr))
      run_node(*s.kernel);
    else
      g.hosts[s.host].fn(g.hosts[s.host].tensors.data());
    ++i;
  }
}

}  // namespace capture
}  // namespace fastt
