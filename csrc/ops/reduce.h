// Reductions (sum, mean, prod, amax/amin, max/min, argmax/argmin, var/std,
// norm, all/any, logsumexp), scans (cumsum, cumprod) and softmax, with
// torch's dims, keepdim and dtype rules. Kernels: kernels/cpu/reduce.cpp and
// kernels/cpu/softmax.cpp. To add one: a row in ops.def, a functor there,
// an entry point here.
#pragma once
#include <optional>
#include <tuple>
#include <utility>

#include "../tensor.h"

namespace fastt {

// `dims` lists the dims to reduce; empty means every dim. Negative dims
// wrap; a repeated dim is an error. With keepdim the reduced dims stay as 1.
//
// sum/prod: integer and bool inputs accumulate and return int64. With
// `dtype` the input is converted first and the result has that dtype.
Tensor sum(const Tensor& a, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& a, IntList dims, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& a, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& a, int64_t dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// mean: floating inputs only, unless a floating `dtype` is given.
Tensor mean(const Tensor& a, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& a, IntList dims, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);

// amax/amin keep the dtype and propagate NaN; an empty reduced dim is an
// error (there is no identity).
Tensor amax(const Tensor& a, IntList dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, IntList dims = {}, bool keepdim = false);
// max()/min() of the whole tensor as a 0-d tensor.
Tensor max(const Tensor& a);
Tensor min(const Tensor& a);
// (values, int64 indices) along one dim; the first extreme (or first NaN)
// wins.
std::pair<Tensor, Tensor> max(const Tensor& a, int64_t dim,
                              bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& a, int64_t dim,
                              bool keepdim = false);
// int64 index of the extreme; without a dim, into the flattened tensor.
Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt,
              bool keepdim = false);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt,
              bool keepdim = false);

// var/std with Bessel-style `correction` (1: unbiased); floating only.
Tensor var(const Tensor& a, IntList dims = {}, double correction = 1,
           bool keepdim = false);
Tensor std(const Tensor& a, IntList dims = {}, double correction = 1,
           bool keepdim = false);
// (var, mean) and (std, mean) in one pass.
std::pair<Tensor, Tensor> var_mean(const Tensor& a, IntList dims = {},
                                   double correction = 1,
                                   bool keepdim = false);
std::pair<Tensor, Tensor> std_mean(const Tensor& a, IntList dims = {},
                                   double correction = 1,
                                   bool keepdim = false);

// Vector p-norm (torch.linalg.vector_norm): p = 0 counts nonzeros, +-inf
// take max/min |x|, else (sum |x|^p)^(1/p). Floating inputs (or dtype).
Tensor norm(const Tensor& a, double p = 2, IntList dims = {},
            bool keepdim = false, std::optional<DType> dtype = std::nullopt);

// Boolean results for any input dtype.
Tensor all(const Tensor& a);
Tensor all(const Tensor& a, IntList dims, bool keepdim = false);
Tensor any(const Tensor& a);
Tensor any(const Tensor& a, IntList dims, bool keepdim = false);

// log(sum(exp(x))) computed stably; integer inputs give the default float.
Tensor logsumexp(const Tensor& a, IntList dims, bool keepdim = false);

// Running sum/product along `dim`; integer inputs give int64.
// cummax (is_max) / cummin's indices along dim: int64, the latest index of
// the running extreme, NaN winning (values and gradients are a gather at
// these, python/fastt/_composite.py).
Tensor cum_extreme_index(const Tensor& a, int64_t dim, bool is_max);
// cummax / cummin's values and indices without a gradient: on the CPU in
// one pass (the values as the input's elements at the indices).
std::tuple<Tensor, Tensor> cum_extreme(const Tensor& a, int64_t dim,
                                       bool is_max);
Tensor cumsum(const Tensor& a, int64_t dim,
              std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& a, int64_t dim,
               std::optional<DType> dtype = std::nullopt);

// Along `dim`; floating inputs (or a floating `dtype`, applied first).
Tensor softmax(const Tensor& a, int64_t dim,
               std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& a, int64_t dim,
                   std::optional<DType> dtype = std::nullopt);

}  // namespace fastt
