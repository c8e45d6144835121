// Recurrent layers' time loops (csrc/ops/rnn.h): per step one GEMM and
// one fused gate kernel, forward and backward through time.
#include "csrc/autocast.h"
#include "csrc/ops/rnn.h"

#include <numeric>

#include "autograd/functions_nn.h"
#include "csrc/autograd.h"
#include "csrc/dispatch.h"
#include "csrc/ops.h"
#include "kernels/rnn_cell.h"

namespace fastt {
namespace rnn_detail {
namespace {
using namespace rnn_args;

const char* mode_name(int64_t mode) {
  switch (mode) {
    case kTanh: return "rnn_tanh";
    case kRelu: return "rnn_relu";
    case kLstm: return "lstm";
    case kGru: return "gru";
  }
  return "rnn";
}

// The steps' (row offset, rows) in processing order's time index t.
struct Steps {
  std::vector<int64_t> offset, rows;
  int64_t T = 0, B = 0, N = 0;
};

Steps make_steps(IntList batch_sizes, int64_t N, int64_t B, const char* op) {
  Steps s;
  s.B = B;
  if (batch_sizes.empty()) {
    FASTT_CHECK(B > 0 ? N % B == 0 : N == 0, RuntimeError,
                "{}: input rows ({}) are not a multiple of the batch ({})",
                op, N, B);
    s.T = B > 0 ? N / B : 0;
    for (int64_t t = 0; t < s.T; ++t) {
      s.offset.push_back(t * B);
      s.rows.push_back(B);
    }
  } else {
    int64_t off = 0, prev = B;
    for (int64_t bs : batch_sizes) {
      FASTT_CHECK(bs > 0 && bs <= prev, RuntimeError,
                  "{}: batch_sizes must be positive and non-increasing, "
                  "starting at most at the batch size {} (got {})",
                  op, B, shape_str(batch_sizes));
      s.offset.push_back(off);
      s.rows.push_back(bs);
      off += bs;
      prev = bs;
    }
    s.T = int64_t(batch_sizes.size());
    FASTT_CHECK(off == N, RuntimeError,
                "{}: batch_sizes sum to {} but the input has {} rows", op, off,
                N);
  }
  s.N = N;
  return s;
}

void run_cell(int64_t mode, int64_t H, const Tensor& gi, const Tensor& gh,
              const Tensor& prev, Tensor& h, Tensor& ws) {
  KernelFn fn = lookup_kernel(Op::rnn_cell, gi.device().type, gi.dtype());
  KernelArgs a;
  a.in[0] = &gi;
  a.in[1] = &gh;
  a.in[2] = prev.defined() ? &prev : nullptr;
  a.in[3] = nullptr;
  a.out = &h;
  a.out2 = ws.defined() ? &ws : nullptr;
  a.i0 = mode;
  a.i1 = H;
  fn(a);
}

void run_cell_backward(int64_t mode, int64_t H, const Tensor& dh,
                       const Tensor& ws, const Tensor& prev,
                       const Tensor& dc, Tensor& dgi, Tensor& out2) {
  KernelFn fn =
      lookup_kernel(Op::rnn_cell_backward, dh.device().type, dh.dtype());
  KernelArgs a;
  a.in[0] = &dh;
  a.in[1] = &ws;
  a.in[2] = prev.defined() ? &prev : nullptr;
  a.in[3] = dc.defined() ? &dc : nullptr;
  a.out = &dgi;
  a.out2 = out2.defined() ? &out2 : nullptr;
  a.i0 = mode;
  a.i1 = H;
  fn(a);
}

void check_args(int64_t mode, const Tensor& gi, const Tensor& h0,
                const Tensor& c0, const Tensor& w_hh, const Tensor& b_hh,
                const Tensor& w_hr) {
  FASTT_CHECK(mode >= kTanh && mode <= kGru, ValueError,
              "rnn_layer: unknown mode {}", mode);
  const char* op = mode_name(mode);
  for (const Tensor* t : {&gi, &h0, &w_hh}) require_defined(*t, op);
  FASTT_CHECK(is_floating(gi.dtype()), RuntimeError,
              "{}: expected a floating point input, got {}", op,
              dtype_name(gi.dtype()));
  const Tensor* all[] = {&gi, &h0, &c0, &w_hh, &b_hh, &w_hr};
  const char* names[] = {"input", "hx", "cx", "weight_hh", "bias_hh",
                         "weight_hr"};
  for (int k = 0; k < 6; ++k) {
    const Tensor& t = *all[k];
    if (!t.defined()) continue;
    FASTT_CHECK(t.dtype() == gi.dtype(), RuntimeError,
                "{}: {} has dtype {} but the input has dtype {}", op,
                names[k], dtype_name(t.dtype()), dtype_name(gi.dtype()));
    FASTT_CHECK(t.device() == gi.device(), RuntimeError,
                "{}: {} is on {} but the input is on {}", op, names[k],
                t.device().str(), gi.device().str());
  }
  const int64_t G = gates(mode);
  FASTT_CHECK(w_hh.dim() == 2 && w_hh.sizes()[0] % G == 0, RuntimeError,
              "{}: weight_hh must be [{} * hidden_size, hidden], got {}", op,
              G, shape_str(w_hh.sizes()));
  const int64_t H = w_hh.sizes()[0] / G;
  const int64_t Hout = w_hr.defined() ? w_hr.sizes()[0] : H;
  FASTT_CHECK(!w_hr.defined() || mode == kLstm, RuntimeError,
              "{}: only LSTM has a projection", op);
  FASTT_CHECK(!w_hr.defined() || (w_hr.dim() == 2 && w_hr.sizes()[1] == H),
              RuntimeError, "{}: weight_hr must be [proj_size, {}], got {}",
              op, H, shape_str(w_hr.sizes()));
  FASTT_CHECK(w_hh.sizes()[1] == Hout, RuntimeError,
              "{}: weight_hh must be [{}, {}], got {}", op, G * H, Hout,
              shape_str(w_hh.sizes()));
  FASTT_CHECK(gi.dim() == 2 && gi.sizes()[1] == G * H, RuntimeError,
              "{}: the input projection must be [rows, {}], got {}", op,
              G * H, shape_str(gi.sizes()));
  FASTT_CHECK(h0.dim() == 2 && h0.sizes()[1] == Hout, RuntimeError,
              "{}: Expected hidden size [batch, {}], got {}", op, Hout,
              shape_str(h0.sizes()));
  FASTT_CHECK(!b_hh.defined() || (b_hh.dim() == 1 && b_hh.numel() == G * H),
              RuntimeError, "{}: bias_hh must be [{}], got {}", op, G * H,
              shape_str(b_hh.sizes()));
  if (mode == kLstm) {
    FASTT_CHECK(c0.defined() && c0.dim() == 2 &&
                    c0.sizes()[0] == h0.sizes()[0] && c0.sizes()[1] == H,
                RuntimeError, "{}: Expected cell size [{}, {}], got {}", op,
                h0.sizes()[0], H,
                c0.defined() ? shape_str(c0.sizes()) : std::string("none"));
  }
}

// Step order: t for forward, T-1-t for reverse.
inline int64_t at(const Steps& s, int64_t k, bool reverse) {
  return reverse ? s.T - 1 - k : k;
}

}  // namespace

std::vector<Tensor> forward(int64_t mode, const Tensor& gi_in,
                            const Tensor& h0, const Tensor& c0,
                            const Tensor& w_hh, const Tensor& b_hh,
                            const Tensor& w_hr, IntList batch_sizes,
                            bool reverse, Saved* saved) {
  check_args(mode, gi_in, h0, c0, w_hh, b_hh, w_hr);
  const char* op = mode_name(mode);
  const int64_t G = gates(mode), H = w_hh.sizes()[0] / G;
  const int64_t Hout = h0.sizes()[1], B = h0.sizes()[0];
  const Tensor gi = gi_in.contiguous();
  const Steps s = make_steps(batch_sizes, gi.sizes()[0], B, op);
  const Device dev = gi.device();
  const DType dt = gi.dtype();
  const int64_t W = workspace(mode);
  const bool proj = w_hr.defined();
  Tensor out = Tensor::empty({s.N, Hout}, dt, dev);
  Tensor ws = W ? Tensor::empty({s.N, W * H}, dt, dev) : Tensor();
  Tensor hp = Tensor::empty({s.N, Hout}, dt, dev);
  Tensor cp = mode == kLstm ? Tensor::empty({s.N, H}, dt, dev) : Tensor();
  Tensor hraw = proj ? Tensor::empty({s.N, H}, dt, dev) : Tensor();
  Tensor h = h0.contiguous().clone();
  Tensor c = mode == kLstm ? c0.contiguous().clone() : Tensor();
  const Tensor w_t = w_hh.t();
  const Tensor wr_t = proj ? w_hr.t() : Tensor();
  for (int64_t k = 0; k < s.T; ++k) {
    const int64_t t = at(s, k, reverse);
    const int64_t off = s.offset[size_t(t)], bs = s.rows[size_t(t)];
    Tensor h_in = h.narrow(0, 0, bs);
    hp.narrow(0, off, bs).copy_(h_in);
    Tensor gh = b_hh.defined() ? addmm(b_hh, h_in, w_t) : mm(h_in, w_t);
    Tensor step_ws = W ? ws.narrow(0, off, bs) : Tensor();
    Tensor prev;
    if (mode == kLstm) {
      prev = c.narrow(0, 0, bs);
      cp.narrow(0, off, bs).copy_(prev);
    } else if (mode == kGru) {
      prev = hp.narrow(0, off, bs);
    }
    Tensor h_new = proj ? hraw.narrow(0, off, bs) : out.narrow(0, off, bs);
    run_cell(mode, H, gi.narrow(0, off, bs), gh, prev, h_new, step_ws);
    if (proj) {
      Tensor o = out.narrow(0, off, bs);
      o.copy_(mm(h_new, wr_t));
    }
    h.narrow(0, 0, bs).copy_(out.narrow(0, off, bs));
    if (mode == kLstm) c.narrow(0, 0, bs).copy_(step_ws.narrow(1, 4 * H, H));
  }
  // tanh / relu: the backward reads each step's h, i.e. out.
  if (saved) *saved = Saved{W ? ws : out, hp, cp, hraw};
  return {out, h, c};
}

std::vector<Tensor> backward(int64_t mode, const Tensor& d_out,
                             const Tensor& d_hn, const Tensor& d_cn,
                             const Tensor& h0, const Tensor& w_hh,
                             const Tensor& w_hr, const Saved& sv,
                             IntList batch_sizes, bool reverse,
                             const bool needs[6]) {
  const char* op = mode_name(mode);
  const int64_t G = gates(mode), H = w_hh.sizes()[0] / G;
  const int64_t Hout = h0.sizes()[1], B = h0.sizes()[0];
  const int64_t N = sv.h_prev.sizes()[0];
  const Steps s = make_steps(batch_sizes, N, B, op);
  const Device dev = h0.device();
  const DType dt = h0.dtype();
  const bool proj = w_hr.defined();
  Tensor dh_next = d_hn.defined() ? d_hn.contiguous().clone()
                                  : zeros({B, Hout}, dt, dev);
  Tensor dc_next = mode == kLstm ? (d_cn.defined() ? d_cn.contiguous().clone()
                                                   : zeros({B, H}, dt, dev))
                                 : Tensor();
  Tensor dgi = Tensor::empty({N, G * H}, dt, dev);
  // The hidden part's gradient: dgi itself except for the GRU.
  Tensor dgh = mode == kGru ? Tensor::empty({N, G * H}, dt, dev) : dgi;
  Tensor gru2 = mode == kGru ? Tensor::empty({B, 4 * H}, dt, dev) : Tensor();
  Tensor dh_all = proj ? Tensor::empty({N, Hout}, dt, dev) : Tensor();
  Tensor dcell = mode == kLstm ? Tensor::empty({B, H}, dt, dev) : Tensor();
  const Tensor dout = d_out.defined() ? d_out.contiguous() : Tensor();
  for (int64_t k = s.T; k-- > 0;) {
    const int64_t t = at(s, k, reverse);
    const int64_t off = s.offset[size_t(t)], bs = s.rows[size_t(t)];
    Tensor dh = dh_next.narrow(0, 0, bs);
    if (dout.defined()) dh = add(dh, dout.narrow(0, off, bs));
    if (proj) {
      dh_all.narrow(0, off, bs).copy_(dh);
      dh = mm(dh, w_hr);
    }
    Tensor step_dgi = dgi.narrow(0, off, bs);
    Tensor ws;
    Tensor prev;
    Tensor o2;
    if (mode == kLstm) {
      ws = sv.ws.narrow(0, off, bs);
      prev = sv.c_prev.narrow(0, off, bs);
      o2 = dcell.narrow(0, 0, bs);
    } else if (mode == kGru) {
      ws = sv.ws.narrow(0, off, bs);
      prev = sv.h_prev.narrow(0, off, bs);
      o2 = gru2.narrow(0, 0, bs);
    } else {
      ws = sv.ws.narrow(0, off, bs);  // h of this step (out)
    }
    Tensor dcn = mode == kLstm ? dc_next.narrow(0, 0, bs) : Tensor();
    run_cell_backward(mode, H, dh.contiguous(), ws, prev, dcn, step_dgi, o2);
    Tensor step_dgh = step_dgi;
    if (mode == kGru) {
      step_dgh = dgh.narrow(0, off, bs);
      step_dgh.copy_(o2.narrow(1, 0, 3 * H));
    }
    // dh_prev = dgh @ W_hh (+ the GRU's direct term).
    Tensor dprev = mm(step_dgh, w_hh);
    if (mode == kGru) dprev = add(dprev, o2.narrow(1, 3 * H, H));
    dh_next.narrow(0, 0, bs).copy_(dprev);
    if (mode == kLstm) dc_next.narrow(0, 0, bs).copy_(o2);
  }
  std::vector<Tensor> g(6);
  if (needs[0]) g[0] = dgi;
  if (needs[1]) g[1] = dh_next;
  if (needs[2] && mode == kLstm) g[2] = dc_next;
  if (needs[3]) g[3] = mm(dgh.t(), sv.h_prev);
  if (needs[4]) g[4] = sum(dgh, std::vector<int64_t>{0});
  if (needs[5] && proj) g[5] = mm(dh_all.t(), sv.h_raw);
  return g;
}

}  // namespace rnn_detail

std::vector<Tensor> rnn_layer(int64_t mode, const Tensor& gi, const Tensor& h0,
                              const Tensor& c0, const Tensor& w_hh,
                              const Tensor& b_hh, const Tensor& w_hr,
                              IntList batch_sizes, bool reverse) {
  FASTT_AUTOCAST(Lower, gi, rnn_layer(mode, C(gi), C(h0), C(c0), C(w_hh), C(b_hh), C(w_hr), batch_sizes, reverse));
  if (autograd::should_record(gi, h0, c0, w_hh, b_hh, w_hr))
    return autograd::rnn_layer(mode, gi, h0, c0, w_hh, b_hh, w_hr,
                               batch_sizes, reverse);
  return rnn_detail::forward(mode, gi, h0, c0, w_hh, b_hh, w_hr, batch_sizes,
                             reverse, nullptr);
}

}  // namespace fastt
