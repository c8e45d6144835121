// Composite elementwise ops built from differentiable core ops (autograd
// comes from their parts): logit, nan_to_num, positive, rsub, float_power,
// ldexp, frexp, isreal, round(decimals). Bound by binder rows (python/src/special_ops.cpp).
#pragma once
#include <optional>
#include <tuple>

#include "csrc/tensor.h"

namespace fastt {

Tensor logit(const Tensor& a, std::optional<double> eps = std::nullopt);
Tensor nan_to_num(const Tensor& a, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
Tensor positive(const Tensor& a);
Tensor isreal(const Tensor& a);
Tensor rsub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor float_power(const Tensor& a, const Tensor& b);
Tensor float_power(const Tensor& a, const Scalar& b);
Tensor float_power(const Scalar& a, const Tensor& b);
Tensor ldexp(const Tensor& a, const Tensor& b);
std::tuple<Tensor, Tensor> frexp(const Tensor& a);
// round to `decimals` decimal places (negative: to tens, hundreds, ...),
// half to even; decimals == 0 is the round row itself.
Tensor round(const Tensor& a, int64_t decimals);
// The n-th derivative of digamma: digamma (n = 0), else (-1)^(n+1) n!
// zeta(n + 1, x) (differentiable in x through zeta's q).
Tensor polygamma(int64_t n, const Tensor& x);

// In-place forms: the op out of place, written back into self (recorded
// through autograd::inplace when self takes part in autograd).
Tensor& logit_(Tensor& a, std::optional<double> eps = std::nullopt);
Tensor& nan_to_num_(Tensor& a, std::optional<double> nan = std::nullopt,
                    std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt);
Tensor& float_power_(Tensor& a, const Tensor& b);
Tensor& float_power_(Tensor& a, const Scalar& b);
Tensor& ldexp_(Tensor& a, const Tensor& b);
Tensor& round_(Tensor& a, int64_t decimals);
Tensor& polygamma_(Tensor& a, int64_t n);

}  // namespace fastt
