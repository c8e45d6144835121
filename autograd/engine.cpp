// The autograd engine: node lifetime, recording helpers, leaf gradient
// accumulation, hooks, and the backward walk (the tape in reverse sequence
// order, each node run once all its consumers have delivered).
#include <algorithm>
#include <queue>
#include <unordered_map>

#include "autograd/node.h"
#include "csrc/allocator.h"
#include "csrc/capture.h"
#include "csrc/mutation.h"
#include "csrc/ops.h"
#include "csrc/thread_state.h"

namespace fastt {
namespace autograd {

FASTT_TLS_IE thread_local bool t_grad_enabled = true;
FASTT_TLS_IE thread_local bool t_inference_mode = false;

namespace {
// Sequence numbers order the tape. Per thread (like torch's sequence_nr):
// a graph recorded by one thread is ordered, and no atomic is needed.
FASTT_TLS_IE thread_local uint64_t t_next_seq = 1;
std::atomic<int64_t> g_next_hook_id{1};
std::atomic<uint64_t> g_next_epoch{1};

const char* const kGradFnNames[] = {
#define FASTT_GRAD_FN(name, str) str,
#include "grad_fns.def"
#undef FASTT_GRAD_FN
};
}  // namespace

const char* grad_fn_name(GradFn fn) { return kGradFnNames[int(fn)]; }

const char* node_name(const Node& n) {
  if (FASTT_UNLIKELY(n.fn == GradFn::Custom) && n.extra && n.extra->custom)
    return n.extra->custom->name.c_str();
  return grad_fn_name(n.fn);
}

// ------------------------------------------------ saved-tensor hooks --
namespace {
// Whether saved-tensor hooks are active: the one test Node::save makes
// (the stack itself is in the thread's heap block).
FASTT_TLS_IE thread_local bool t_saved_hooks_on = false;
SavedTensorHooks* current_saved_hooks() {
  auto& st = thread_state().saved_hooks;
  return st.empty() ? nullptr : st.back().get();
}
}  // namespace
}  // namespace autograd

void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> h) {
  FASTT_CHECK(h != nullptr, ValueError, "saved_tensors_hooks: null hooks");
  thread_state().saved_hooks.push_back(std::move(h));
  autograd::t_saved_hooks_on = true;
}
void pop_saved_tensor_hooks() {
  auto& st = thread_state().saved_hooks;
  FASTT_CHECK(!st.empty(), RuntimeError,
              "saved_tensors_hooks: no hooks to pop");
  st.pop_back();
  autograd::t_saved_hooks_on = !st.empty();
}

namespace autograd {

// ---------------------------------------------------------- lifetime --
void* Node::operator new(size_t n) { return CachingAllocator::allocate(n); }
void Node::operator delete(void* p) {
  CachingAllocator::deallocate(p, sizeof(Node));
}

Node::~Node() {
  if (fn == GradFn::AccumulateGrad && !saved.empty() &&
      saved[0].data.defined()) {
    TensorImpl* leaf = saved[0].data.impl();
    if (leaf->autograd) {
      auto* m = static_cast<TensorMeta*>(leaf->autograd);
      if (m->grad_accumulator == this) m->grad_accumulator = nullptr;
    }
  }
  if (extra) {
    for (auto& r : extra->retain) {
      if (r.second->autograd) {
        auto* m = static_cast<TensorMeta*>(r.second->autograd);
        if (m->retained_in == this) m->retained_in = nullptr;
      }
    }
    delete extra;
  }
}

Edge& Edge::operator=(Edge&& o) noexcept {
  if (this != &o) {
    if (node) release(node);
    node = o.node;
    input_nr = o.input_nr;
    o.node = nullptr;
  }
  return *this;
}

// Freeing a node releases its inputs' nodes, so freeing a long chain
// recurses. Up to kMaxReleaseDepth levels are freed directly (the common,
// fast case); deeper nodes are queued and the outermost call frees them in
// a loop, so a chain of any length never overflows the stack.
namespace {
constexpr int kMaxReleaseDepth = 64;
FASTT_TLS_IE thread_local int t_release_depth = 0;
std::vector<Node*>& pending_releases() {
  thread_local std::vector<Node*> pending;
  return pending;
}
}  // namespace

void release(Node* node) {
  if (node->refcount.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (t_release_depth >= kMaxReleaseDepth) {
    pending_releases().push_back(node);
    return;
  }
  ++t_release_depth;
  delete node;
  if (t_release_depth == 1) {
    std::vector<Node*>& pending = pending_releases();
    while (!pending.empty()) {
      Node* n = pending.back();
      pending.pop_back();
      delete n;  // may queue more
    }
  }
  --t_release_depth;
}

TensorMeta::~TensorMeta() {
  if (retained_in && retained_in->extra) {
    auto& v = retained_in->extra->retain;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](auto& r) { return r.second == self; }),
            v.end());
  }
}

TensorMeta& meta(TensorImpl* impl) {
  if (!impl->autograd) {
    auto* m = new TensorMeta;
    m->self = impl;
    impl->autograd = m;
  }
  return *static_cast<TensorMeta*>(impl->autograd);
}

void Node::set_shape0(IntList s) {
  nd0 = int8_t(s.size());
  for (size_t d = 0; d < s.size(); ++d) a0[d] = s[d];
}
void Node::set_shape1(IntList s) {
  nd1 = int8_t(s.size());
  for (size_t d = 0; d < s.size(); ++d) a1[d] = s[d];
}

void Node::save(size_t i, const Tensor& t, bool output, uint16_t output_nr) {
  if (saved.size() <= i) saved.resize(i + 1);
  SavedTensor& s = saved[i];
  s.is_output = output;
  s.output_nr = output_nr;
  if (!t.defined()) {
    s.data = Tensor();
    return;
  }
  s.version = t.storage()->version();
  if (FASTT_UNLIKELY(t_saved_hooks_on)) {
    // pack() sees the tensor (an output as a history-free alias, so a hook
    // that keeps it makes no cycle); hooks are off while it runs.
    SavedTensorHooks* h = current_saved_hooks();
    t_saved_hooks_on = false;
    struct Restore {
      ~Restore() { t_saved_hooks_on = true; }
    } restore;
    s.packed = h->pack(output ? Tensor::from_storage(t.storage(), t.sizes(),
                                                     t.strides(),
                                                     t.storage_offset(),
                                                     t.dtype())
                              : t);
    s.data = Tensor();
    return;
  }
  s.packed.reset();
  if (output) {
    // A history-free tensor over the same data, not linked to `t`: no
    // cycle out -> node -> saved -> out.
    s.data = Tensor::from_storage(t.storage(), t.sizes(), t.strides(),
                                  t.storage_offset(), t.dtype());
  } else {
    s.data = t;
  }
}

// torch's message, naming the tensor by the node that produced it.
[[noreturn]] static void throw_modified(const Node& n, const SavedTensor& s) {
  const Tensor& t = s.data;
  std::string what;
  if (s.is_output)
    what = fmt::format(", which is output {} of {},", s.output_nr,
                       node_name(n));
  else if (t.impl()->grad_fn)
    what = fmt::format(", which is output {} of {},", t.impl()->output_nr,
                       node_name(*t.impl()->grad_fn));
  throw RuntimeError(fmt::format(
      "one of the variables needed for gradient computation has been "
      "modified by an inplace operation: [{} {}]{} is at version {}; "
      "expected version {} instead. Hint: the operation that failed to "
      "compute its gradient is {}",
      fmt::format("fastt.{}Tensor", torch_type_name(t.dtype())), shape_str(t.sizes()), what,
      t.storage()->version(), s.version, node_name(n)));
}

Tensor Node::unpack(size_t i) const {
  if (released) {
    throw RuntimeError(fmt::format(
        "{}: Trying to backward through the graph a second time (or "
        "directly access saved tensors after they have already been "
        "freed). Saved intermediate values of the graph are freed when you "
        "call .backward() or autograd.grad(). Specify retain_graph=True if "
        "you need to backward through the graph a second time or if you "
        "need to access saved tensors after calling backward.",
        node_name(*this)));
  }
  const SavedTensor& s = saved[i];
  Tensor packed;
  if (FASTT_UNLIKELY(s.packed != nullptr)) {
    // Saved through hooks: what unpack() returns is the tensor (torch runs
    // no version check on it).
    packed = s.packed->unpack();
    FASTT_CHECK(packed.defined(), TypeError,
                "Output of saved tensor unpack_hook expected to be a "
                "Tensor but got None");
  } else {
    if (!s.data.defined()) return s.data;
    if (FASTT_UNLIKELY(s.data.storage()->version() != s.version))
      throw_modified(*this, s);
  }
  const Tensor& d = packed.defined() ? packed : s.data;
  if (s.is_output && grad_enabled()) {
    // Double backward through a saved output needs its history back.
    Tensor a = d.alias();
    retain(const_cast<Node*>(this));
    a.impl()->grad_fn = const_cast<Node*>(this);
    a.impl()->output_nr = s.output_nr;
    a.impl()->requires_grad = true;
    return a;
  }
  return d;
}

// --------------------------------------------------------- recording --
static Node* grad_accumulator(const Tensor& t) {
  TensorMeta& m = meta(t.impl());
  if (m.grad_accumulator) {
    retain(m.grad_accumulator);
    return m.grad_accumulator;
  }
  Node* n = new Node(GradFn::AccumulateGrad);
  // Last in tape order means first in the walk: a leaf's gradient is
  // accumulated as soon as it is complete, so its temporary is freed then
  // rather than held until the end of the pass (torch gives AccumulateGrad
  // the highest sequence number the same way).
  n->seq = UINT64_MAX;
  n->num_outputs = 1;
  n->saved.resize(1);
  n->saved[0].data = t;  // strong: the graph keeps its leaves alive
  m.grad_accumulator = n;
  return n;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.impl()->requires_grad) return Edge();
  TensorImpl* impl = t.impl();
  if (impl->view_base) refresh_view(t);
  if (impl->grad_fn) {
    retain(impl->grad_fn);
    return Edge(impl->grad_fn, impl->output_nr);
  }
  return Edge(grad_accumulator(t), 0);
}

// Points `e` (empty) at t's gradient destination, in place.
static inline void fill_edge(Edge& e, const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (!impl->requires_grad) return;
  if (FASTT_UNLIKELY(impl->view_base != nullptr)) refresh_view(t);
  if (impl->grad_fn) {
    retain(impl->grad_fn);
    e.node = impl->grad_fn;
    e.input_nr = impl->output_nr;
  } else {
    e.node = grad_accumulator(t);
    e.input_nr = 0;
  }
}

// The formulas right for complex inputs and results: torch's convention
// (the gradient of a real loss L is dL/dRe z + i dL/dIm z, so a holomorphic
// f's formula multiplies by conj(f'(z))), checked against torch and by
// gradcheck (tests/python/test_complex_autograd.py). The linear ones need
// nothing more (indexing, masks, scans and copies); Mul, Div, Abs,
// Matmul, Linear, the FFTs, the powers and products conjugate. A
// real input of a complex result gets the real part of its gradient
// (formulas.h's fit, the leaf's cast). Any other formula is real-only: a
// node of it with a complex input or result is refused, not recorded
// wrongly.
bool complex_formula(GradFn fn) {
  switch (fn) {
    case GradFn::AccumulateGrad: case GradFn::Custom:  // the user's
    case GradFn::Neg: case GradFn::Abs:
    case GradFn::Add: case GradFn::Sub: case GradFn::Mul: case GradFn::Div:
    case GradFn::Sum: case GradFn::SumAll: case GradFn::Mean:
    case GradFn::MeanAll: case GradFn::Matmul: case GradFn::Linear:
    case GradFn::Addmm:
    case GradFn::FftC2c: case GradFn::FftR2c: case GradFn::FftC2r:
    case GradFn::Clone: case GradFn::ToCopy: case GradFn::Reshape:
    case GradFn::Transpose: case GradFn::Permute: case GradFn::Expand:
    case GradFn::Slice: case GradFn::Select: case GradFn::Diagonal:
    case GradFn::AsStrided: case GradFn::CopySlices: case GradFn::Alias:
    case GradFn::ViewAsReal: case GradFn::ViewAsComplex: case GradFn::Copy:
    case GradFn::Cat: case GradFn::Stack:
    case GradFn::Repeat: case GradFn::Where: case GradFn::MaskedFill:
    case GradFn::Cumsum: case GradFn::Tril: case GradFn::Triu:
    case GradFn::Flip: case GradFn::Roll: case GradFn::IndexSelect:
    case GradFn::Gather: case GradFn::Scatter: case GradFn::ScatterValue:
    case GradFn::ScatterAdd: case GradFn::IndexAdd: case GradFn::Index:
    case GradFn::IndexPut: case GradFn::MaskedSelect:
    case GradFn::MaskedScatter:
    // Polynomials, powers and their combinations (conjugated factors).
    case GradFn::Square: case GradFn::PowScalar: case GradFn::Pow:
    case GradFn::RPow: case GradFn::Exp2: case GradFn::Sgn:
    case GradFn::Lerp: case GradFn::Addcmul: case GradFn::Addcdiv:
    case GradFn::Prod: case GradFn::Cumprod:
    // 2 (z - mean z) / (N - correction), times the real gradient.
    case GradFn::Var: case GradFn::Std: case GradFn::VarMean:
    case GradFn::StdMean:
    // The LU and Cholesky families (conjugate transposes).
    case GradFn::LuFactor: case GradFn::LinalgSolve:
    case GradFn::TriangularSolve: case GradFn::Cholesky:
    case GradFn::CholeskySolve: case GradFn::CholeskyInverse:
    // QR, the spectral decompositions and what is built on them (torch's
    // complex formulas, with its checks that the loss ignores the phase).
    case GradFn::LinalgQr: case GradFn::LinalgEigh: case GradFn::LinalgEig:
    case GradFn::LinalgSvd: case GradFn::LinalgPinv:
    case GradFn::LinalgLstsq:
    // The holomorphic elementwise functions (conjugate derivatives).
    case GradFn::Exp: case GradFn::Expm1: case GradFn::Log:
    case GradFn::Log1p: case GradFn::Log2: case GradFn::Log10:
    case GradFn::Sqrt: case GradFn::Rsqrt: case GradFn::Reciprocal:
    case GradFn::Sin: case GradFn::Cos: case GradFn::Tan:
    case GradFn::Sinh: case GradFn::Cosh: case GradFn::Tanh:
    case GradFn::Asin: case GradFn::Acos: case GradFn::Atan:
    case GradFn::Asinh: case GradFn::Acosh: case GradFn::Atanh:
    case GradFn::Sigmoid: case GradFn::Sinc: case GradFn::Logaddexp:
    case GradFn::Logsumexp:
    // softmax(dtype=) of a complex input; conj(y) for a complex result.
    case GradFn::Softmax: case GradFn::LogSoftmax:
      return true;
    default:
      return false;
  }
}

[[noreturn]] void refuse_complex(GradFn fn) {
  throw NotImplementedError(fmt::format(
      "{}: the gradient of this op for complex tensors is not implemented "
      "in fastt yet (its formula is real-only)",
      grad_fn_name(fn)));
}

NodeRef make_node(GradFn fn, std::initializer_list<const Tensor*> inputs) {
  NodeRef n(new Node(fn));
  n->seq = t_next_seq++;
  n->next.resize(inputs.size());
  size_t i = 0;
  for (const Tensor* t : inputs) {
    if (t && t->defined()) {
      if (FASTT_UNLIKELY(is_complex(t->dtype())) && !complex_formula(fn))
        refuse_complex(fn);
      fill_edge(n->next[i], *t);
      if (i < 3) n->dtypes[i] = t->dtype();
      if (i == 0) n->device = t->device();
    }
    ++i;
  }
  return n;
}

NodeRef make_node(GradFn fn, const std::vector<Tensor>& inputs) {
  NodeRef n(new Node(fn));
  n->seq = t_next_seq++;
  n->next.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    if (FASTT_UNLIKELY(is_complex(inputs[i].dtype())) &&
        !complex_formula(fn))
      refuse_complex(fn);
    fill_edge(n->next[i], inputs[i]);
    if (i < 3) n->dtypes[i] = inputs[i].dtype();
  }
  if (!inputs.empty() && inputs[0].defined()) n->device = inputs[0].device();
  return n;
}

void set_history(const Tensor& out, Node* n, uint16_t nr) {
  TensorImpl* impl = out.impl();
  if (FASTT_UNLIKELY(is_complex(impl->dtype)) && !complex_formula(n->fn))
    refuse_complex(n->fn);
  retain(n);
  Node* old = impl->grad_fn;
  impl->grad_fn = n;
  impl->output_nr = nr;
  impl->requires_grad = true;
  if (n->num_outputs <= nr) n->num_outputs = uint16_t(nr + 1);
  if (old) {
    // An in-place op moved the tensor to a new node: its retain_grad
    // registration follows it.
    if (impl->autograd) {
      auto* m = static_cast<TensorMeta*>(impl->autograd);
      if (m->retains_grad && m->retained_in == old) {
        auto& v = old->extra->retain;
        v.erase(std::remove_if(v.begin(), v.end(),
                               [&](auto& r) { return r.second == impl; }),
                v.end());
        if (!n->extra) n->extra = new Node::Extra;
        n->extra->retain.emplace_back(nr, impl);
        m->retained_in = n;
      }
    }
    release(old);
  }
}

void check_inplace(const Tensor& self, const char* op) {
  TensorImpl* impl = self.impl();
  if (!grad_enabled()) return;
  if (impl->requires_grad && !impl->grad_fn)
    throw RuntimeError(fmt::format(
        "{}: a leaf Variable that requires grad is being used in an "
        "in-place operation.",
        op));
  const TensorImpl* base = impl->view_base;
  if (base && base->requires_grad && !base->grad_fn)
    throw RuntimeError(fmt::format(
        "{}: a view of a leaf Variable that requires grad is being used in "
        "an in-place operation.",
        op));
}

}  // namespace autograd

// ---------------------------------------------------------- user API --
using namespace autograd;

Tensor& requires_grad_(Tensor& t, bool on) {
  require_defined(t, "requires_grad_");
  TensorImpl* impl = t.impl();
  if (!on && impl->grad_fn)
    throw RuntimeError(
        "you can only change requires_grad flags of leaf variables. If you "
        "want to use a computed variable in a subgraph that doesn't require "
        "differentiation use var_no_grad = var.detach().");
  if (on && !is_floating(t.dtype()) && !is_complex(t.dtype()))
    throw RuntimeError(fmt::format(
        "only Tensors of floating point and complex dtype can require "
        "gradients (got {})",
        dtype_name(t.dtype())));
  impl->requires_grad = on;
  return t;
}

bool requires_grad(const Tensor& t) {
  return t.defined() && t.impl()->requires_grad;
}
bool is_leaf(const Tensor& t) {
  require_defined(t, "is_leaf");
  return t.impl()->grad_fn == nullptr;
}

Tensor grad(const Tensor& t) {
  require_defined(t, "grad");
  if (!t.impl()->autograd) return Tensor();
  return static_cast<TensorMeta*>(t.impl()->autograd)->grad;
}

void set_grad(const Tensor& t, const Tensor& g) {
  require_defined(t, "grad");
  if (g.defined()) {
    FASTT_CHECK(g.device() == t.device(), RuntimeError,
                "assigned grad has data located on {}, which does not match "
                "the tensor's device {}",
                g.device().str(), t.device().str());
    // torch's wording (fastt has no grad_dtype: the tensor's dtype).
    FASTT_CHECK(g.dtype() == t.dtype(), RuntimeError,
                "attempting to assign a gradient with dtype '{}' to a tensor "
                "with dtype '{}'. The gradient must match the tensor's dtype",
                dtype_name(g.dtype()), dtype_name(t.dtype()));
    FASTT_CHECK(g.sizes().equals(t.sizes()), RuntimeError,
                "attempting to assign a gradient of size '{}' to a tensor of "
                "size '{}'. Please ensure that the gradient and the tensor "
                "are the same size",
                shape_str(g.sizes()), shape_str(t.sizes()));
  }
  meta(t.impl()).grad = g;
}

const char* grad_fn_name(const Tensor& t) {
  require_defined(t, "grad_fn");
  Node* n = t.impl()->grad_fn;
  return n ? autograd::node_name(*n) : "";
}

void retain_grad(const Tensor& t) {
  require_defined(t, "retain_grad");
  TensorImpl* impl = t.impl();
  FASTT_CHECK(impl->requires_grad, RuntimeError,
              "can't retain_grad on Tensor that has requires_grad=False");
  if (!impl->grad_fn) return;  // leaves keep .grad anyway
  TensorMeta& m = meta(impl);
  if (m.retains_grad) return;
  m.retains_grad = true;
  Node* n = impl->grad_fn;
  if (!n->extra) n->extra = new Node::Extra;
  n->extra->retain.emplace_back(impl->output_nr, impl);
  m.retained_in = n;
}

bool retains_grad(const Tensor& t) {
  require_defined(t, "retains_grad");
  return t.impl()->autograd &&
         static_cast<TensorMeta*>(t.impl()->autograd)->retains_grad;
}

int64_t register_hook(const Tensor& t,
                      std::function<Tensor(const Tensor&)> hook) {
  require_defined(t, "register_hook");
  TensorImpl* impl = t.impl();
  FASTT_CHECK(impl->requires_grad, RuntimeError,
              "cannot register a hook on a tensor that doesn't require "
              "gradient");
  const int64_t id = g_next_hook_id.fetch_add(1);
  if (impl->grad_fn) {
    Node* n = impl->grad_fn;
    if (!n->extra) n->extra = new Node::Extra;
    n->extra->pre_hooks.push_back({id, impl->output_nr, std::move(hook)});
  } else {
    meta(impl).hooks.push_back({id, 0, std::move(hook)});
  }
  return id;
}

int64_t register_post_accumulate_grad_hook(
    const Tensor& t, std::function<void(const Tensor&)> hook) {
  require_defined(t, "register_post_accumulate_grad_hook");
  TensorImpl* impl = t.impl();
  FASTT_CHECK(impl->requires_grad, RuntimeError,
              "cannot register a hook on a tensor that doesn't require "
              "gradient");
  FASTT_CHECK(impl->grad_fn == nullptr, RuntimeError,
              "post accumulate grad hooks cannot be registered on non-leaf "
              "tensors");
  const int64_t id = g_next_hook_id.fetch_add(1);
  meta(impl).post_accumulate.emplace_back(id, std::move(hook));
  return id;
}

void remove_hook(const Tensor& t, int64_t id) {
  auto drop = [&](std::vector<Hook>& v) {
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](const Hook& h) { return h.id == id; }),
            v.end());
  };
  TensorImpl* impl = t.impl();
  if (impl->autograd) {
    auto* m = static_cast<TensorMeta*>(impl->autograd);
    drop(m->hooks);
    auto& pa = m->post_accumulate;
    pa.erase(std::remove_if(pa.begin(), pa.end(),
                            [&](const auto& h) { return h.first == id; }),
             pa.end());
  }
  if (impl->grad_fn && impl->grad_fn->extra)
    drop(impl->grad_fn->extra->pre_hooks);
}

// Not a view (torch's detach: no _base): a new identity over the same
// storage, so holding it keeps neither t nor t's graph alive; in-place
// writes through it still bump the shared version counter.
Tensor detach(const Tensor& t) {
  require_defined(t, "detach");
  return Tensor::from_storage(t.storage(), t.sizes(), t.strides(),
                              t.storage_offset(), t.dtype());
}

Tensor& detach_(Tensor& t) {
  require_defined(t, "detach_");
  TensorImpl* impl = t.impl();
  FASTT_CHECK(!(impl->is_view && impl->grad_fn), RuntimeError,
              "detach_: can't detach views in-place. Use detach() instead.");
  if (impl->grad_fn) {
    Node* old = impl->grad_fn;
    impl->grad_fn = nullptr;
    release(old);
  }
  impl->requires_grad = false;
  impl->output_nr = 0;
  return t;
}

void set_data(const Tensor& self, const Tensor& src) {
  require_defined(self, "data");
  require_defined(src, "data");
  TensorImpl* d = self.impl();
  const TensorImpl* s = src.impl();
  FASTT_CHECK(!d->requires_grad || !d->grad_fn || s->dtype == d->dtype,
              RuntimeError, "data set to a tensor of a different dtype");
  s->storage->incref();
  d->storage->decref();
  d->storage = s->storage;
  d->dtype = s->dtype;
  d->device = s->device;
  d->ndim = s->ndim;
  d->offset = s->offset;
  d->data = s->data;
  for (int k = 0; k < s->ndim; ++k) {
    d->sizes[k] = s->sizes[k];
    d->strides[k] = s->strides[k];
  }
  d->refresh();
}

// ------------------------------------------------------------ engine --
namespace autograd {
namespace {

// The epochs of the backward walks running in this thread (outermost
// first) and, per walk, whether it accumulates into every leaf's .grad
// (backward() without inputs=): reentrant checkpointing needs that.
std::vector<uint64_t>& active_walks() { return thread_state().walks; }
std::vector<bool>& walk_accumulates() {
  return thread_state().walk_accumulates;
}

struct ByTapeOrder {
  bool operator()(const Node* a, const Node* b) const {
    return a->seq < b->seq;  // the latest record runs first
  }
};

// Adds `g` into a node's incoming-gradient slot.
void accumulate_into(Tensor& slot, Tensor g) {
  if (!slot.defined()) {
    slot = std::move(g);
  } else {
    slot = FASTT_MUTANT(GradMeetOverwrite) ? g : fastt::add(slot, g);
  }
}

bool exclusively_owned(const Tensor& g) {
  return g.use_count() == 1 && g.storage()->use_count() == 1 &&
         g.is_contiguous() && !g.impl()->requires_grad;
}

void run_hooks(std::vector<Hook>& hooks, uint16_t nr, Tensor& g) {
  for (size_t k = 0; k < hooks.size(); ++k) {
    if (hooks[k].output_nr != nr) continue;
    Tensor r = hooks[k].fn(g);
    if (r.defined()) g = std::move(r);
  }
}

void accumulate_leaf(Node& acc, Tensor g, bool create_graph) {
  const Tensor& leaf = acc.saved[0].data;
  TensorMeta& m = meta(leaf.impl());
  if (FASTT_UNLIKELY(g_capturing) &&
      (!m.hooks.empty() || !m.post_accumulate.empty()))
    capture::graph_break("a gradient hook on a leaf (hooks run Python)");
  const Tensor before = FASTT_UNLIKELY(g_capturing) ? m.grad : Tensor();
  run_hooks(m.hooks, 0, g);
  if (g.dtype() != leaf.dtype()) g = g.to(leaf.dtype());
  if (!g.sizes().equals(leaf.sizes())) g = sum_to(g, leaf.sizes());
  if (!m.grad.defined()) {
    if (create_graph || exclusively_owned(g))
      m.grad = std::move(g);
    else
      m.grad = g.clone();
  } else if (create_graph || m.grad.impl()->requires_grad) {
    m.grad = fastt::add(m.grad, g);
  } else {
    GradModeGuard no_grad(false);
    fastt::add_(m.grad, g);
  }
  if (FASTT_UNLIKELY(g_capturing)) capture::note_grad(leaf, before, m.grad);
  for (size_t k = 0; k < m.post_accumulate.size(); ++k)
    m.post_accumulate[k].second(leaf);
}

// A gradient captured for autograd.grad / backward(inputs=...).
struct Capture {
  Node* node;
  uint16_t nr;
  size_t index;
};

// The walk shared by backward() and grad(). Roots are edges with their
// initial gradients; when `captures` is non-empty the gradients reaching
// them are stored in `captured` (and, for grad(), not accumulated).
void run_backward(std::vector<Edge>& roots, std::vector<Tensor>& root_grads,
                  bool keep_graph, bool create_graph, bool accumulate,
                  const std::vector<Capture>& captures,
                  std::vector<Tensor>& captured,
                  const std::vector<TensorImpl*>& only_leaves) {
  // 1. Find the graph and count each node's consumers inside it.
  // A walk may start inside another one (a custom backward that calls
  // grad(), reentrant checkpointing): a node the outer walk is using keeps
  // its scratch in `stash` meanwhile and gets it back at the end.
  const uint64_t epoch = g_next_epoch.fetch_add(1, std::memory_order_relaxed);
  if (FASTT_UNLIKELY(g_capturing)) capture::note_backward();
  std::vector<uint64_t>& active = active_walks();
  struct Stashed {
    Node* node;
    int32_t deps;
    uint64_t epoch;
    SmallVec<Tensor, 1> grads;
  };
  std::vector<Node*> nodes;
  std::vector<Stashed> stash;
  struct Cleanup {
    std::vector<Node*>& nodes;
    std::vector<Stashed>& stash;
    std::vector<uint64_t>& active;
    ~Cleanup() {
      for (Node* n : nodes) {
        n->deps = 0;
        n->grads.clear();
      }
      for (size_t k = stash.size(); k-- > 0;) {
        Stashed& s = stash[k];
        s.node->deps = s.deps;
        s.node->epoch = s.epoch;
        s.node->grads = std::move(s.grads);
      }
      active.pop_back();
      walk_accumulates().pop_back();
    }
  } cleanup{nodes, stash, active};
  const bool nested = !active.empty();
  active.push_back(epoch);
  walk_accumulates().push_back(accumulate && only_leaves.empty());
  auto visit = [&](Node* m) {
    if (m->epoch == epoch) return;
    if (FASTT_UNLIKELY(nested) &&
        std::find(active.begin(), active.end(), m->epoch) != active.end()) {
      stash.push_back({m, m->deps, m->epoch, std::move(m->grads)});
      m->deps = 0;
      m->grads.clear();
    }
    m->epoch = epoch;
    nodes.push_back(m);
  };
  for (Edge& e : roots)
    if (e.node) visit(e.node);
  for (size_t k = 0; k < nodes.size(); ++k) {  // grows while we scan
    Node* n = nodes[k];
    for (size_t i = 0; i < n->next.size(); ++i) {
      Node* m = n->next[i].node;
      if (!m) continue;
      visit(m);
      ++m->deps;
    }
  }

  // 2. Seed the roots.
  std::priority_queue<Node*, std::vector<Node*>, ByTapeOrder> ready;
  for (size_t r = 0; r < roots.size(); ++r) {
    Node* n = roots[r].node;
    if (!n) continue;
    if (n->grads.size() < n->num_outputs) n->grads.resize(n->num_outputs);
    accumulate_into(n->grads[roots[r].input_nr], root_grads[r]);
  }
  for (Edge& e : roots)
    if (e.node && e.node->deps == 0) {
      e.node->deps = -1;  // queued
      ready.push(e.node);
    }

  // 3. Walk the tape backwards.
  std::vector<Tensor> grad_inputs, multi;
  GradModeGuard mode(create_graph);
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    if (n->grads.size() < n->num_outputs) n->grads.resize(n->num_outputs);
    bool any = false;
    for (size_t k = 0; k < n->grads.size(); ++k) {
      Tensor& g = n->grads[k];
      if (n->extra && g.defined()) {
        if (FASTT_UNLIKELY(g_capturing) &&
            (!n->extra->pre_hooks.empty() || !n->extra->retain.empty()))
          capture::graph_break(
              "a tensor hook or retain_grad() (run on the host)");
        run_hooks(n->extra->pre_hooks, uint16_t(k), g);
        for (auto& r : n->extra->retain) {
          if (r.first != k) continue;
          TensorMeta& m = meta(r.second);
          if (!m.grad.defined())
            m.grad = create_graph ? g : g.clone();
          else
            m.grad = fastt::add(m.grad, g);
        }
      }
      any = any || g.defined();
    }
    for (const Capture& c : captures)
      if (c.node == n && c.nr < n->grads.size() && n->grads[c.nr].defined())
        accumulate_into(captured[c.index], n->grads[c.nr]);

    const size_t nnext = n->next.size();
    if (n->fn == GradFn::AccumulateGrad) {
      bool take = accumulate && any;
      if (take && !only_leaves.empty())
        take = std::find(only_leaves.begin(), only_leaves.end(),
                         n->saved[0].data.impl()) != only_leaves.end();
      if (take) accumulate_leaf(*n, std::move(n->grads[0]), create_graph);
      n->grads.clear();
      continue;
    }
    grad_inputs.assign(nnext, Tensor());
    if (any) {
      // Formulas read the output gradients as one array; a SmallVec is
      // contiguous only up to its inline size.
      Tensor* go = &n->grads[0];
      if (n->grads.size() > 1) {
        multi.clear();
        for (size_t k = 0; k < n->grads.size(); ++k)
          multi.push_back(n->grads[k]);
        go = multi.data();
      }
      apply_formula(*n, go, grad_inputs.data());
      if (!keep_graph) {
        n->saved.clear();
        n->released = true;
      }
    }
    n->grads.clear();
    for (size_t i = 0; i < nnext; ++i) {
      Node* m = n->next[i].node;
      if (!m) continue;
      if (grad_inputs[i].defined()) {
        if (m->grads.size() < m->num_outputs) m->grads.resize(m->num_outputs);
        const uint32_t nr = n->next[i].input_nr;
        if (m->grads.size() <= nr) m->grads.resize(nr + 1);
        accumulate_into(m->grads[nr], std::move(grad_inputs[i]));
      }
      if (--m->deps == 0) {
        m->deps = -1;
        ready.push(m);
      }
    }
  }
}

// Roots and their seed gradients for backward()/grad().
void make_roots(const std::vector<Tensor>& outputs,
                const std::vector<Tensor>& grad_outputs,
                std::vector<Edge>& roots, std::vector<Tensor>& seeds) {
  FASTT_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(),
              RuntimeError,
              "grad can be implicitly created only for scalar outputs "
              "(got {} tensors and {} gradients)",
              outputs.size(), grad_outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    require_defined(out, "backward");
    FASTT_CHECK(out.impl()->requires_grad, RuntimeError,
                "element {} of tensors does not require grad and does not "
                "have a grad_fn",
                i);
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      FASTT_CHECK(out.numel() == 1, RuntimeError,
                  "grad can be implicitly created only for scalar outputs");
      FASTT_CHECK(is_floating(out.dtype()), RuntimeError,
                  "grad can be implicitly created only for real scalar "
                  "outputs but got {}",
                  dtype_name(out.dtype()));
      g = fastt::ones_like(out);
    } else {
      FASTT_CHECK(g.sizes().equals(out.sizes()), RuntimeError,
                  "Mismatch in shape: grad_output[{}] has a shape of {} and "
                  "output[{}] has a shape of {}.",
                  i, shape_str(g.sizes()), i, shape_str(out.sizes()));
      FASTT_CHECK(is_complex(g.dtype()) == is_complex(out.dtype()),
                  RuntimeError,
                  "For complex Tensors, both grad_output and output are "
                  "required to have the same dtype. Mismatch in dtype: "
                  "grad_output[{}] has a dtype of {} and output[{}] has a "
                  "dtype of {}",
                  i, dtype_name(g.dtype()), i, dtype_name(out.dtype()));
    }
    roots.push_back(gradient_edge(out));
    seeds.push_back(std::move(g));
  }
}

}  // namespace

bool checkpoint_valid() {
  const std::vector<bool>& acc = walk_accumulates();
  return acc.empty() || acc.back();
}
}  // namespace autograd

void backward(const std::vector<Tensor>& outputs,
              const std::vector<Tensor>& grad_outputs, bool retain_graph,
              bool create_graph, const std::vector<Tensor>& inputs) {
  std::vector<Edge> roots;
  std::vector<Tensor> seeds;
  make_roots(outputs, grad_outputs, roots, seeds);
  std::vector<Capture> captures;
  std::vector<Tensor> captured(inputs.size());
  std::vector<TensorImpl*> only;
  std::vector<Edge> keep;  // keeps capture nodes alive
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    require_defined(t, "backward");
    FASTT_CHECK(t.impl()->requires_grad, RuntimeError,
                "backward: input {} does not require grad", i);
    if (t.impl()->grad_fn) {
      Edge e = gradient_edge(t);
      captures.push_back({e.node, uint16_t(e.input_nr), i});
      keep.push_back(std::move(e));
    } else {
      only.push_back(t.impl());
    }
  }
  if (!inputs.empty() && only.empty()) only.push_back(nullptr);
  run_backward(roots, seeds, retain_graph || create_graph, create_graph,
               true, captures, captured, only);
  // Non-leaf inputs get their gradient in .grad, like torch.
  for (const Capture& c : captures) {
    if (!captured[c.index].defined()) continue;
    TensorMeta& m = meta(inputs[c.index].impl());
    if (!m.grad.defined())
      m.grad = captured[c.index];
    else
      m.grad = fastt::add(m.grad, captured[c.index]);
  }
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs,
                         bool retain_graph, bool create_graph,
                         bool allow_unused) {
  std::vector<Edge> roots;
  std::vector<Tensor> seeds;
  make_roots(outputs, grad_outputs, roots, seeds);
  std::vector<Capture> captures;
  std::vector<Edge> keep;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    require_defined(t, "grad");
    FASTT_CHECK(t.impl()->requires_grad, RuntimeError,
                "One of the differentiated Tensors does not require grad");
    Edge e = gradient_edge(t);
    captures.push_back({e.node, uint16_t(e.input_nr), i});
    keep.push_back(std::move(e));
  }
  std::vector<Tensor> captured(inputs.size());
  run_backward(roots, seeds, retain_graph || create_graph, create_graph,
               false, captures, captured, {});
  for (size_t i = 0; i < captured.size(); ++i) {
    if (!captured[i].defined()) {
      FASTT_CHECK(allow_unused, RuntimeError,
                  "One of the differentiated Tensors appears to not have "
                  "been used in the graph. Set allow_unused=True if this is "
                  "the desired behavior.");
    } else if (!create_graph) {
      captured[i] = detach(captured[i]);
    }
  }
  return captured;
}

}  // namespace fastt
