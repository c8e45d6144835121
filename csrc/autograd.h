// fastt's autograd, public side: grad mode (thread-local), the one check
// every op makes before recording, and the user-facing calls (backward,
// grad, requires_grad_, .grad, hooks, detach). The graph, engine and
// formulas live in autograd/.
#pragma once
#include <functional>
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

// RAII: no gradient recording in this scope (torch::NoGradGuard).
struct NoGradGuard : autograd::GradModeGuard {
  NoGradGuard() : GradModeGuard(false) {}
};

}  // namespace fastt
