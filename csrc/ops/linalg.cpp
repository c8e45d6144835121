// Matrix-product entry points. Each validates (dims, shapes, dtypes,
// devices) with torch's messages, shapes its operands as [..., M, K] and
// [..., K, N] views (broadcast batch dims get stride 0, so nothing is
// copied), allocates the result and makes one Op::gemm call (contract in
// kernels/cpu/linalg.cpp). A new product only needs new views.
#include "csrc/autocast.h"
#include "linalg.h"

#include <algorithm>
#include <string>

#include "../dispatch.h"
#include "complex.h"
#include "elementwise.h"
#include "factory.h"

#include "autograd/functions.h"
#include "csrc/autograd.h"

namespace fastt {
namespace {

inline void check_defined(const char* op, const Tensor& t, const char* name) {
  FASTT_CHECK(t.defined(), ValueError,
              "{}: got an undefined tensor for argument '{}'", op, name);
}

inline void check_device(const char* op, const Tensor& a, const Tensor& b) {
  FASTT_CHECK(a.device() == b.device(), RuntimeError,
              "{}: Expected all tensors to be on the same device, but found "
              "at least two devices, {} and {}!",
              op, a.device().str(), b.device().str());
}

// torch requires equal dtypes for products (no promotion).
inline void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  check_device(op, a, b);
  FASTT_CHECK(a.dtype() == b.dtype(), RuntimeError,
              "{}: expected m1 and m2 to have the same dtype, but got: {} != "
              "{}",
              op, dtype_name(a.dtype()), dtype_name(b.dtype()));
}

inline void check_input(const char* op, const Tensor& input,
                        const Tensor& m) {
  check_device(op, input, m);
  FASTT_CHECK(input.dtype() == m.dtype(), RuntimeError,
              "{}: expected self and mat1 to have the same dtype, but got: "
              "{} != {}",
              op, dtype_name(input.dtype()), dtype_name(m.dtype()));
}

std::string dims_str(IntList sizes) {
  return fmt::format("{}", fmt::join(sizes.begin(), sizes.end(), "x"));
}

[[noreturn]] FASTT_NOINLINE void throw_shapes(const char* op, IntList a,
                                              IntList b) {
  throw RuntimeError(
      fmt::format("{}: mat1 and mat2 shapes cannot be multiplied ({} and {})",
                  op, dims_str(a), dims_str(b)));
}

// Whether BLAS reads the last two dims as they are: one of them has unit
// stride and the other spans it (mirrors blas_view in the kernel).
inline bool blas_shaped(const Tensor& t) {
  const int64_t nd = t.dim();
  if (nd < 2) return true;
  const int64_t rows = t.sizes()[nd - 2], cols = t.sizes()[nd - 1];
  const int64_t sr = t.strides()[nd - 2], sc = t.strides()[nd - 1];
  return ((cols == 1 || sc == 1) &&
          (rows == 1 || sr >= std::max<int64_t>(1, cols))) ||
         ((rows == 1 || sr == 1) &&
          (cols == 1 || sc >= std::max<int64_t>(1, rows)));
}

// float/double operands BLAS cannot read in place get one dense copy (kept
// in `keep`); so do float16/bfloat16 on CUDA, which cuBLAS multiplies too.
// The other dtypes' loops read any strides.
inline bool blas_dtype(const Tensor& t) {
  const DType dt = t.dtype();
  return dt == DType::Float32 || dt == DType::Float64 || is_complex(dt) ||
         (t.device().is_cuda() &&
          (dt == DType::Float16 || dt == DType::BFloat16));
}

inline const Tensor& blas_ready(const Tensor& t, Tensor& keep) {
  if (blas_dtype(t) && !blas_shaped(t)) {
    keep = t.contiguous();
    return keep;
  }
  return t;
}

// The one kernel call. `addend` (out's shape) or nullptr: out is the addend.
// As torch's CPU addmm/baddbmm, alpha/beta are not checked: integer
// products use them truncated (beta=0.5 is 0 and skips the addend).
// flags: bit 1 reads a transposed, bit 2 reads b transposed.
void run_gemm(Tensor& out, const Tensor& a, const Tensor& b,
              const Tensor* addend, const Scalar& alpha, const Scalar& beta,
              int flags = 0) {
  KernelFn fn = lookup_kernel(Op::gemm, out.device().type, out.dtype());
  // f0/f1 carry real coefficients: a real product refuses complex ones
  // (as torch), a complex product takes them without an imaginary part
  // (addmm / baddbmm compose the product with imaginary ones)
  if (FASTT_UNLIKELY(alpha.is_complex() || beta.is_complex())) {
    FASTT_CHECK(is_complex(out.dtype()), RuntimeError,
                "matmul: value cannot be converted to type {} without "
                "overflow (a complex alpha or beta)",
                dtype_name(out.dtype()));
    FASTT_CHECK(alpha.imag() == 0.0 && beta.imag() == 0.0, RuntimeError,
                "matmul: an alpha or beta with an imaginary part reached "
                "the kernel");
  }
  if (out.numel() == 0) return;
  KernelArgs args;
  args.out = &out;
  args.out2 = nullptr;
  args.in[0] = &a;
  args.in[1] = &b;
  args.in[2] = addend;
  args.in[3] = nullptr;
  args.f0 = alpha.to_double();
  args.f1 = beta.to_double();
  args.i0 = alpha.to_int();
  args.i1 = beta.to_int();
  args.i2 = flags;
  fn(args);
}

// Whether all dims but the last merge into one (a [rows, K] view exists).
bool can_fold(const Tensor& t) {
  if (t.numel() == 0) return false;
  int64_t expected = -1;
  for (int64_t d = t.dim() - 2; d >= 0; --d) {
    const int64_t size = t.sizes()[d], stride = t.strides()[d];
    if (size == 1) continue;
    if (expected != -1 && stride != expected) return false;
    expected = stride * size;
  }
  return true;
}

// t [..., K] as [rows, K]; requires can_fold(t).
Tensor fold(const Tensor& t, int64_t rows) {
  const int64_t nd = t.dim();
  int64_t row_stride = t.sizes()[nd - 1];
  for (int64_t d = nd - 2; d >= 0; --d)
    if (t.sizes()[d] != 1) {
      row_stride = t.strides()[d];
      break;
    }
  return t.as_strided({rows, t.sizes()[nd - 1]},
                      {row_stride, t.strides()[nd - 1]}, t.storage_offset());
}

Tensor mm_2d(const char* op, const Tensor& a, const Tensor& b) {
  const int64_t M = a.sizes()[0], K = a.sizes()[1];
  const int64_t K2 = b.sizes()[0], N = b.sizes()[1];
  if (FASTT_UNLIKELY(K != K2)) throw_shapes(op, a.sizes(), b.sizes());
  check_pair(op, a, b);
  Tensor out = Tensor::empty({M, N}, a.dtype(), a.device());
  Tensor ka, kb;
  run_gemm(out, blas_ready(a, ka), blas_ready(b, kb), nullptr, 1, 0);
  return out;
}

Tensor dot_1d(const char* op, const Tensor& a, const Tensor& b) {
  FASTT_CHECK(a.numel() == b.numel(), RuntimeError,
              "{}: inconsistent tensor size, expected tensor [{}] and src "
              "[{}] to have the same number of elements, but got {} and {} "
              "elements respectively",
              op, a.numel(), b.numel(), a.numel(), b.numel());
  check_device(op, a, b);
  FASTT_CHECK(a.dtype() == b.dtype(), RuntimeError,
              "{}: expected both vectors to have same dtype, but found {} "
              "and {}",
              op, dtype_name(a.dtype()), dtype_name(b.dtype()));
  Tensor out = Tensor::empty({1, 1}, a.dtype(), a.device());
  Tensor ka, kb;
  Tensor ra = a.unsqueeze(0), cb = b.unsqueeze(1);
  run_gemm(out, blas_ready(ra, ka), blas_ready(cb, kb), nullptr, 1, 0);
  return out.squeeze();
}

// matmul with at least one operand not 2-D (and not both 1-D).
Tensor matmul_nd(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  Tensor A = da == 1 ? a.unsqueeze(0) : a;
  Tensor B = db == 1 ? b.unsqueeze(1) : b;
  const int64_t na = A.dim(), nb = B.dim();
  const int64_t M = A.sizes()[na - 2], K = A.sizes()[na - 1];
  const int64_t K2 = B.sizes()[nb - 2], N = B.sizes()[nb - 1];
  if (FASTT_UNLIKELY(K != K2)) {
    if (na == 2 && nb == 2) throw_shapes("matmul", A.sizes(), B.sizes());
    throw_shapes("matmul", a.sizes(), b.sizes());
  }
  check_pair("matmul", a, b);
  Tensor ka, kb;
  const Tensor& Ar = blas_ready(A, ka);
  const Tensor& Br = blas_ready(B, kb);

  int64_t shape[kMaxDims + 2];
  const int nbatch = broadcast_shapes(IntList(A.sizes().data(), size_t(na - 2)),
                                      IntList(B.sizes().data(), size_t(nb - 2)),
                                      shape, "matmul");
  int nd = nbatch;
  if (da > 1) shape[nd++] = M;
  if (db > 1) shape[nd++] = N;
  Tensor out = Tensor::empty(IntList(shape, size_t(nd)), a.dtype(), a.device());

  // B without batch dims: fold A's batch dims into M, one big product.
  if (nb == 2 && (na == 2 || can_fold(Ar))) {
    int64_t rows = 1;
    for (int64_t d = 0; d < na - 1; ++d) rows *= A.sizes()[d];
    Tensor A2 = na == 2 ? Ar : fold(Ar, rows);
    Tensor O2 = out.view({rows, N});
    run_gemm(O2, A2, Br, nullptr, 1, 0);
    return out;
  }
  // Batched: both operands expanded to the broadcast batch shape.
  int64_t ashape[kMaxDims], bshape[kMaxDims], oshape[kMaxDims];
  for (int d = 0; d < nbatch; ++d) ashape[d] = bshape[d] = oshape[d] = shape[d];
  ashape[nbatch] = M, ashape[nbatch + 1] = K;
  bshape[nbatch] = K, bshape[nbatch + 1] = N;
  oshape[nbatch] = M, oshape[nbatch + 1] = N;
  const size_t n = size_t(nbatch + 2);
  Tensor Ae = Ar.expand(IntList(ashape, n));
  Tensor Be = Br.expand(IntList(bshape, n));
  Tensor Oe = nd == nbatch + 2 ? out : out.view(IntList(oshape, n));
  run_gemm(Oe, Ae, Be, nullptr, 1, 0);
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  FASTT_AUTOCAST(Lower, a, matmul(C(a), C(b)));
  if (autograd::should_record(a, b))
    return autograd::matmul(a, b, [&] { return matmul(a, b); });
  check_defined("matmul", a, "input");
  check_defined("matmul", b, "other");
  const int64_t da = a.dim(), db = b.dim();
  FASTT_CHECK(da >= 1 && db >= 1, RuntimeError,
              "both arguments to matmul need to be at least 1D, but they are "
              "{}D and {}D",
              da, db);
  if (da == 2 && db == 2) return mm_2d("matmul", a, b);
  if (da == 1 && db == 1) return dot_1d("matmul", a, b);
  return matmul_nd(a, b);
}

Tensor mm(const Tensor& a, const Tensor& b) {
  FASTT_AUTOCAST(Lower, a, mm(C(a), C(b)));
  if (autograd::should_record(a, b))
    return autograd::matmul(a, b, [&] { return mm(a, b); });
  check_defined("mm", a, "input");
  check_defined("mm", b, "mat2");
  FASTT_CHECK(a.dim() == 2, RuntimeError,
              "mm: self must be a matrix, got {}-D tensor", a.dim());
  FASTT_CHECK(b.dim() == 2, RuntimeError,
              "mm: mat2 must be a matrix, got {}-D tensor", b.dim());
  return mm_2d("mm", a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  FASTT_AUTOCAST(Lower, a, bmm(C(a), C(b)));
  if (autograd::should_record(a, b))
    return autograd::matmul(a, b, [&] { return bmm(a, b); });
  check_defined("bmm", a, "input");
  check_defined("bmm", b, "mat2");
  FASTT_CHECK(a.dim() == 3, RuntimeError,
              "bmm: batch1 must be a 3D tensor, got {}-D tensor", a.dim());
  FASTT_CHECK(b.dim() == 3, RuntimeError,
              "bmm: batch2 must be a 3D tensor, got {}-D tensor", b.dim());
  const int64_t Bt = a.sizes()[0], M = a.sizes()[1], K = a.sizes()[2];
  const int64_t N = b.sizes()[2];
  FASTT_CHECK(b.sizes()[0] == Bt && b.sizes()[1] == K, RuntimeError,
              "bmm: Expected size for first two dimensions of batch2 tensor "
              "to be: [{}, {}] but got: [{}, {}].",
              Bt, K, b.sizes()[0], b.sizes()[1]);
  check_pair("bmm", a, b);
  Tensor out = Tensor::empty({Bt, M, N}, a.dtype(), a.device());
  Tensor ka, kb;
  run_gemm(out, blas_ready(a, ka), blas_ready(b, kb), nullptr, 1, 0);
  return out;
}

// A complex product with a coefficient that has an imaginary part (the
// kernel's f0/f1 carry real ones): beta * input + alpha * prod composed of
// elementwise ops, each recorded by autograd; beta == 0 ignores input.
bool imaginary_coefficient(const Tensor& m, const Scalar& beta,
                           const Scalar& alpha) {
  return (alpha.imag() != 0.0 || beta.imag() != 0.0) && m.defined() &&
         is_complex(m.dtype());
}

Tensor composed_addmm(const char* op, const Tensor& input, const Tensor& prod,
                      const Scalar& beta, const Scalar& alpha) {
  check_defined(op, input, "input");
  check_input(op, input, prod);
  std::vector<int64_t> shape = broadcast_shapes(input.sizes(), prod.sizes());
  FASTT_CHECK(IntList(shape).equals(prod.sizes()), RuntimeError,
              "{}: input of shape {} does not broadcast to {}", op,
              shape_str(input.sizes()), shape_str(prod.sizes()));
  Tensor scaled = mul(prod, alpha);
  if (beta.to_double() == 0.0 && beta.imag() == 0.0) return scaled;
  return add(mul(input, beta), scaled);
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2,
             const Scalar& beta, const Scalar& alpha) {
  FASTT_AUTOCAST(Lower, m1, addmm(C(input), C(m1), C(m2), beta, alpha));
  if (FASTT_UNLIKELY(imaginary_coefficient(m1, beta, alpha)))
    return composed_addmm("addmm", input, mm(m1, m2), beta, alpha);
  if (autograd::should_record(input, m1, m2))
    return autograd::addmm(input, m1, m2, beta, alpha, [&] {
      return addmm(input, m1, m2, beta, alpha);
    });
  check_defined("addmm", input, "input");
  check_defined("addmm", m1, "mat1");
  check_defined("addmm", m2, "mat2");
  FASTT_CHECK(m1.dim() == 2, RuntimeError,
              "addmm: mat1 must be a matrix, got {}-D tensor", m1.dim());
  FASTT_CHECK(m2.dim() == 2, RuntimeError,
              "addmm: mat2 must be a matrix, got {}-D tensor", m2.dim());
  const int64_t M = m1.sizes()[0], K = m1.sizes()[1];
  const int64_t N = m2.sizes()[1];
  if (FASTT_UNLIKELY(m2.sizes()[0] != K))
    throw_shapes("addmm", m1.sizes(), m2.sizes());
  check_pair("addmm", m1, m2);
  check_input("addmm", input, m1);
  Tensor addend = input.expand({M, N});
  Tensor out = Tensor::empty({M, N}, m1.dtype(), m1.device());
  Tensor ka, kb;
  run_gemm(out, blas_ready(m1, ka), blas_ready(m2, kb), &addend, alpha,
           beta);
  return out;
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2,
               const Scalar& beta, const Scalar& alpha) {
  FASTT_AUTOCAST(Lower, b1, baddbmm(C(input), C(b1), C(b2), beta, alpha));
  if (FASTT_UNLIKELY(imaginary_coefficient(b1, beta, alpha)))
    return composed_addmm("baddbmm", input, bmm(b1, b2), beta, alpha);
  if (autograd::should_record(input, b1, b2))
    return autograd::addmm(input, b1, b2, beta, alpha, [&] {
      return baddbmm(input, b1, b2, beta, alpha);
    });
  check_defined("baddbmm", input, "input");
  check_defined("baddbmm", b1, "batch1");
  check_defined("baddbmm", b2, "batch2");
  FASTT_CHECK(b1.dim() == 3, RuntimeError,
              "baddbmm: batch1 must be a 3D tensor, got {}-D tensor",
              b1.dim());
  FASTT_CHECK(b2.dim() == 3, RuntimeError,
              "baddbmm: batch2 must be a 3D tensor, got {}-D tensor",
              b2.dim());
  const int64_t Bt = b1.sizes()[0], M = b1.sizes()[1], K = b1.sizes()[2];
  const int64_t N = b2.sizes()[2];
  FASTT_CHECK(b2.sizes()[0] == Bt && b2.sizes()[1] == K, RuntimeError,
              "baddbmm: Expected size for first two dimensions of batch2 "
              "tensor to be: [{}, {}] but got: [{}, {}].",
              Bt, K, b2.sizes()[0], b2.sizes()[1]);
  check_pair("baddbmm", b1, b2);
  check_input("baddbmm", input, b1);
  Tensor addend = input.expand({Bt, M, N});
  Tensor out = Tensor::empty({Bt, M, N}, b1.dtype(), b1.device());
  Tensor ka, kb;
  run_gemm(out, blas_ready(b1, ka), blas_ready(b2, kb), &addend, alpha,
           beta);
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (autograd::should_record(a, b))
    return autograd::matmul(a, b, [&] { return dot(a, b); });
  check_defined("dot", a, "input");
  check_defined("dot", b, "tensor");
  FASTT_CHECK(a.dim() == 1 && b.dim() == 1, RuntimeError,
              "dot: 1D tensors expected, but got {}D and {}D tensors", a.dim(),
              b.dim());
  return dot_1d("dot", a, b);
}

Tensor mv(const Tensor& m, const Tensor& v) {
  FASTT_AUTOCAST(CudaLower, m, mv(C(m), C(v)));
  if (autograd::should_record(m, v))
    return autograd::matmul(m, v, [&] { return mv(m, v); });
  check_defined("mv", m, "input");
  check_defined("mv", v, "vec");
  FASTT_CHECK(m.dim() == 2 && v.dim() == 1, RuntimeError,
              "mv: vector + matrix @ vector expected, got 1, {}, {}", m.dim(),
              v.dim());
  const int64_t M = m.sizes()[0], K = m.sizes()[1];
  FASTT_CHECK(v.sizes()[0] == K, RuntimeError,
              "mv: size mismatch, got input ({}), mat ({}x{}), vec ({})", M,
              M, K, v.sizes()[0]);
  check_pair("mv", m, v);
  Tensor out = Tensor::empty({M}, m.dtype(), m.device());
  Tensor O2 = out.unsqueeze(1), col = v.unsqueeze(1);
  Tensor ka, kb;
  run_gemm(O2, blas_ready(m, ka), blas_ready(col, kb), nullptr, 1, 0);
  return out;
}

Tensor outer(const Tensor& a, const Tensor& b) {
  check_defined("outer", a, "input");
  check_defined("outer", b, "vec2");
  FASTT_CHECK(a.dim() == 1, RuntimeError,
              "outer: Expected 1-D argument self, but got {}-D", a.dim());
  FASTT_CHECK(b.dim() == 1, RuntimeError,
              "outer: Expected 1-D argument vec2, but got {}-D", b.dim());
  // An elementwise product: promotion and bool come for free, as in torch.
  return mul(a.unsqueeze(1), b);
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec,
             const Scalar& beta, const Scalar& alpha) {
  FASTT_AUTOCAST(CudaLower, mat, addmv(C(input), C(mat), C(vec), beta, alpha));
  check_defined("addmv", input, "input");
  check_defined("addmv", mat, "mat");
  check_defined("addmv", vec, "vec");
  FASTT_CHECK(mat.dim() == 2 && vec.dim() == 1, RuntimeError,
              "addmv: vector + matrix @ vector expected, got {}, {}, {}",
              input.dim(), mat.dim(), vec.dim());
  FASTT_CHECK(mat.sizes()[1] == vec.sizes()[0], RuntimeError,
              "addmv: size mismatch, got input ({}), mat ({}x{}), vec ({})",
              mat.sizes()[0], mat.sizes()[0], mat.sizes()[1],
              vec.sizes()[0]);
  FASTT_CHECK(input.dim() <= 1, RuntimeError,
              "addmv: input must broadcast to [{}], got {}", mat.sizes()[0],
              shape_str(input.sizes()));
  return addmm(input.unsqueeze(-1), mat, vec.unsqueeze(1), beta, alpha)
      .squeeze(1);
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2,
            const Scalar& beta, const Scalar& alpha) {
  FASTT_AUTOCAST(CudaLower, vec1, addr(C(input), C(vec1), C(vec2), beta, alpha));
  check_defined("addr", input, "input");
  FASTT_CHECK(vec1.defined() && vec1.dim() == 1, RuntimeError,
              "addr: Expected 1-D argument vec1, but got {}-D",
              vec1.defined() ? vec1.dim() : 0);
  FASTT_CHECK(vec2.defined() && vec2.dim() == 1, RuntimeError,
              "addr: Expected 1-D argument vec2, but got {}-D",
              vec2.defined() ? vec2.dim() : 0);
  DType dt = promote_types(input.dtype(),
                           promote_types(vec1.dtype(), vec2.dtype()));
  if (dt == DType::Float16 || dt == DType::BFloat16)  // one rounding
    return addr(input.to(DType::Float32), vec1.to(DType::Float32),
                vec2.to(DType::Float32), beta, alpha)
        .to(dt);
  Tensor prod = outer(vec1, vec2);
  if (promote_types(input.dtype(), prod.dtype()) == DType::Bool) {
    // bool addr: beta and alpha act as bools (and, or), as in torch.
    Tensor scaled = alpha.to_double() != 0 ? prod : zeros_like(prod);
    if (beta.to_double() == 0.0) return logical_or(scaled, zeros_like(input));
    return logical_or(input, scaled);
  }
  std::vector<int64_t> shape = broadcast_shapes(input.sizes(), prod.sizes());
  FASTT_CHECK(IntList(shape).equals(prod.sizes()), RuntimeError,
              "addr: input of shape {} does not broadcast to [{}, {}]",
              shape_str(input.sizes()), vec1.sizes()[0], vec2.sizes()[0]);
  // beta == 0 ignores input (NaN there does not propagate), as in torch.
  Tensor scaled = mul(prod, alpha);
  if (beta.to_double() == 0.0 && beta.imag() == 0.0)
    return add(scaled, zeros_like(input));
  return add(mul(input, beta), scaled);
}

Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2,
              const Scalar& beta, const Scalar& alpha) {
  FASTT_AUTOCAST(Lower, b1, addbmm(C(input), C(b1), C(b2), beta, alpha));
  check_defined("addbmm", input, "input");
  check_defined("addbmm", b1, "batch1");
  check_defined("addbmm", b2, "batch2");
  FASTT_CHECK(b1.dim() == 3, RuntimeError,
              "addbmm: batch1 must be a 3D tensor");
  FASTT_CHECK(b2.dim() == 3, RuntimeError,
              "addbmm: batch2 must be a 3D tensor");
  const int64_t B = b1.sizes()[0], M = b1.sizes()[1], K = b1.sizes()[2];
  FASTT_CHECK(b2.sizes()[0] == B, RuntimeError,
              "addbmm: batch1 and batch2 must have same number of batches, "
              "got {} and {}",
              B, b2.sizes()[0]);
  FASTT_CHECK(b2.sizes()[1] == K, RuntimeError,
              "addbmm: Incompatible matrix sizes for bmm ({}x{} and {}x{})",
              M, K, b2.sizes()[1], b2.sizes()[2]);
  const int64_t N = b2.sizes()[2];
  // sum_b A_b @ B_b = [A_0 ... A_{B-1}] @ [B_0; ...; B_{B-1}]
  Tensor a = b1.permute({1, 0, 2}).reshape({M, B * K});
  Tensor b = b2.reshape({B * K, N});
  return addmm(input, a, b, beta, alpha);
}

Tensor vdot(const Tensor& a, const Tensor& b) {
  check_defined("vdot", a, "input");
  check_defined("vdot", b, "other");
  FASTT_CHECK(a.dim() == 1 && b.dim() == 1, RuntimeError,
              "vdot: 1D tensors expected, but got {}D and {}D tensors",
              a.dim(), b.dim());
  return dot(conj_physical(a), b);  // the first conjugated (torch)
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  FASTT_AUTOCAST(Lower, x, linear(C(x), C(weight), C(bias)));
  check_defined("linear", x, "input");
  check_defined("linear", weight, "weight");
  FASTT_CHECK(x.dim() >= 1 && weight.dim() >= 1, RuntimeError,
              "linear: both arguments to matmul need to be at least 1D, but "
              "they are {}D and {}D",
              x.dim(), weight.dim());
  FASTT_CHECK(weight.dim() <= 2, RuntimeError,
              "linear: weight must be a 1-D or 2-D tensor, got {}-D",
              weight.dim());
  check_pair("linear", x, weight);
  if (bias.defined()) {
    check_device("linear", x, bias);
    FASTT_CHECK(bias.dtype() == x.dtype(), RuntimeError,
                "linear: expected bias to have the same dtype as input ({}), "
                "but got {}",
                dtype_name(x.dtype()), dtype_name(bias.dtype()));
  }
  if (weight.dim() == 1) {  // x @ w: a vector weight drops the last dim
    Tensor r = matmul(x, weight);
    return bias.defined() ? add(r, bias) : r;
  }
  if (autograd::should_record(x, weight, bias))
    return autograd::linear(x, weight, bias);
  const int64_t nx = x.dim();
  const int64_t N = weight.sizes()[0], K = weight.sizes()[1];
  const int64_t Kx = x.sizes()[nx - 1];
  int64_t rows = 1;
  for (int64_t d = 0; d < nx - 1; ++d) rows *= x.sizes()[d];
  if (FASTT_UNLIKELY(Kx != K))
    throw_shapes("linear", {rows, Kx}, {K, N});

  int64_t shape[kMaxDims];
  for (int64_t d = 0; d < nx - 1; ++d) shape[d] = x.sizes()[d];
  shape[nx - 1] = N;
  const IntList out_shape(shape, size_t(nx));
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());

  // x as [rows, K] (a view when its leading dims merge, else one copy).
  Tensor keep;
  const Tensor* X2 = &x;
  if (nx == 1) {
    keep = x.unsqueeze(0);
    X2 = &keep;
  } else if (nx > 2) {
    keep = can_fold(x) ? fold(x, rows) : x.contiguous().view({rows, K});
    X2 = &keep;
  }
  Tensor kx, kw;
  const Tensor& Xr = blas_ready(*X2, kx);
  const Tensor& W = blas_ready(weight, kw);
  Tensor O2 = nx == 2 ? out : out.view({rows, N});
  // weight is [N, K]; the kernel reads it transposed (flag 2).
  if (!bias.defined()) {
    run_gemm(O2, Xr, W, nullptr, 1, 0, 2);
  } else if (bias.dim() <= 1) {
    // The kernel copies the broadcast bias into out, then gemm adds
    // x @ W^T onto it (beta = 1): one pass, no separate add.
    Tensor addend = bias.expand({rows, N});
    run_gemm(O2, Xr, W, &addend, 1, 1, 2);
  } else {
    out.copy_(bias.expand(out_shape));
    run_gemm(O2, Xr, W, nullptr, 1, 1, 2);
  }
  return out;
}

}  // namespace fastt
