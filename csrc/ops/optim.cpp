// Entry points of the fused optimizer steps: validate every list once,
// increment the step counters, then one lookup and one kernel call for the
// whole list. Mixed dtypes or non-contiguous tensors take a slower path
// (one call per dtype over dense copies written back afterwards). Complex
// parameters step as their real [..., 2] views, as torch's optimizers do.
#include "optim.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "../autograd.h"
#include "../dispatch.h"
#include "complex.h"

namespace fastt {
namespace {

// The kernels' FMA builds (kernels/cpu/optim.cpp, compiled for AVX2+FMA
// by a target attribute at every level) wherever the CPU has FMA, as torch
// fuses there; off x86 FMA is part of the base ISA.
bool cpu_has_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return true;
#endif
}
bool g_optim_fma = cpu_has_fma();

}  // namespace

bool optim_fma_enabled() { return g_optim_fma; }
void set_optim_fma_enabled(bool on) { g_optim_fma = on && cpu_has_fma(); }

namespace {

constexpr int kMaxLists = 2 + kMaxOptimStates;  // params, grads, states

// What run_optim needs besides the hyperparameters.
struct OptimLists {
  Op op;
  const char* name;
  const char* optimizer;  // the torch.optim class(es), for device errors
  const std::vector<Tensor>* lists[kMaxLists] = {};  // null: unused slot
  const char* list_names[kMaxLists] = {};
  const std::vector<Tensor>* steps = nullptr;  // null: no step counters
  // One-element floating CPU tensors per parameter besides the step
  // (NAdam's mu_product, ASGD's eta and mu), validated like the steps.
  const std::vector<Tensor>* scalar_lists[2] = {};
  const char* scalar_names[2] = {};
  // Called per tensor after its step increment (in parameter order): reads
  // or updates the tensor's scalar state (sc[k] is its scalar_lists[k]
  // entry, null for an unused list) and fills out[0..kOptimAux) with the
  // kernel's per-tensor values (OptimKernelArgs::aux).
  void (*aux_fn)(const OptimKernelArgs& ka, const Tensor* const* sc,
                 double step, double* out) = nullptr;
};

// Reused per thread so a steady-state step allocates nothing.
struct Scratch {
  std::vector<int64_t> offsets;
  std::vector<double> steps;
  std::vector<double> aux;
};
Scratch& scratch() {
  // Only a pointer in TLS (the module's TLS block counts against glibc's
  // static TLS surplus).
  thread_local std::unique_ptr<Scratch> s;
  if (FASTT_UNLIKELY(!s)) s.reset(new Scratch());
  return *s;
}

// One kernel call updates a whole group, so its tensors must share a
// device (torch.optim's single-tensor loop would accept a mixed group).
[[noreturn]] FASTT_NOINLINE void throw_device_mismatch(
    const OptimLists& L, const char* what, size_t i, const Tensor& t,
    const char* other, size_t j, const Tensor& o) {
  throw RuntimeError(fmt::format(
      "{} ({}): expected all tensors of a parameter group to be on the same "
      "device, but {}[{}] is on {} and {}[{}] on {}; put the parameters of "
      "each device in their own parameter group",
      L.name, L.optimizer, what, i, t.device().str(), other, j,
      o.device().str()));
}

[[noreturn]] FASTT_NOINLINE void throw_mismatch(const OptimLists& L, int l,
                                                size_t i, const Tensor& t,
                                                const Tensor& p) {
  const char* what = L.list_names[l];
  if (!t.sizes().equals(p.sizes()))
    throw RuntimeError(fmt::format(
        "{}: {}[{}] has shape {} but params[{}] has shape {}", L.name, what,
        i, shape_str(t.sizes()), i, shape_str(p.sizes())));
  if (t.dtype() != p.dtype())
    throw RuntimeError(fmt::format(
        "{}: {}[{}] has dtype {} but params[{}] has dtype {}", L.name, what,
        i, dtype_name(t.dtype()), i, dtype_name(p.dtype())));
  throw_device_mismatch(L, what, i, t, "params", i, p);
}

FASTT_NOINLINE void check_step(const OptimLists& L, size_t i,
                               const Tensor& s,
                               const char* what = "state_steps") {
  FASTT_CHECK(s.defined(), ValueError, "{}: {}[{}] is undefined", L.name,
              what, i);
  FASTT_CHECK(s.numel() == 1 && s.is_floating_point() && s.is_cpu(),
              RuntimeError,
              "{}: {}[{}] must be a one-element floating CPU "
              "tensor, got shape {} dtype {} on {}",
              L.name, what, i, shape_str(s.sizes()), dtype_name(s.dtype()),
              s.device().str());
}

// step += 1 (in the tensor's dtype, like torch's step_t += 1); returns the
// new value.
double increment_step(const Tensor& s) {
  s.bump_version();
  return visit_dtype(s.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (std::is_floating_point<T>::value ||
                  std::is_same<T, Half>::value ||
                  std::is_same<T, BFloat16>::value) {
      T* p = reinterpret_cast<T*>(s.data_ptr());
      *p = T(opmath_t<T>(*p) + opmath_t<T>(1));
      return double(opmath_t<T>(*p));
    }
    return 0;  // unreachable: check_step requires a floating dtype
  });
}

// The value of a one-element floating CPU tensor.
double read_scalar(const Tensor& s) {
  return visit_dtype(s.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (std::is_floating_point<T>::value ||
                  std::is_same<T, Half>::value ||
                  std::is_same<T, BFloat16>::value)
      return double(opmath_t<T>(*reinterpret_cast<const T*>(s.data_ptr())));
    return 0;  // unreachable: check_step requires a floating dtype
  });
}

// s.copy_(value) (a double rounded to the tensor's dtype, like copying a
// float64 tensor in); with `multiply`, s *= value in the tensor's dtype
// (torch's mul_ by a Python float: the scalar becomes the compute type).
// Returns the new value.
double write_scalar(const Tensor& s, double value, bool multiply) {
  s.bump_version();
  return visit_dtype(s.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (std::is_floating_point<T>::value ||
                  std::is_same<T, Half>::value ||
                  std::is_same<T, BFloat16>::value) {
      using M = opmath_t<T>;
      T* p = reinterpret_cast<T*>(s.data_ptr());
      *p = multiply ? T(M(*p) * M(value)) : T(value);
      return double(M(*p));
    }
    return 0;
  });
}

// Validates the lists; returns true when every tensor shares params[0]'s
// dtype and is contiguous (the fast path).
bool validate(const OptimLists& L, size_t n) {
  const Tensor& p0 = (*L.lists[0])[0];
  require_defined(p0, L.name);
  const Device dev = p0.device();
  const DType dt0 = p0.dtype();
  bool uniform = true;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& p = (*L.lists[0])[i];
    FASTT_CHECK(p.defined(), ValueError, "{}: params[{}] is undefined",
                L.name, i);
    FASTT_CHECK(p.is_floating_point(), RuntimeError,
                "{}: params[{}] must be a floating point tensor, got {}",
                L.name, i, dtype_name(p.dtype()));
    if (FASTT_UNLIKELY(p.device() != dev))
      throw_device_mismatch(L, "params", i, p, "params", 0, p0);
    uniform &= p.dtype() == dt0;
    for (int l = 0; l < kMaxLists; ++l) {
      if (!L.lists[l]) continue;
      const Tensor& t = (*L.lists[l])[i];
      if (l > 0) {
        FASTT_CHECK(t.defined(), ValueError, "{}: {}[{}] is undefined",
                    L.name, L.list_names[l], i);
        if (FASTT_UNLIKELY(!t.sizes().equals(p.sizes()) ||
                           t.dtype() != p.dtype() || t.device() != dev))
          throw_mismatch(L, l, i, t, p);
      }
      if (FASTT_UNLIKELY(!t.is_contiguous())) {
        uniform = false;
        if (l != 1) check_no_internal_overlap(t, L.name);  // written back
      }
    }
    if (L.steps) check_step(L, i, (*L.steps)[i]);
    for (int k = 0; k < 2; ++k)
      if (L.scalar_lists[k])
        check_step(L, i, (*L.scalar_lists[k])[i], L.scalar_names[k]);
  }
  return uniform;
}

void fill_offsets(std::vector<int64_t>& off, const Tensor* params,
                  size_t n) {
  off.resize(n + 1);
  off[0] = 0;
  for (size_t i = 0; i < n; ++i) off[i + 1] = off[i] + params[i].numel();
}

// Mixed dtypes or strided tensors: one kernel call per dtype over dense
// copies, then the written copies are stored back.
FASTT_NOINLINE void run_general(const OptimLists& L, OptimKernelArgs& ka,
                                size_t n, const double* steps,
                                const double* aux) {
  const std::vector<Tensor>& params = *L.lists[0];
  std::vector<DType> dtypes;
  std::vector<KernelFn> fns;
  for (size_t i = 0; i < n; ++i) {
    DType d = params[i].dtype();
    bool seen = false;
    for (DType x : dtypes) seen |= x == d;
    if (!seen) {
      dtypes.push_back(d);
      fns.push_back(lookup_kernel(L.op, params[0].device().type, d));
    }
  }
  std::vector<Tensor> dense[kMaxLists];
  std::vector<size_t> index;
  std::vector<double> sub_steps, sub_aux;
  for (size_t g = 0; g < dtypes.size(); ++g) {
    index.clear();
    sub_steps.clear();
    sub_aux.clear();
    for (auto& v : dense) v.clear();
    for (size_t i = 0; i < n; ++i) {
      if (params[i].dtype() != dtypes[g]) continue;
      index.push_back(i);
      if (steps) sub_steps.push_back(steps[i]);
      if (aux)
        sub_aux.insert(sub_aux.end(), aux + kOptimAux * i,
                       aux + kOptimAux * (i + 1));
      for (int l = 0; l < kMaxLists; ++l)
        if (L.lists[l]) dense[l].push_back((*L.lists[l])[i].contiguous());
    }
    fill_offsets(scratch().offsets, dense[0].data(), index.size());
    ka.n = int64_t(index.size());
    ka.params = dense[0].data();
    ka.grads = dense[1].data();
    for (int s = 0; s < kMaxOptimStates; ++s)
      ka.state[s] = L.lists[2 + s] ? dense[2 + s].data() : nullptr;
    ka.steps = steps ? sub_steps.data() : nullptr;
    ka.aux = aux ? sub_aux.data() : nullptr;
    ka.offsets = scratch().offsets.data();
    KernelArgs args;
    args.i0 = reinterpret_cast<int64_t>(&ka);
    fns[g](args);
    for (size_t j = 0; j < index.size(); ++j)
      for (int l = 0; l < kMaxLists; ++l) {
        if (!L.lists[l] || l == 1) continue;
        const Tensor& orig = (*L.lists[l])[index[j]];
        if (!orig.is_same(dense[l][j])) const_cast<Tensor&>(orig).copy_(
            dense[l][j]);
      }
  }
}

void run_optim(const OptimLists& L, OptimKernelArgs& ka);

// Complex parameters (with their gradients and states, which validate
// requires to share the parameter's dtype) replaced by their real views:
// every update is elementwise, so each part steps on its own (torch's
// _view_as_real in torch.optim).
void run_optim_real_views(const OptimLists& L, OptimKernelArgs& ka) {
  autograd::GradModeGuard no_grad(false);
  std::vector<Tensor> real[kMaxLists];
  OptimLists R = L;
  for (int l = 0; l < kMaxLists; ++l) {
    if (!L.lists[l]) continue;
    for (const Tensor& t : *L.lists[l])
      real[l].push_back(t.defined() && is_complex(t.dtype())
                            ? view_as_real(t)
                            : t);
    R.lists[l] = &real[l];
  }
  run_optim(R, ka);
}

void run_optim(const OptimLists& L, OptimKernelArgs& ka) {
  const std::vector<Tensor>& params = *L.lists[0];
  const size_t n = params.size();
  for (const Tensor& p : params)
    if (FASTT_UNLIKELY(p.defined() && is_complex(p.dtype())))
      return run_optim_real_views(L, ka);
  for (int l = 1; l < kMaxLists; ++l)
    if (L.lists[l])
      FASTT_CHECK(L.lists[l]->size() == n, RuntimeError,
                  "{}: expected {} {} (one per parameter), got {}", L.name, n,
                  L.list_names[l], L.lists[l]->size());
  if (L.steps)
    FASTT_CHECK(L.steps->size() == n, RuntimeError,
                "{}: expected {} state_steps (one per parameter), got {}",
                L.name, n, L.steps->size());
  for (int k = 0; k < 2; ++k)
    if (L.scalar_lists[k])
      FASTT_CHECK(L.scalar_lists[k]->size() == n, RuntimeError,
                  "{}: expected {} {} (one per parameter), got {}", L.name,
                  n, L.scalar_names[k], L.scalar_lists[k]->size());
  if (n == 0) return;
  const bool fast = validate(L, n);
  // Look the kernel up before touching any state, so an unsupported
  // device leaves the step counters as they were.
  KernelFn fn = fast ? lookup_kernel(L.op, params[0].device().type,
                                     params[0].dtype())
                     : nullptr;
  Scratch& sc = scratch();
  const double* steps = nullptr;
  if (L.steps) {
    if (!fast)  // lookups for every dtype first, for the same reason
      for (const Tensor& p : params)
        lookup_kernel(L.op, p.device().type, p.dtype());
    sc.steps.resize(n);
    for (size_t i = 0; i < n; ++i)
      sc.steps[i] = increment_step((*L.steps)[i]);
    steps = sc.steps.data();
  }
  const double* aux = nullptr;
  if (L.aux_fn) {
    sc.aux.resize(n * kOptimAux);
    for (size_t i = 0; i < n; ++i) {
      const Tensor* st[2] = {
          L.scalar_lists[0] ? &(*L.scalar_lists[0])[i] : nullptr,
          L.scalar_lists[1] ? &(*L.scalar_lists[1])[i] : nullptr};
      L.aux_fn(ka, st, steps ? steps[i] : 0.0, &sc.aux[kOptimAux * i]);
    }
    aux = sc.aux.data();
  }
  if (fast) {
    fill_offsets(sc.offsets, params.data(), n);
    ka.n = int64_t(n);
    ka.params = params.data();
    ka.grads = L.lists[1]->data();
    for (int s = 0; s < kMaxOptimStates; ++s)
      ka.state[s] = L.lists[2 + s] ? L.lists[2 + s]->data() : nullptr;
    ka.steps = steps;
    ka.aux = aux;
    ka.offsets = sc.offsets.data();
    KernelArgs args;
    args.i0 = reinterpret_cast<int64_t>(&ka);
    fn(args);
  } else {
    run_general(L, ka, n, steps, aux);
  }
  for (int l = 0; l < kMaxLists; ++l) {
    if (!L.lists[l] || l == 1) continue;
    for (const Tensor& t : *L.lists[l]) t.bump_version();
  }
}

// Sets lists[0..1] and their names; the state lists follow.
void set_lists(OptimLists& L, const std::vector<Tensor>& params,
               const std::vector<Tensor>& grads,
               std::initializer_list<std::pair<const std::vector<Tensor>*,
                                               const char*>> states) {
  L.lists[0] = &params;
  L.lists[1] = &grads;
  L.list_names[0] = "params";
  L.list_names[1] = "grads";
  int l = 2;
  for (const auto& st : states) {
    L.lists[l] = st.first;
    L.list_names[l] = st.second;
    ++l;
  }
}

void adamax_aux(const OptimKernelArgs& a, const Tensor* const*, double step,
                double* out) {
  // clr = lr / bias_correction (torch's Python arithmetic)
  out[0] = -(a.lr / (1 - std::pow(a.beta1, step)));
}

void nadam_aux(const OptimKernelArgs& a, const Tensor* const* sc,
               double step, double* out) {
  const double mu =
      a.beta1 * (1.0 - 0.5 * std::pow(0.96, step * a.momentum_decay));
  const double mu_next =
      a.beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * a.momentum_decay));
  const double mu_product = write_scalar(*sc[0], mu, true);  // *= mu
  const double mu_product_next = mu_product * mu_next;
  out[0] = 1 - std::pow(a.beta2, step);  // bias_correction2
  out[1] = -a.lr * (1.0 - mu) / (1.0 - mu_product);
  out[2] = (-a.lr * mu_next) / (1.0 - mu_product_next);
}

void radam_aux(const OptimKernelArgs& a, const Tensor* const*, double step,
               double* out) {
  const double bc1 = 1 - std::pow(a.beta1, step);
  const double bc2 = 1 - std::pow(a.beta2, step);
  const double rho_inf = 2 / (1 - a.beta2) - 1;
  const double rho_t = rho_inf - 2 * step * std::pow(a.beta2, step) / bc2;
  out[0] = bc1;
  // The rectification term, or 0 for the unrectified update (rho_t > 5
  // makes every factor positive).
  out[1] = rho_t > 5.0
               ? std::pow((rho_t - 4) * (rho_t - 2) * rho_inf /
                              ((rho_inf - 4) * (rho_inf - 2) * rho_t),
                          0.5)
               : 0.0;
  out[2] = std::pow(bc2, 0.5);
}

void asgd_aux(const OptimKernelArgs& a, const Tensor* const* sc, double step,
              double* out) {
  out[0] = read_scalar(*sc[0]);  // eta, mu before this step
  out[1] = read_scalar(*sc[1]);
  out[2] = 0;
  // torch: eta.copy_(torch.as_tensor(python float)), a float32 tensor
  // (the default dtype) whatever eta's dtype; likewise mu.
  write_scalar(*sc[0],
               double(float(a.lr / std::pow(1 + a.lambd * a.lr * step,
                                            a.alpha))),
               false);
  write_scalar(*sc[1], double(float(1 / std::max(1.0, step - a.t0))), false);
}

}  // namespace

void sgd_step_(const std::vector<Tensor>& params,
               const std::vector<Tensor>& grads,
               const std::vector<Tensor>& momentum_bufs, double lr,
               double momentum, double dampening, double weight_decay,
               bool nesterov, bool maximize, bool first_step) {
  OptimLists L{Op::sgd_step, "sgd_step_", "SGD"};
  L.lists[0] = &params;
  L.lists[1] = &grads;
  L.list_names[0] = "params";
  L.list_names[1] = "grads";
  if (momentum != 0) {
    L.lists[2] = &momentum_bufs;
    L.list_names[2] = "momentum_buffers";
  } else {
    FASTT_CHECK(momentum_bufs.empty(), RuntimeError,
                "sgd_step_: momentum_buffers must be empty when momentum is "
                "0, got {}",
                momentum_bufs.size());
  }
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.momentum = momentum;
  ka.dampening = dampening;
  ka.weight_decay = weight_decay;
  ka.nesterov = nesterov;
  ka.maximize = maximize;
  ka.first_step = first_step;
  run_optim(L, ka);
}

void adam_step_(const std::vector<Tensor>& params,
                const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs,
                const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs,
                const std::vector<Tensor>& state_steps, double lr,
                double beta1, double beta2, double eps, double weight_decay,
                bool amsgrad, bool maximize, bool decoupled_weight_decay) {
  OptimLists L{Op::adam_step, "adam_step_", "Adam/AdamW"};
  L.lists[0] = &params;
  L.lists[1] = &grads;
  L.lists[2] = &exp_avgs;
  L.lists[3] = &exp_avg_sqs;
  L.list_names[0] = "params";
  L.list_names[1] = "grads";
  L.list_names[2] = "exp_avgs";
  L.list_names[3] = "exp_avg_sqs";
  if (amsgrad) {
    L.lists[4] = &max_exp_avg_sqs;
    L.list_names[4] = "max_exp_avg_sqs";
  } else {
    FASTT_CHECK(max_exp_avg_sqs.empty(), RuntimeError,
                "adam_step_: max_exp_avg_sqs must be empty unless amsgrad, "
                "got {}",
                max_exp_avg_sqs.size());
  }
  L.steps = &state_steps;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.beta1 = beta1;
  ka.beta2 = beta2;
  ka.eps = eps;
  ka.weight_decay = weight_decay;
  ka.amsgrad = amsgrad;
  ka.maximize = maximize;
  ka.decoupled = decoupled_weight_decay;
  run_optim(L, ka);
}

void rmsprop_step_(const std::vector<Tensor>& params,
                   const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs,
                   const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& momentum_bufs,
                   const std::vector<Tensor>& state_steps, double lr,
                   double alpha, double eps, double weight_decay,
                   double momentum, bool centered, bool maximize) {
  OptimLists L{Op::rmsprop_step, "rmsprop_step_", "RMSprop"};
  L.lists[0] = &params;
  L.lists[1] = &grads;
  L.lists[2] = &square_avgs;
  L.list_names[0] = "params";
  L.list_names[1] = "grads";
  L.list_names[2] = "square_avgs";
  if (centered) {
    L.lists[3] = &grad_avgs;
    L.list_names[3] = "grad_avgs";
  } else {
    FASTT_CHECK(grad_avgs.empty(), RuntimeError,
                "rmsprop_step_: grad_avgs must be empty unless centered, "
                "got {}",
                grad_avgs.size());
  }
  if (momentum > 0) {
    L.lists[4] = &momentum_bufs;
    L.list_names[4] = "momentum_buffers";
  } else {
    FASTT_CHECK(momentum_bufs.empty(), RuntimeError,
                "rmsprop_step_: momentum_buffers must be empty unless "
                "momentum > 0, got {}",
                momentum_bufs.size());
  }
  L.steps = &state_steps;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.alpha = alpha;
  ka.eps = eps;
  ka.weight_decay = weight_decay;
  ka.momentum = momentum;
  ka.centered = centered;
  ka.maximize = maximize;
  run_optim(L, ka);
}

void adagrad_step_(const std::vector<Tensor>& params,
                   const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& state_sums,
                   const std::vector<Tensor>& state_steps, double lr,
                   double lr_decay, double weight_decay, double eps,
                   bool maximize) {
  OptimLists L{Op::adagrad_step, "adagrad_step_", "Adagrad"};
  L.lists[0] = &params;
  L.lists[1] = &grads;
  L.lists[2] = &state_sums;
  L.list_names[0] = "params";
  L.list_names[1] = "grads";
  L.list_names[2] = "state_sums";
  L.steps = &state_steps;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.lr_decay = lr_decay;
  ka.weight_decay = weight_decay;
  ka.eps = eps;
  ka.maximize = maximize;
  run_optim(L, ka);
}

void adadelta_step_(const std::vector<Tensor>& params,
                    const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& square_avgs,
                    const std::vector<Tensor>& acc_deltas,
                    const std::vector<Tensor>& state_steps, double lr,
                    double rho, double eps, double weight_decay,
                    bool maximize) {
  OptimLists L{Op::adadelta_step, "adadelta_step_", "Adadelta"};
  set_lists(L, params, grads,
            {{&square_avgs, "square_avgs"}, {&acc_deltas, "acc_deltas"}});
  L.steps = &state_steps;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.rho = rho;
  ka.eps = eps;
  ka.weight_decay = weight_decay;
  ka.maximize = maximize;
  run_optim(L, ka);
}

void adamax_step_(const std::vector<Tensor>& params,
                  const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& exp_avgs,
                  const std::vector<Tensor>& exp_infs,
                  const std::vector<Tensor>& state_steps, double lr,
                  double beta1, double beta2, double eps, double weight_decay,
                  bool maximize) {
  OptimLists L{Op::adamax_step, "adamax_step_", "Adamax"};
  set_lists(L, params, grads,
            {{&exp_avgs, "exp_avgs"}, {&exp_infs, "exp_infs"}});
  L.steps = &state_steps;
  L.aux_fn = adamax_aux;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.beta1 = beta1;
  ka.beta2 = beta2;
  ka.eps = eps;
  ka.weight_decay = weight_decay;
  ka.maximize = maximize;
  run_optim(L, ka);
}

void nadam_step_(const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& mu_products,
                 const std::vector<Tensor>& state_steps, double lr,
                 double beta1, double beta2, double eps, double weight_decay,
                 double momentum_decay, bool maximize,
                 bool decoupled_weight_decay) {
  OptimLists L{Op::nadam_step, "nadam_step_", "NAdam"};
  set_lists(L, params, grads,
            {{&exp_avgs, "exp_avgs"}, {&exp_avg_sqs, "exp_avg_sqs"}});
  L.steps = &state_steps;
  L.scalar_lists[0] = &mu_products;
  L.scalar_names[0] = "mu_products";
  L.aux_fn = nadam_aux;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.beta1 = beta1;
  ka.beta2 = beta2;
  ka.eps = eps;
  ka.weight_decay = weight_decay;
  ka.momentum_decay = momentum_decay;
  ka.maximize = maximize;
  ka.decoupled = decoupled_weight_decay;
  run_optim(L, ka);
}

void radam_step_(const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& state_steps, double lr,
                 double beta1, double beta2, double eps, double weight_decay,
                 bool maximize, bool decoupled_weight_decay) {
  OptimLists L{Op::radam_step, "radam_step_", "RAdam"};
  set_lists(L, params, grads,
            {{&exp_avgs, "exp_avgs"}, {&exp_avg_sqs, "exp_avg_sqs"}});
  L.steps = &state_steps;
  L.aux_fn = radam_aux;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.beta1 = beta1;
  ka.beta2 = beta2;
  ka.eps = eps;
  ka.weight_decay = weight_decay;
  ka.maximize = maximize;
  ka.decoupled = decoupled_weight_decay;
  run_optim(L, ka);
}

void asgd_step_(const std::vector<Tensor>& params,
                const std::vector<Tensor>& grads,
                const std::vector<Tensor>& axs,
                const std::vector<Tensor>& etas,
                const std::vector<Tensor>& mus,
                const std::vector<Tensor>& state_steps, double lr,
                double lambd, double alpha, double t0, double weight_decay,
                bool maximize) {
  OptimLists L{Op::asgd_step, "asgd_step_", "ASGD"};
  set_lists(L, params, grads, {{&axs, "axs"}});
  L.steps = &state_steps;
  L.scalar_lists[0] = &etas;
  L.scalar_names[0] = "etas";
  L.scalar_lists[1] = &mus;
  L.scalar_names[1] = "mus";
  L.aux_fn = asgd_aux;
  OptimKernelArgs ka;
  ka.lr = lr;
  ka.lambd = lambd;
  ka.alpha = alpha;
  ka.t0 = t0;
  ka.weight_decay = weight_decay;
  ka.maximize = maximize;
  run_optim(L, ka);
}

void rprop_step_(const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& prevs,
                 const std::vector<Tensor>& step_sizes,
                 const std::vector<Tensor>& state_steps, double etaminus,
                 double etaplus, double step_size_min, double step_size_max,
                 bool maximize) {
  OptimLists L{Op::rprop_step, "rprop_step_", "Rprop"};
  set_lists(L, params, grads,
            {{&prevs, "prevs"}, {&step_sizes, "step_sizes"}});
  L.steps = &state_steps;
  OptimKernelArgs ka;
  ka.etaminus = etaminus;
  ka.etaplus = etaplus;
  ka.step_size_min = step_size_min;
  ka.step_size_max = step_size_max;
  ka.maximize = maximize;
  run_optim(L, ka);
}

}  // namespace fastt
