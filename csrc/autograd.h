// fastt's autograd, public side: grad mode (thread-local), the one check
// every op makes before recording, and the user-facing calls (backward,
// grad, requires_grad_, .grad, hooks, detach). The graph, engine and
// formulas live in autograd/.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "macros.h"
#include "tensor.h"

namespace fastt {
namespace autograd {

// Grad mode: on by default in every thread. Inference mode also turns grad
// mode off (fastt keeps no separate inference-tensor state).
extern FASTT_TLS_IE thread_local bool t_grad_enabled;
extern FASTT_TLS_IE thread_local bool t_inference_mode;

inline bool grad_enabled() { return t_grad_enabled; }
inline void set_grad_enabled(bool on) { t_grad_enabled = on; }
inline bool inference_mode_enabled() { return t_inference_mode; }

// RAII guards (C++ counterparts of no_grad / enable_grad / inference_mode).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(t_grad_enabled) {
    t_grad_enabled = on;
  }
  ~GradModeGuard() { t_grad_enabled = prev_; }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};
class InferenceModeGuard {
 public:
  explicit InferenceModeGuard(bool on = true)
      : grad_(!on && t_grad_enabled), prev_(t_inference_mode) {
    t_inference_mode = on;
  }
  ~InferenceModeGuard() { t_inference_mode = prev_; }

 private:
  GradModeGuard grad_;
  bool prev_;
};

// ---- the recording check (inline: the hot path) ----
inline bool needs_grad(const Tensor& t) {
  return t.defined() && t.impl()->requires_grad;
}
inline bool needs_grad(const Scalar&) { return false; }
inline bool needs_grad(const Tensor* t) { return t && needs_grad(*t); }
template <class... Ts>
inline bool should_record(const Ts&... ts) {
  return FASTT_UNLIKELY((needs_grad(ts) || ...)) && t_grad_enabled;
}

// False inside a backward walk that does not accumulate into every leaf
// (grad(), backward(inputs=...)): reentrant checkpointing refuses to run
// there (torch's _is_checkpoint_valid).
bool checkpoint_valid();

}  // namespace autograd

// ---- user API (torch names) ----
// requires_grad_: only leaves may change it; only floating dtypes may ask.
Tensor& requires_grad_(Tensor& t, bool requires_grad = true);
bool requires_grad(const Tensor& t);
bool is_leaf(const Tensor& t);
// The accumulated gradient of a leaf (or a retain_grad tensor); undefined
// when none.
Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& grad);
// The readable name of t's grad_fn ("AddBackward0"); empty for leaves.
const char* grad_fn_name(const Tensor& t);
void retain_grad(const Tensor& t);
bool retains_grad(const Tensor& t);
// Calls `hook(grad)` when t's gradient is computed; a defined return value
// replaces the gradient. Returns a handle for remove_hook.
int64_t register_hook(const Tensor& t,
                      std::function<Tensor(const Tensor&)> hook);
void remove_hook(const Tensor& t, int64_t handle);
// Calls `hook(t)` after a backward pass accumulated into the leaf t's
// .grad (an optimizer step per parameter, during backward). Leaves only.
// remove_hook removes it too.
int64_t register_post_accumulate_grad_hook(
    const Tensor& t, std::function<void(const Tensor&)> hook);
// A tensor sharing data with t, outside the graph.
Tensor detach(const Tensor& t);
Tensor& detach_(Tensor& t);
// Makes `self` look at src's memory (torch's `t.data = src`), keeping its
// identity (requires_grad, .grad, hooks).
void set_data(const Tensor& self, const Tensor& src);

// Backpropagates from `outputs` (scalars unless `grad_outputs` is given)
// into the .grad of the leaves. retain_graph keeps the saved tensors for
// another pass; create_graph records the backward pass itself (double
// backward). `inputs` limits accumulation to those leaves.
void backward(const std::vector<Tensor>& outputs,
              const std::vector<Tensor>& grad_outputs = {},
              bool retain_graph = false, bool create_graph = false,
              const std::vector<Tensor>& inputs = {});
inline void backward(const Tensor& output, const Tensor& grad_output = {},
                     bool retain_graph = false, bool create_graph = false) {
  backward(std::vector<Tensor>{output},
           grad_output.defined() ? std::vector<Tensor>{grad_output}
                                 : std::vector<Tensor>{},
           retain_graph, create_graph);
}
// Gradients of `outputs` with respect to `inputs`, returned instead of
// accumulated. allow_unused: an input the outputs do not depend on gets an
// undefined tensor instead of an error.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         bool retain_graph = false, bool create_graph = false,
                         bool allow_unused = false);

// ---- custom backward (torch.autograd.Function; C++ users too) ----
// A backward written by the user instead of a formula of the table: one
// node of the tape that calls `backward` with the gradients of its outputs.
class CustomBackward {
 public:
  virtual ~CustomBackward() = default;
  // grads: one per output of the record (undefined where no gradient
  // reached it, unless materialize_grads: then zeros of the output's
  // shape); saved: the record's `save` list, unpacked (checked against
  // in-place changes; undefined entries stay undefined). Returns one
  // gradient per input (undefined: none). Runs with grad mode on when the
  // backward pass has create_graph, so a backward written with fastt ops is
  // differentiable itself.
  virtual std::vector<Tensor> backward(std::vector<Tensor> grads,
                                       std::vector<Tensor> saved) = 0;
};

struct CustomRecord {
  std::string name;  // the grad_fn's name ("MyFunctionBackward")
  // One per forward input; undefined or not requiring grad: no edge.
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;  // undefined: a non-tensor output
  std::vector<Tensor> save;     // what backward gets back as `saved`
  // Inputs modified in place by the forward (torch's mark_dirty): they
  // must be among the outputs and take the new history themselves.
  std::vector<Tensor> dirty;
  std::vector<Tensor> non_differentiable;  // outputs that get no history
  bool materialize_grads = true;
};

// Records one node for `fn` when some input requires grad and grad mode is
// on; returns the outputs as the caller should hand them out (an output
// that is also an input and not dirty becomes a new alias carrying the
// history, as torch's view_as). Checks torch's rules: dirty tensors must be
// outputs, a leaf requiring grad cannot be dirty.
std::vector<Tensor> record_custom(std::shared_ptr<CustomBackward> fn,
                                  CustomRecord r);

// ---- saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks) ----
// While hooks are pushed, every tensor a node saves is handed to pack()
// and only what it returns is kept; unpack() gives the tensor back when
// the backward pass needs it (offloading, recomputation, compression).
class PackedTensor {
 public:
  virtual ~PackedTensor() = default;
  virtual Tensor unpack() = 0;
};
class SavedTensorHooks {
 public:
  virtual ~SavedTensorHooks() = default;
  virtual std::unique_ptr<PackedTensor> pack(const Tensor& t) = 0;
};
// The innermost pushed hooks apply (per thread).
void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> hooks);
void pop_saved_tensor_hooks();

// RAII: no gradient recording in this scope (torch::NoGradGuard).
struct NoGradGuard : autograd::GradModeGuard {
  NoGradGuard() : GradModeGuard(false) {}
};

}  // namespace fastt
