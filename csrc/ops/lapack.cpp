// Entry points of csrc/ops/lapack.h: torch's checks and messages, the
// dense layouts kernels/cpu/lapack.cpp reads, one kernel call, and the
// autograd record (autograd/formulas_linalg.cpp).
#include "lapack.h"

#include <algorithm>
#include <vector>

#include "complex.h"
#include "elementwise.h"
#include "index.h"
#include "lapack_util.h"
#include "reduce.h"

#include "autograd/functions_lapack.h"
#include "csrc/autograd.h"
#include "csrc/capture.h"

namespace fastt {
using namespace lapack;

int64_t lapack::first_failure(const Tensor& info, int64_t* value) {
  Tensor i = host(info).contiguous();
  const int32_t* p = i.data_ptr<int32_t>();
  for (int64_t b = 0; b < i.numel(); ++b)
    if (p[b] != 0) {
      if (value) *value = p[b];
      return b;
    }
  return -1;
}

std::string lapack::batch_prefix(const Tensor& info, int64_t index) {
  return info.dim() == 0 ? std::string()
                         : fmt::format("(Batch element {}): ", index);
}

namespace {

std::tuple<Tensor, Tensor, Tensor> lu_factor_impl(const Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const Device dev = A.device();
  const Tensor a = host(A);
  std::vector<int64_t> batch = batch_of(a);
  // [..., n, m] row-major is A column-major: LAPACK's layout, and LU's
  // strides are then Fortran order, as torch's are.
  Tensor work = colmajor_copy(a);
  std::vector<int64_t> pb = batch;
  pb.push_back(k);
  Tensor piv = empty(pb, DType::Int32);
  Tensor info = zeros(batch, DType::Int32);
  if (work.numel() > 0) {
    KernelArgs args = kernel_args(&work, &piv, &info);
    args.i0 = m;
    args.i1 = n;
    run_kernel(Op::lu_factor, a.dtype(), args);
  } else if (piv.numel() > 0) {
    piv.fill_(Scalar(1));  // no rows to swap (n == 0 cannot give k > 0)
  }
  return {back(work.mT(), dev), back(piv, dev), back(info, dev)};
}

std::tuple<Tensor, Tensor> cholesky_impl(const Tensor& A, bool upper) {
  const int64_t n = A.size(-1);
  const Device dev = A.device();
  const Tensor a = host(A);
  std::vector<int64_t> batch = batch_of(a);
  Tensor work = empty(with(batch, n, n), a.dtype());
  work.copy_(a);
  Tensor info = zeros(batch, DType::Int32);
  if (work.numel() > 0) {
    KernelArgs args = kernel_args(&work, nullptr, &info);
    // Column-major LAPACK sees A^T: its upper triangle is A's lower one.
    args.i0 = upper ? 1 : 0;
    args.i1 = n;
    run_kernel(Op::cholesky, a.dtype(), args);
  }
  Tensor r = upper ? triu(work) : tril(work);
  return {back(r, dev), back(info, dev)};
}

Tensor solve_triangular_impl(const Tensor& A, const Tensor& B, bool upper,
                             bool left, bool unit) {
  const Device dev = A.device();
  const Tensor a = host(A), b = host(B);
  std::vector<int64_t> batch =
      broadcast_shapes(IntList(batch_of(a)), IntList(batch_of(b)));
  const int64_t K = a.size(-1), M = b.size(-2), N = b.size(-1);
  Tensor aw = empty(with(batch, K, K), a.dtype());
  aw.copy_(a.expand(with(batch, K, K)));
  Tensor x = empty(with(batch, M, N), a.dtype());
  x.copy_(b.expand(with(batch, M, N)));
  if (x.numel() > 0) {
    KernelArgs args = kernel_args(&x, nullptr, &aw);
    args.i0 = (upper ? 1 : 0) | (left ? 2 : 0) | (unit ? 4 : 0);
    run_kernel(Op::triangular_solve, a.dtype(), args);
  }
  return back(x, dev);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot) {
  check_matrix("linalg.lu_factor_ex", A, "A");
  FASTT_CHECK(pivot, RuntimeError,
              "linalg.lu_factor: LU without pivoting is not implemented on "
              "the CPU");
  if (autograd::should_record(A))
    return autograd::lu_factor_ex(A, [&] { return lu_factor_impl(A); });
  return lu_factor_impl(A);
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU,
                                             const Tensor& pivots,
                                             bool unpack_data,
                                             bool unpack_pivots) {
  require_defined(LU, "lu_unpack");
  require_defined(pivots, "lu_unpack");
  FASTT_CHECK(LU.dim() >= 2, RuntimeError,
              "torch.lu_unpack: Expected tensor with 2 or more dimensions. "
              "Got size: {} instead",
              shape_str(LU.sizes()));
  FASTT_CHECK(pivots.dtype() == DType::Int32, RuntimeError,
              "torch.lu_unpack: LU_pivots is expected to be a contiguous "
              "tensor of torch.int32 dtype. Note: this function is intended "
              "to be used with the output produced by torch.linalg.lu_factor");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  std::vector<int64_t> batch = batch_of(LU);
  std::vector<int64_t> pshape = batch;
  pshape.push_back(k);
  FASTT_CHECK(pivots.sizes().equals(IntList(pshape)), RuntimeError,
              "torch.lu_unpack: LU_pivots must have shape {} for LU of shape "
              "{}, got {}",
              shape_str(IntList(pshape)), shape_str(LU.sizes()),
              shape_str(pivots.sizes()));
  Tensor L, U, P;
  if (unpack_data) {
    Tensor eye_mk = eye(m, k, LU.dtype(), LU.device());
    L = add(tril(LU.narrow(-1, 0, k), -1), eye_mk);
    U = triu(LU.narrow(-2, 0, k));
  } else {
    L = empty({0}, LU.dtype(), LU.device());
    U = empty({0}, LU.dtype(), LU.device());
  }
  if (unpack_pivots) {
    // Apply the row swaps to 0..m-1: row i of P^T A is row perm[i] of A,
    // so P^T is the one-hot rows of perm.
    capture::host_read("lu_unpack of pivots (computed on the host)");
    Tensor pv = host(pivots).contiguous();
    const int32_t* pp = pv.data_ptr<int32_t>();
    Tensor perm = empty(with(batch, m), DType::Int64);
    int64_t* pr = perm.data_ptr<int64_t>();
    const int64_t nb = m ? perm.numel() / m : 0;
    for (int64_t b = 0; b < nb; ++b) {
      int64_t* row = pr + b * m;
      for (int64_t i = 0; i < m; ++i) row[i] = i;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t j = int64_t(pp[b * k + i]) - 1;
        FASTT_CHECK(j >= 0 && j < m, RuntimeError,
                    "torch.lu_unpack: pivot {} of matrix {} is {}, outside "
                    "[1, {}]",
                    i, b, j + 1, m);
        std::swap(row[i], row[j]);
      }
    }
    P = m ? one_hot(perm, m).mT().to(LU.dtype())
          : zeros(with(batch, m, m), LU.dtype());
    P = back(P, LU.device());
  } else {
    P = empty({0}, LU.dtype(), LU.device());
  }
  return {P, L, U};
}

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper) {
  check_square("linalg.cholesky", A, "A");
  if (autograd::should_record(A))
    return autograd::cholesky_ex(A, upper,
                                 [&] { return cholesky_impl(A, upper); });
  return cholesky_impl(A, upper);
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper,
                        bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_matrix(op, A, "A");
  check_matrix(op, B, "B");
  check_same_dtype_device(op, A, B, "A", "B");
  check_square(op, A, "A");
  const int64_t K = A.size(-1);
  const int64_t against = left ? B.size(-2) : B.size(-1);
  FASTT_CHECK(K == against, RuntimeError,
              "{}: Incompatible shapes of A and B for the equation {} ({}x{} "
              "and {}x{})",
              op, left ? "AX = B" : "XA = B", A.size(-2), K, B.size(-2),
              B.size(-1));
  // The batch dims must broadcast (broadcast_shapes raises otherwise).
  (void)broadcast_shapes(IntList(batch_of(A)), IntList(batch_of(B)));
  if (autograd::should_record(A, B))
    return autograd::solve_triangular(A, B, upper, left, unitriangular, [&] {
      return solve_triangular_impl(A, B, upper, left, unitriangular);
    });
  return solve_triangular_impl(A, B, upper, left, unitriangular);
}

// ---- general solve ----
namespace {
// B undefined: the identity (the inverse), written directly since it is
// its own column-major layout.
std::tuple<Tensor, Tensor> solve_impl(const Tensor& A, const Tensor& B) {
  const int64_t n = A.size(-1), r = B.defined() ? B.size(-1) : n;
  std::vector<int64_t> batch =
      B.defined()
          ? broadcast_shapes(IntList(batch_of(A)), IntList(batch_of(B)))
          : batch_of(A);
  Tensor aw = colmajor_copy(host(A).expand(with(batch, n, n)));
  Tensor xw = B.defined() ? colmajor_copy(host(B).expand(with(batch, n, r)))
                          : eye(n, A.dtype()).expand(with(batch, n, n))
                                .contiguous();
  Tensor info = zeros(batch, DType::Int32);
  if (xw.numel() > 0 && aw.numel() > 0) {
    KernelArgs args = kernel_args(&xw, nullptr, &aw, &info);
    run_kernel(Op::gesv, A.dtype(), args);
  }
  return {back(from_colmajor(xw), A.device()), back(info, A.device())};
}
}  // namespace

std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B) {
  const char* op = "linalg.solve";
  check_square(op, A, "A");
  check_matrix(op, B, "B");
  check_same_dtype_device(op, A, B, "A", "B");
  FASTT_CHECK(B.size(-2) == A.size(-1), RuntimeError,
              "{}: Incompatible shapes of A and B for the equation AX = B "
              "({}x{} and {}x{})",
              op, A.size(-2), A.size(-1), B.size(-2), B.size(-1));
  (void)broadcast_shapes(IntList(batch_of(A)), IntList(batch_of(B)));
  if (autograd::should_record(A, B))
    return autograd::linalg_solve(A, B, [&] { return solve_impl(A, B); });
  return solve_impl(A, B);
}

std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor& A) {
  check_square("linalg.inv", A, "A");
  const Tensor none;
  if (autograd::should_record(A))
    return autograd::linalg_solve(A, none,
                                  [&] { return solve_impl(A, none); });
  return solve_impl(A, none);
}

// ---- from a Cholesky factor ----
namespace {
// A^-1 B for A = L L^H (U^H U when upper): two triangular solves.
Tensor cholesky_solve_impl(const Tensor& B, const Tensor& L, bool upper) {
  const Tensor LH = adjoint(L);  // (a view for the reals)
  Tensor Y = solve_triangular_impl(upper ? LH : L, B, false, true, false);
  return solve_triangular_impl(upper ? L : LH, Y, true, true, false);
}
}  // namespace

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  const char* op = "cholesky_solve";
  require_defined(B, op);
  require_defined(L, op);
  FASTT_CHECK(B.dim() >= 2, RuntimeError,
              "b should have at least 2 dimensions, but has {} dimensions "
              "instead",
              B.dim());
  FASTT_CHECK(L.dim() >= 2, RuntimeError,
              "u should have at least 2 dimensions, but has {} dimensions "
              "instead",
              L.dim());
  FASTT_CHECK(B.dtype() == L.dtype(), RuntimeError,
              "Expected b and A to have the same dtype, but found b of type "
              "{} and A of type {} instead.",
              torch_type_name(B.dtype()), torch_type_name(L.dtype()));
  check_square(op, L, "A");
  FASTT_CHECK(B.size(-2) == L.size(-1), RuntimeError,
              "Incompatible matrix sizes for cholesky_solve: each A matrix "
              "is {} by {} but each b matrix is {} by {}",
              L.size(-2), L.size(-1), B.size(-2), B.size(-1));
  (void)broadcast_shapes(IntList(batch_of(B)), IntList(batch_of(L)));
  if (autograd::should_record(B, L))
    return autograd::cholesky_solve(
        B, L, upper, [&] { return cholesky_solve_impl(B, L, upper); });
  return cholesky_solve_impl(B, L, upper);
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  const char* op = "cholesky_inverse";
  check_square(op, L, "input");
  // potri's check: a zero on the factor's diagonal (as LAPACK's info).
  Tensor diag = host(L).diagonal(0, -2, -1);
  if (diag.numel() > 0) {
    Tensor zero = eq(diag, Scalar(0));
    Tensor info = where(any(zero, {-1}),
                        add(argmax(zero.to(DType::Int32), -1), Scalar(1)),
                        Scalar(0))
                      .to(DType::Int32);
    linalg_check_errors(info, op, LinalgFailure::Inverse);
  }
  auto compute = [&] {
    Tensor I = eye(L.size(-1), L.dtype(), L.device()).expand(L.sizes());
    return cholesky_solve_impl(I, L, upper);
  };
  if (autograd::should_record(L))
    return autograd::cholesky_inverse(L, upper, compute);
  return compute();
}

// ---- symmetric indefinite: A = P L D L^T P^T (Bunch-Kaufman); a
// complex A with `hermitian`: L D L^H (LAPACK's hetrf) ----
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A,
                                                 bool hermitian) {
  const char* op = "torch.linalg.ldl_factor_ex";
  check_square(op, A, "A");
  const Device dev = A.device();
  const int64_t n = A.size(-1);
  std::vector<int64_t> batch = batch_of(A);
  // Only the lower triangle is read; torch's factor has zeros above it.
  Tensor work = colmajor_copy(tril(host(A)));
  Tensor piv = zeros(with(batch, n), DType::Int32);
  Tensor info = zeros(batch, DType::Int32);
  if (work.numel() > 0) {
    KernelArgs args = kernel_args(&work, &piv, &info);
    args.i0 = 1;  // 'L'
    args.i1 = hermitian;  // the same for real matrices
    run_kernel(Op::sytrf, A.dtype(), args);
  }
  return {back(from_colmajor(work), dev), back(piv, dev), back(info, dev)};
}

Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B,
                 bool hermitian) {
  const char* op = "torch.linalg.ldl_solve";
  check_square(op, LD, "LD");
  check_matrix(op, B, "B");
  check_same_dtype_device(op, LD, B, "LD", "B");
  require_defined(pivots, op);
  FASTT_CHECK(pivots.dtype() == DType::Int32, RuntimeError,
              "{}: Expected pivots to be integers. Got {}", op,
              torch_type_name(pivots.dtype()));
  const int64_t n = LD.size(-1), r = B.size(-1);
  FASTT_CHECK(B.size(-2) == n, RuntimeError,
              "{}: Incompatible shapes of A and B for the equation AX = B "
              "({}x{} and {}x{})",
              op, n, n, B.size(-2), r);
  FASTT_CHECK(pivots.dim() >= 1 && pivots.size(-1) == n, RuntimeError,
              "{}: Expected LD.shape[:-1] and pivots.shape to be the same, "
              "but got pivots with shape {} instead",
              op, shape_str(pivots.sizes()));
  std::vector<int64_t> batch =
      broadcast_shapes(IntList(batch_of(LD)), IntList(batch_of(B)));
  batch = broadcast_shapes(IntList(batch), IntList(batch_of(pivots, 1)));
  Tensor f = colmajor_copy(host(LD).expand(with(batch, n, n)));
  Tensor p = empty(with(batch, n), DType::Int32);
  p.copy_(host(pivots).expand(with(batch, n)));
  Tensor x = colmajor_copy(host(B).expand(with(batch, n, r)));
  if (x.numel() > 0) {
    KernelArgs args = kernel_args(&x, nullptr, &f, &p);
    args.i0 = 1;  // 'L'
    args.i1 = hermitian;
    run_kernel(Op::sytrs, LD.dtype(), args);
  }
  return back(from_colmajor(x), B.device());
}

}  // namespace fastt
