// The recording side of every differentiable core op. An op entry point
// calls its counterpart here only when autograd::should_record(...) is true:
// it runs the op with grad mode off, then records one node saving what its
// formula (FASTT_FORMULA in formulas_<family>.cpp) needs. Ops not listed
// are either not differentiable or composed of listed ops (which record
// themselves).
#pragma once
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/grad_fn.h"
#include "csrc/tensor.h"

namespace fastt {
namespace autograd {

// A non-owning reference to a callable (no allocation, unlike
// std::function): valid only during the call it is passed to.
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<
                         !std::is_same<std::decay_t<F>, FnRef>::value>>
  FnRef(F&& f)  // NOLINT: implicit on purpose
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, A... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(
              std::forward<A>(a)...);
        }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};
using Compute = FnRef<Tensor()>;

// ---- elementwise ----
// Unary ops (exp, relu, ...): `save` is the row's (elementwise.def).
Tensor unary(GradFn fn, Save save, Tensor (*op)(const Tensor&),
             const Tensor& a);
Tensor gelu(const Tensor& a, const char* approximate);
Tensor leaky_relu(const Tensor& a, double slope);
Tensor pow(const Tensor& a, const Scalar& e);
Tensor pow(const Scalar& a, const Tensor& e);
Tensor clamp(const Tensor& a, const Scalar* lo, const Scalar* hi);
Tensor clamp(const Tensor& a, const Tensor& lo, const Tensor& hi);
// Binary ops: either side may be a scalar (pass nullptr for that tensor).
// `save`: what the formula reads (In: the tensor inputs, InOut: also the
// result as saved[2]).
Tensor binary(GradFn fn, Save save, const Tensor* a, const Tensor* b,
              const Scalar* sa, const Scalar* sb, const Scalar& alpha,
              Compute compute);
Tensor where(const Tensor& c, const Tensor* a, const Tensor* b,
             Compute compute);
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor* w,
            const Scalar& ws);
Tensor addc(GradFn fn, const Tensor& a, const Tensor& t1, const Tensor& t2,
            const Scalar& value);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& v);
// An in-place op on a tensor that takes part in autograd: runs `op` out of
// place on a copy of `self` (recorded), writes the result into self and
// moves self's history to the new node (through CopySlices for views).
Tensor& inplace(Tensor& self, const char* name,
                FnRef<Tensor(const Tensor&)> op);
// After r (recorded) was written into self: self takes r's history
// (through CopySlices for views).
void commit_inplace(Tensor& self, const Tensor& r);
// `out=` forms do not record: torch's error when they would have to.
void check_out(const char* name, bool any_requires_grad);

// ---- reductions, scans, softmax ----
Tensor sum(const Tensor& a, IntList dims, bool keepdim, bool all,
           Compute compute);
Tensor mean(const Tensor& a, IntList dims, bool keepdim, bool all,
            Compute compute);
Tensor prod(const Tensor& a, std::optional<int64_t> dim, bool keepdim,
            Compute compute);
Tensor amax_amin(bool is_max, const Tensor& a, IntList dims, bool keepdim,
                 Compute compute);
std::pair<Tensor, Tensor> max_min_dim(bool is_max, const Tensor& a,
                                      int64_t dim, bool keepdim);
Tensor var_std(bool is_std, const Tensor& a, IntList dims, double correction,
               bool keepdim);
std::pair<Tensor, Tensor> var_std_mean(bool is_std, const Tensor& a,
                                       IntList dims, double correction,
                                       bool keepdim);
Tensor norm(const Tensor& a, double p, IntList dims, bool keepdim,
            Compute compute);
Tensor logsumexp(const Tensor& a, IntList dims, bool keepdim);
Tensor cumsum_cumprod(bool is_sum, const Tensor& a, int64_t dim,
                      Compute compute);
Tensor softmax(bool is_log, const Tensor& a, int64_t dim,
               Compute compute);

// ---- linear algebra ----
Tensor matmul(const Tensor& a, const Tensor& b,
              Compute compute);
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2,
             const Scalar& beta, const Scalar& alpha,
             Compute compute);
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);

// ---- copies and views (called after the view is built) ----
void view_of(GradFn fn, const Tensor& in, const Tensor& out, int64_t i0 = 0,
             int64_t i1 = 0, int64_t i2 = 0, IntList extra = {});
Tensor to_copy(const Tensor& in, Compute compute);
Tensor clone(const Tensor& in);
Tensor& copy_(Tensor& self, const Tensor& src);
// Makes the view `self` an AsStrided record of `base`'s current history.
void rebase_view(const Tensor& self, const Tensor& base);

}  // namespace autograd
}  // namespace fastt
