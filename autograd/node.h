// The autograd graph: nodes (compact tape records), edges, saved tensors and
// the recording helpers that op entry points call. A node is one record of
// the tape: which formula (GradFn), the edges to its inputs' nodes, the
// tensors and attributes its formula needs, and a sequence number that
// orders the tape. Nodes are refcounted by the tensors they produced and by
// the nodes that consume them, so a graph whose outputs die is freed.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <initializer_list>
#include <vector>

#include "autograd/grad_fn.h"
#include "csrc/autograd.h"
#include "csrc/tensor.h"

namespace fastt {
namespace autograd {


// A short vector with N elements inline (most nodes have 1-3 inputs).
template <class T, int N>
class SmallVec {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return i < N ? inline_[i] : heap_[i - N]; }
  const T& operator[](size_t i) const {
    return i < N ? inline_[i] : heap_[i - N];
  }
  void resize(size_t n) {
    if (n > N) heap_.resize(n - N);
    size_ = uint32_t(n);
  }
  void clear() {
    for (size_t i = 0; i < size_ && i < N; ++i) inline_[i] = T();
    heap_.clear();
    size_ = 0;
  }

 private:
  T inline_[N];
  std::vector<T> heap_;
  uint32_t size_ = 0;
};

struct CustomInfo;  // below

// Where a gradient goes: output `input_nr` of `node` (owned reference), or
// nowhere when the input needs no gradient.
struct Edge {
  Node* node = nullptr;
  uint32_t input_nr = 0;
  Edge() = default;
  Edge(Node* n, uint32_t nr) : node(n), input_nr(nr) {}
  Edge(const Edge&) = delete;
  Edge& operator=(const Edge&) = delete;
  Edge(Edge&& o) noexcept : node(o.node), input_nr(o.input_nr) {
    o.node = nullptr;
  }
  Edge& operator=(Edge&& o) noexcept;
  ~Edge() {
    if (node) release(node);
  }
  bool valid() const { return node != nullptr; }
};

// A tensor a formula needs, with the version it had when saved. Outputs of
// the node itself are saved as history-free aliases (a node holding its own
// output would be a reference cycle) and get the node back on unpack.
struct SavedTensor {
  Tensor data;
  // Set instead of `data` while saved-tensor hooks were active.
  std::unique_ptr<PackedTensor> packed;
  uint32_t version = 0;
  bool is_output = false;
  uint16_t output_nr = 0;
};

// Tensor hooks: return an undefined tensor to keep the gradient unchanged.
using GradHook = std::function<Tensor(const Tensor&)>;
struct Hook {
  int64_t id;
  uint16_t output_nr;  // which output of the node it watches
  GradHook fn;
};

// Per-tensor state beyond the TensorImpl flags.
struct TensorMeta : AutogradMeta {
  Tensor grad;
  Node* grad_accumulator = nullptr;  // weak: the node clears it
  std::vector<Hook> hooks;           // leaf tensors' hooks
  // Called with the leaf after its .grad was updated (torch's
  // register_post_accumulate_grad_hook).
  std::vector<std::pair<int64_t, std::function<void(const Tensor&)>>>
      post_accumulate;
  bool retains_grad = false;
  TensorImpl* self = nullptr;        // the owner (for retain_grad)
  Node* retained_in = nullptr;       // the node listing self as a target
  ~TensorMeta() override;
};
TensorMeta& meta(TensorImpl* impl);  // creates on first use

struct Node {
  std::atomic<int32_t> refcount{1};
  GradFn fn;
  uint16_t num_outputs = 1;
  bool released = false;  // saved tensors freed by a backward pass
  uint64_t seq = 0;
  SmallVec<Edge, 3> next;          // one per differentiable input
  SmallVec<SavedTensor, 2> saved;  // what the formula reads

  // Attributes (each formula documents what it uses).
  double f0 = 0, f1 = 0;
  int64_t i0 = 0, i1 = 0, i2 = 0;
  Scalar s0;
  DType dtypes[3] = {};  // input dtypes, for casting gradients back
  Device device;
  int8_t nd0 = 0, nd1 = 0;  // lengths of a0 and a1
  int64_t a0[kMaxDims];     // usually input 0's sizes
  int64_t a1[kMaxDims];     // input 1's sizes, a dim list, strides ...
  std::vector<int64_t> ints;  // anything longer (cat sizes, ...)

  // Hooks registered on non-leaf outputs and retain_grad targets (weak:
  // a tensor clears itself when it dies).
  struct Extra {
    std::vector<Hook> pre_hooks;
    std::vector<std::pair<uint16_t, TensorImpl*>> retain;
    std::unique_ptr<CustomInfo> custom;  // GradFn::Custom's state
  };
  Extra* extra = nullptr;

  // Engine scratch during one backward pass.
  int32_t deps = 0;
  uint64_t epoch = 0;  // the last backward pass that visited it
  SmallVec<Tensor, 1> grads;

  explicit Node(GradFn f) : fn(f) {}
  ~Node();
  static void* operator new(size_t n);
  static void operator delete(void* p);

  IntList shape0() const { return {a0, size_t(nd0)}; }
  IntList shape1() const { return {a1, size_t(nd1)}; }
  void set_shape0(IntList s);
  void set_shape1(IntList s);
  bool needs(size_t i) const { return i < next.size() && next[i].valid(); }
  // Saves `t` as saved[i] (an input: pass output = false).
  void save(size_t i, const Tensor& t, bool output = false,
            uint16_t output_nr = 0);
  // The saved tensor, checked against in-place modification.
  Tensor unpack(size_t i) const;
};

// A custom node's backward and what the engine checks its results
// against (autograd/custom.cpp).
struct CustomInfo {
  std::shared_ptr<CustomBackward> fn;
  std::string name;
  bool materialize_grads = true;
  size_t num_saved = 0;
  struct Meta {
    bool defined = false;
    DType dtype{};
    Device device;
    std::vector<int64_t> sizes;
  };
  std::vector<Meta> outputs, inputs;
};

// The node's readable name (a custom node's own, else its GradFn's).
const char* node_name(const Node& n);

inline void retain(Node* n) {
  n->refcount.fetch_add(1, std::memory_order_relaxed);
}

// ---- recording (called by op entry points behind should_record) ----

// The edge a gradient for `t` should flow along (a new reference).
Edge gradient_edge(const Tensor& t);

// An owning handle to a node being recorded.
class NodeRef {
 public:
  explicit NodeRef(Node* n) : n_(n) {}
  NodeRef(NodeRef&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  NodeRef(const NodeRef&) = delete;
  ~NodeRef() {
    if (n_) release(n_);
  }
  Node* operator->() const { return n_; }
  Node& operator*() const { return *n_; }
  Node* get() const { return n_; }

 private:
  Node* n_;
};

// A node for `fn` with one edge per input (undefined inputs get no edge).
NodeRef make_node(GradFn fn, std::initializer_list<const Tensor*> inputs);
NodeRef make_node(GradFn fn, const std::vector<Tensor>& inputs);
// Makes `out` output `nr` of node `n` (it now requires grad).
void set_history(const Tensor& out, Node* n, uint16_t nr = 0);

// A view whose base was modified in place after the view was recorded
// reads the base's new history: its grad_fn is rebuilt from the base
// (torch regenerates view grad_fns the same way). Cheap when current.
void refresh_view(const Tensor& view);

// In-place ops: RuntimeError for a leaf that requires grad (torch's "a leaf
// Variable that requires grad is being used in an in-place operation.").
void check_inplace(const Tensor& self, const char* op);

// Runs n's formula (FASTT_FORMULA(fn) in a formulas_<family>.cpp, found
// through a table indexed by GradFn): fills grad_inputs (one per next edge)
// from grad_outputs.
void apply_formula(Node& n, Tensor* grad_outputs, Tensor* grad_inputs);

// Sums `g` down to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& g, IntList shape);

}  // namespace autograd
}  // namespace fastt
