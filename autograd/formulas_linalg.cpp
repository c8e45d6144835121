// Backward formulas of the linear algebra ops: every matmul form, addmm
// (also baddbmm) and linear (recorded in formulas.cpp).
#include "autograd/formulas.h"
#include "csrc/ops.h"

namespace fastt {
namespace autograd {
namespace {

void matmul_backward(const Tensor& g, const Tensor& a, const Tensor& b,
                     bool need_a, bool need_b, Tensor& ga, Tensor& gb) {
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  Tensor A = a1 ? a.unsqueeze(0) : a;
  Tensor B = b1 ? b.unsqueeze(1) : b;
  Tensor G = g;
  if (a1) G = G.unsqueeze(G.dim() - (b1 ? 0 : 1));
  if (b1) G = G.unsqueeze(G.dim());
  if (need_a) {
    Tensor r = sum_to(fastt::matmul(G, B.mT()), A.sizes());
    ga = a1 ? r.squeeze(0) : r;
  }
  if (need_b) {
    Tensor r = sum_to(fastt::matmul(A.mT(), G), B.sizes());
    gb = b1 ? r.squeeze(1) : r;
  }
}

}  // namespace

// ---- linear algebra ----
FASTT_FORMULA(Matmul) {
  const Tensor& g = go[0];
  Tensor a = n.unpack(0), b = n.unpack(1);
  matmul_backward(g, a, b, n.needs(0), n.needs(1), gi[0], gi[1]);
}
FASTT_FORMULA(Addmm) {
  const Tensor& g = go[0];
  Tensor m1 = n.unpack(0), m2 = n.unpack(1);
  if (n.needs(0))
    gi[0] = fit(n.f0 == 1 ? g : fastt::mul(g, Scalar(n.f0)), n.shape0(),
                n.dtypes[0]);
  Tensor ga = n.f1 == 1 ? g : fastt::mul(g, Scalar(n.f1));
  if (n.needs(1)) gi[1] = fastt::matmul(ga, m2.mT());
  if (n.needs(2)) gi[2] = fastt::matmul(m1.mT(), ga);
}
FASTT_FORMULA(Linear) {
  const Tensor& g = go[0];
  Tensor x = n.unpack(0), w = n.unpack(1);
  const int64_t N = w.sizes()[0];
  if (n.needs(0)) gi[0] = fastt::matmul(g, w);
  Tensor g2 = g.dim() == 2 ? g : g.reshape({-1, N});
  if (n.needs(1)) {
    Tensor x2 = x.dim() == 2 ? x : x.reshape({-1, x.sizes()[size_t(x.dim() - 1)]});
    gi[1] = fastt::mm(g2.t(), x2);
  }
  if (n.needs(2)) gi[2] = sum_to(g2, n.shape0());
}

}  // namespace autograd
}  // namespace fastt
