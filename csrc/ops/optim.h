// Fused multi-tensor optimizer steps: each call updates a whole list of
// parameters (and their state) with one dispatch and one kernel call, with
// torch.optim's single-tensor (foreach=False) arithmetic. To add an
// algorithm: a row in ops.def, a kernel in kernels/cpu/optim.cpp reading
// OptimKernelArgs, an entry point here.
#pragma once
#include <vector>

#include "../tensor.h"

namespace fastt {

// Every list holds one tensor per parameter, with the parameter's shape,
// dtype (floating) and device. Parameters and state are written in place
// (their version counters are bumped). Non-contiguous tensors are accepted
// (computed on a dense copy and written back); lists may mix dtypes (one
// kernel call per dtype). Empty lists are a no-op.
//
// `state_steps` holds one-element floating CPU tensors (torch's
// state["step"]); each is incremented by one and its new value drives the
// bias corrections, so parameters that skipped steps keep their own count.

// torch.optim.SGD. momentum_bufs is empty when momentum == 0; otherwise the
// buffers are overwritten with the (decayed) gradient when first_step is
// true (torch's buf = grad.clone()) and updated otherwise.
void sgd_step_(const std::vector<Tensor>& params,
               const std::vector<Tensor>& grads,
               const std::vector<Tensor>& momentum_bufs, double lr,
               double momentum, double dampening, double weight_decay,
               bool nesterov, bool maximize, bool first_step);

// torch.optim.Adam, and AdamW with decoupled_weight_decay. max_exp_avg_sqs
// is empty unless amsgrad.
void adam_step_(const std::vector<Tensor>& params,
                const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs,
                const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs,
                const std::vector<Tensor>& state_steps, double lr,
                double beta1, double beta2, double eps, double weight_decay,
                bool amsgrad, bool maximize, bool decoupled_weight_decay);

// torch.optim.RMSprop. grad_avgs is empty unless centered, momentum_bufs
// empty unless momentum > 0.
void rmsprop_step_(const std::vector<Tensor>& params,
                   const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs,
                   const std::vector<Tensor>& grad_avgs,
                   const std::vector<Tensor>& momentum_bufs,
                   const std::vector<Tensor>& state_steps, double lr,
                   double alpha, double eps, double weight_decay,
                   double momentum, bool centered, bool maximize);

// torch.optim.Adagrad (dense gradients). state_sums start at the
// optimizer's initial_accumulator_value (the caller fills them).
void adagrad_step_(const std::vector<Tensor>& params,
                   const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& state_sums,
                   const std::vector<Tensor>& state_steps, double lr,
                   double lr_decay, double weight_decay, double eps,
                   bool maximize);

// torch.optim.Adadelta.
void adadelta_step_(const std::vector<Tensor>& params,
                    const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& square_avgs,
                    const std::vector<Tensor>& acc_deltas,
                    const std::vector<Tensor>& state_steps, double lr,
                    double rho, double eps, double weight_decay,
                    bool maximize);

// torch.optim.Adamax.
void adamax_step_(const std::vector<Tensor>& params,
                  const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& exp_avgs,
                  const std::vector<Tensor>& exp_infs,
                  const std::vector<Tensor>& state_steps, double lr,
                  double beta1, double beta2, double eps, double weight_decay,
                  bool maximize);

// torch.optim.NAdam. mu_products holds one-element floating CPU tensors
// (torch's state["mu_product"]), multiplied by this step's mu in their
// dtype before the update.
void nadam_step_(const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& mu_products,
                 const std::vector<Tensor>& state_steps, double lr,
                 double beta1, double beta2, double eps, double weight_decay,
                 double momentum_decay, bool maximize,
                 bool decoupled_weight_decay);

// torch.optim.RAdam (the rectified update once rho_t > 5).
void radam_step_(const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs,
                 const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& state_steps, double lr,
                 double beta1, double beta2, double eps, double weight_decay,
                 bool maximize, bool decoupled_weight_decay);

// torch.optim.ASGD. etas and mus hold one-element floating CPU tensors
// (torch's state["eta"], state["mu"]): the update uses their values, then
// they are set from the new step count like torch.
void asgd_step_(const std::vector<Tensor>& params,
                const std::vector<Tensor>& grads,
                const std::vector<Tensor>& axs,
                const std::vector<Tensor>& etas,
                const std::vector<Tensor>& mus,
                const std::vector<Tensor>& state_steps, double lr,
                double lambd, double alpha, double t0, double weight_decay,
                bool maximize);

// torch.optim.Rprop. step_sizes start at the optimizer's lr (the caller
// fills them), prevs at zero.
void rprop_step_(const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& prevs,
                 const std::vector<Tensor>& step_sizes,
                 const std::vector<Tensor>& state_steps, double etaminus,
                 double etaplus, double step_size_min, double step_size_max,
                 bool maximize);

// The CPU loops come in two builds on x86: with fused multiply-adds where
// torch's AVX2/AVX512 kernels fuse them (picked when the CPU has AVX2+FMA,
// whatever level the other kernels run at: a target attribute builds them)
// and without (torch's baseline kernels). Tests switch between them;
// enabling FMA on a CPU without it is ignored.
bool optim_fma_enabled();
void set_optim_fma_enabled(bool on);

// What an optimizer kernel reads; KernelArgs::i0 holds its address. All
// tensors are dense, of the kernel's dtype, and validated by the op layer.
constexpr int kMaxOptimStates = 3;
constexpr int kOptimAux = 3;  // per-tensor op-layer scalars
struct OptimKernelArgs {
  int64_t n = 0;                          // tensors per list
  const Tensor* params = nullptr;
  const Tensor* grads = nullptr;
  const Tensor* state[kMaxOptimStates] = {};  // per kernel (optim.cpp)
  const double* steps = nullptr;          // per tensor, after the increment
  const int64_t* offsets = nullptr;       // n + 1 prefix sums of numel
  const double* scalars = nullptr;        // per tensor, kernel-computed
  // kOptimAux per tensor, computed by the op layer after the step
  // increment (adadelta..rprop: see each entry point in optim.cpp).
  const double* aux = nullptr;
  double lr = 0, weight_decay = 0, eps = 0, momentum = 0, dampening = 0;
  double beta1 = 0, beta2 = 0, alpha = 0, lr_decay = 0;
  double rho = 0, momentum_decay = 0, lambd = 0, t0 = 0;
  double etaminus = 0, etaplus = 0, step_size_min = 0, step_size_max = 0;
  bool maximize = false, nesterov = false, first_step = false;
  bool amsgrad = false, decoupled = false, centered = false;
};

}  // namespace fastt
