// Mixed precision (torch.autocast): per thread and device type, whether
// autocast is on and its low-precision dtype. The ops it changes call
// FASTT_AUTOCAST first thing: one thread-local flag test when autocast is
// off. When on for the device of the op's first tensor, the inputs are
// cast by the op's policy (the casts are recorded by autograd) and the op
// runs with autocast suspended, so nested ops keep what they were given:
//   Lower   matmul-class ops and convolutions (and recurrent layers) run in
//           the autocast dtype (float32 and the other 16-bit type are cast
//           down; float64 stays, as torch)
//   Fp32    losses and precision-sensitive reductions run in float32
//           (16-bit inputs are cast up)
// CudaFp32 is Fp32 on CUDA only (torch's CUDA list: softmax, layer norm,
// sum, cumsum, ...; on the CPU those ops follow their inputs). Casts of
// leaf tensors that require grad (weights) are cached until the outermost
// autocast region exits (torch's cache_enabled).
#pragma once
#include "device.h"
#include "dtype.h"
#include "macros.h"
#include "tensor.h"

namespace fastt {
namespace autocast {

enum class Policy : uint8_t { Lower, Fp32, CudaLower, CudaFp32 };

// Any device type has autocast on in this thread (the op path's test).
extern FASTT_TLS_IE thread_local bool t_active;

bool is_enabled(DeviceType d);
void set_enabled(DeviceType d, bool on);
DType dtype(DeviceType d);  // float16 on CUDA, bfloat16 on CPU by default
void set_dtype(DeviceType d, DType dt);
bool cache_enabled();
void set_cache_enabled(bool on);
void clear_cache();

// Whether `policy` changes an op whose first tensor is `t`.
bool applies(Policy policy, const Tensor& t);
// t as the policy wants it (undefined and non-floating tensors unchanged).
Tensor cast(Policy policy, DeviceType d, const Tensor& t);

// Autocast off in this thread for a scope (the op runs on cast inputs).
class Suspend {
 public:
  Suspend() : prev_(t_active) { t_active = false; }
  ~Suspend() { t_active = prev_; }
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool prev_;
};

}  // namespace autocast
}  // namespace fastt

// In an op entry point: when autocast applies to `first` under `policy`,
// returns `call` (an expression of the op on C(arg) for each tensor arg)
// with autocast suspended. C is the cast of the policy.
#define FASTT_AUTOCAST(policy, first, call)                                   \
  do {                                                                        \
    if (FASTT_UNLIKELY(::fastt::autocast::t_active) &&                        \
        ::fastt::autocast::applies(::fastt::autocast::Policy::policy,         \
                                   (first))) {                                \
      const ::fastt::DeviceType ac_dev_ = (first).device().type;              \
      auto C = [&](const ::fastt::Tensor& ac_t_) {                            \
        return ::fastt::autocast::cast(::fastt::autocast::Policy::policy,     \
                                       ac_dev_, ac_t_);                       \
      };                                                                      \
      ::fastt::autocast::Suspend ac_suspend_;                                 \
      return call;                                                            \
    }                                                                         \
  } while (0)
