// Matrix products: matmul (NumPy/torch semantics), mm, bmm, addmm, baddbmm,
// dot, mv, outer and linear. All but outer end in one Op::gemm call; add a
// product by building its operands as [..., M, K] @ [..., K, N] views.
#pragma once
#include "../tensor.h"

namespace fastt {

// torch.matmul: 1-D . 1-D -> 0-d dot, 1-D @ 2-D and 2-D @ 1-D drop the
// vector's dim, N-D operands broadcast their batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
// 2-D @ 2-D only.
Tensor mm(const Tensor& a, const Tensor& b);
// [B, M, K] @ [B, K, N], no broadcasting.
Tensor bmm(const Tensor& a, const Tensor& b);
// beta * input + alpha * (m1 @ m2); input broadcasts to [M, N]. beta == 0
// ignores input entirely (NaN and inf there do not propagate).
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2,
             const Scalar& beta = 1, const Scalar& alpha = 1);
// beta * input + alpha * bmm(b1, b2); input broadcasts to [B, M, N].
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2,
               const Scalar& beta = 1, const Scalar& alpha = 1);
// 1-D . 1-D -> 0-d.
Tensor dot(const Tensor& a, const Tensor& b);
// [M, K] @ [K] -> [M].
Tensor mv(const Tensor& m, const Tensor& v);
// a[i] * b[j] -> [n, m] (promotes dtypes like mul, as torch.outer does).
Tensor outer(const Tensor& a, const Tensor& b);
// beta * input + alpha * (mat @ vec); input broadcasts to [M].
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec,
             const Scalar& beta = 1, const Scalar& alpha = 1);
// beta * input + alpha * outer(vec1, vec2); input broadcasts to [N, M].
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2,
            const Scalar& beta = 1, const Scalar& alpha = 1);
// beta * input + alpha * sum_b b1[b] @ b2[b]: one [M, B*K] @ [B*K, N] gemm.
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2,
              const Scalar& beta = 1, const Scalar& alpha = 1);
// dot of real vectors (conjugates the first for complex, which fastt lacks).
Tensor vdot(const Tensor& a, const Tensor& b);
// torch.nn.functional.linear: x @ weight^T + bias, weight [out, in] (or
// [in]), bias optional (pass an undefined Tensor), broadcast to the result.
Tensor linear(const Tensor& x, const Tensor& weight,
              const Tensor& bias = Tensor());

}  // namespace fastt
