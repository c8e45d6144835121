// Tensor factories (empty, zeros, full, arange, linspace, eye, *_like) and
// random sampling (rand, randn, randint, randperm, uniform_, normal_,
// bernoulli) with torch's names, defaults and error messages. Random ops
// take an optional Generator (nullptr: the default one). To add a factory:
// a row in ops.def, a kernel in kernels/cpu/factory.cpp, an entry here.
#pragma once
#include <optional>

#include "../generator.h"
#include "../tensor.h"

namespace fastt {

// ---- filled factories (dtype defaults to the default float dtype) ----
Tensor empty(IntList sizes, std::optional<DType> dtype = std::nullopt,
             Device device = kCPU);
Tensor zeros(IntList sizes, std::optional<DType> dtype = std::nullopt,
             Device device = kCPU);
Tensor ones(IntList sizes, std::optional<DType> dtype = std::nullopt,
            Device device = kCPU);
// dtype defaults to the value's: bool -> bool, int -> int64, float ->
// the default float dtype.
Tensor full(IntList sizes, const Scalar& value,
            std::optional<DType> dtype = std::nullopt, Device device = kCPU);

// ---- *_like: t's shape (contiguous), dtype and device unless given ----
Tensor empty_like(const Tensor& t, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& value,
                 std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt);
Tensor rand_like(const Tensor& t, std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt,
                 Generator* generator = nullptr);
Tensor randn_like(const Tensor& t, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt,
                  Generator* generator = nullptr);
Tensor randint_like(const Tensor& t, int64_t high,
                    std::optional<DType> dtype = std::nullopt,
                    std::optional<Device> device = std::nullopt,
                    Generator* generator = nullptr);
Tensor randint_like(const Tensor& t, int64_t low, int64_t high,
                    std::optional<DType> dtype = std::nullopt,
                    std::optional<Device> device = std::nullopt,
                    Generator* generator = nullptr);

// ---- ranges ----
// [start, end) by step; int64 when every bound is an integer, else the
// default float dtype. Size ceil((end - start) / step), as torch.
Tensor arange(const Scalar& end, std::optional<DType> dtype = std::nullopt,
              Device device = kCPU);
Tensor arange(const Scalar& start, const Scalar& end,
              std::optional<DType> dtype = std::nullopt, Device device = kCPU);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              std::optional<DType> dtype = std::nullopt, Device device = kCPU);
// `steps` points from start to end inclusive (computed from both ends).
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                std::optional<DType> dtype = std::nullopt,
                Device device = kCPU);
// n x m identity (m = n when omitted).
Tensor eye(int64_t n, std::optional<DType> dtype = std::nullopt,
           Device device = kCPU);
Tensor eye(int64_t n, int64_t m, std::optional<DType> dtype = std::nullopt,
           Device device = kCPU);

// ---- random ----
// Uniform on [0, 1) and standard normal; floating dtypes only.
Tensor rand(IntList sizes, std::optional<DType> dtype = std::nullopt,
            Device device = kCPU, Generator* generator = nullptr);
Tensor randn(IntList sizes, std::optional<DType> dtype = std::nullopt,
             Device device = kCPU, Generator* generator = nullptr);
// Integers in [low, high) (low = 0 when omitted); int64 by default.
Tensor randint(int64_t high, IntList sizes,
               std::optional<DType> dtype = std::nullopt, Device device = kCPU,
               Generator* generator = nullptr);
Tensor randint(int64_t low, int64_t high, IntList sizes,
               std::optional<DType> dtype = std::nullopt, Device device = kCPU,
               Generator* generator = nullptr);
// A random permutation of 0..n-1; int64 by default.
Tensor randperm(int64_t n, std::optional<DType> dtype = std::nullopt,
                Device device = kCPU, Generator* generator = nullptr);

// In place, any layout (values follow the logical row-major order).
Tensor& uniform_(Tensor& t, double from = 0.0, double to = 1.0,
                 Generator* generator = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0,
                Generator* generator = nullptr);
// t = integers in [low, high) (torch's random_(from, to)).
Tensor& random_(Tensor& t, int64_t low, int64_t high,
                Generator* generator = nullptr);

// 0/1 draws with probability p: bernoulli(p) has p's shape and (floating)
// dtype; bernoulli_ keeps t's dtype, with p a number or a floating tensor
// broadcastable to t.
Tensor bernoulli(const Tensor& p, Generator* generator = nullptr);
Tensor& bernoulli_(Tensor& t, double p = 0.5, Generator* generator = nullptr);
Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* generator = nullptr);

// ---- samplers derived from uniform/normal draws (ops/random.cpp) ----
// In place, floating t (geometric_: any numeric t), torch's parameters.
Tensor& exponential_(Tensor& t, double lambd = 1.0,
                     Generator* generator = nullptr);
Tensor& cauchy_(Tensor& t, double median = 0.0, double sigma = 1.0,
                Generator* generator = nullptr);
Tensor& log_normal_(Tensor& t, double mean = 1.0, double std = 2.0,
                    Generator* generator = nullptr);
Tensor& geometric_(Tensor& t, double p, Generator* generator = nullptr);
// normal(mean, std): a draw per element of the broadcast parameters.
Tensor normal(const Tensor& mean, const Tensor& std,
              Generator* generator = nullptr);
Tensor normal(const Tensor& mean, double std, Generator* generator = nullptr);
Tensor normal(double mean, const Tensor& std, Generator* generator = nullptr);
Tensor normal(double mean, double std, IntList sizes,
              std::optional<DType> dtype = std::nullopt, Device device = kCPU,
              Generator* generator = nullptr);
// n category indices per row of probs (1-D or 2-D, unnormalised weights);
// int64, without replacement unless `replacement`.
Tensor multinomial(const Tensor& probs, int64_t n, bool replacement = false,
                   Generator* generator = nullptr);
// A Poisson(rate) draw per element of rates (floating, >= 0), of its dtype;
// differentiable with a zero gradient, as torch's.
Tensor poisson(const Tensor& rates, Generator* generator = nullptr);

}  // namespace fastt
