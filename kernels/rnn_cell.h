// One element of the recurrent cells' fused gate kernels, forward and
// backward, shared by kernels/cpu/rnn.cpp and kernels/cuda/rnn.cu (in
// opmath: float for 16-bit types). The argument layout is rnn_args below;
// csrc/ops/rnn.cpp runs the time loop around them (one GEMM per step plus
// one of these kernels).
#pragma once
#include <cmath>
#include <cstdint>

#include "csrc/half.h"
#include "csrc/macros.h"

namespace fastt {
namespace rnn_args {

// Cell kinds (KernelArgs::i0), torch's mode names.
enum Mode : int64_t { kTanh = 0, kRelu = 1, kLstm = 2, kGru = 3 };

// Gates per cell (the GEMMs' width is gates(mode) * hidden).
FASTT_HD constexpr int64_t gates(int64_t mode) {
  return mode == kLstm ? 4 : mode == kGru ? 3 : 1;
}
// Columns of the per-step workspace the backward reads: LSTM i, f, g, o
// (activated) and c; GRU r, z, n and the hidden projection's n part.
FASTT_HD constexpr int64_t workspace(int64_t mode) {
  return mode == kLstm ? 5 : mode == kGru ? 4 : 0;
}

// rnn_cell (i0 mode, i1 hidden H), rows of B:
//   in[0] gi (B, G*H)  input projection + b_ih for this step
//   in[1] gh (B, G*H)  h_prev @ W_hh^T + b_hh
//   in[2] LSTM: c_prev (B, H); GRU: h_prev (B, H); else unused
//   out   h (B, H)     (LSTM: o * tanh(c), before any projection)
//   out2  LSTM/GRU: workspace (B, workspace(mode) * H); else unused
// rnn_cell_backward (i0 mode, i1 H):
//   in[0] dh (B, H)    gradient of the step's h (all of it)
//   in[1] LSTM/GRU: the workspace; tanh/relu: h
//   in[2] LSTM: c_prev; GRU: h_prev
//   in[3] LSTM: dc (B, H), the gradient of the step's c from later steps
//   out   dgi (B, G*H) gradient of the gate pre-activations' input part
//   out2  LSTM: dc_prev (B, H); GRU: (B, 4H) = the hidden part's gradient
//         (3H: differs from dgi in n) then dh_prev's direct term z * dh
//   (tanh/relu and LSTM: the hidden part's gradient equals dgi.)

template <class A>
FASTT_HD A sigmoid(A x) {
  return A(1) / (A(1) + std::exp(-x));
}

// The cell for element j of a row: reads the row's gate pre-activations
// (gi + gh) and writes h (and the workspace).
template <class T>
FASTT_HD void cell_forward(int64_t mode, int64_t H, int64_t j, const T* gi,
                           const T* gh, const T* prev, T* h, T* ws) {
  using A = opmath_t<T>;
  auto pre = [&](int64_t k) { return A(gi[k * H + j]) + A(gh[k * H + j]); };
  if (mode == kLstm) {
    const A i = sigmoid(pre(0)), f = sigmoid(pre(1)), g = std::tanh(pre(2)),
            o = sigmoid(pre(3));
    const A c = f * A(prev[j]) + i * g;
    h[j] = T(o * std::tanh(c));
    ws[j] = T(i);
    ws[H + j] = T(f);
    ws[2 * H + j] = T(g);
    ws[3 * H + j] = T(o);
    ws[4 * H + j] = T(c);
  } else if (mode == kGru) {
    const A r = sigmoid(pre(0)), z = sigmoid(pre(1));
    const A hn = A(gh[2 * H + j]);
    const A n = std::tanh(A(gi[2 * H + j]) + r * hn);
    h[j] = T((A(1) - z) * n + z * A(prev[j]));
    ws[j] = T(r);
    ws[H + j] = T(z);
    ws[2 * H + j] = T(n);
    ws[3 * H + j] = T(hn);
  } else {
    const A x = pre(0);
    h[j] = T(mode == kTanh ? std::tanh(x) : (x < A(0) ? A(0) : x));
  }
}

template <class T>
FASTT_HD void cell_backward(int64_t mode, int64_t H, int64_t j, const T* dh,
                            const T* ws, const T* prev, const T* dc_next,
                            T* dgi, T* out2) {
  using A = opmath_t<T>;
  const A d = A(dh[j]);
  if (mode == kLstm) {
    const A i = A(ws[j]), f = A(ws[H + j]), g = A(ws[2 * H + j]),
            o = A(ws[3 * H + j]), c = A(ws[4 * H + j]);
    const A tc = std::tanh(c);
    const A dc = A(dc_next[j]) + d * o * (A(1) - tc * tc);
    dgi[j] = T(dc * g * i * (A(1) - i));
    dgi[H + j] = T(dc * A(prev[j]) * f * (A(1) - f));
    dgi[2 * H + j] = T(dc * i * (A(1) - g * g));
    dgi[3 * H + j] = T(d * tc * o * (A(1) - o));
    out2[j] = T(dc * f);
  } else if (mode == kGru) {
    const A r = A(ws[j]), z = A(ws[H + j]), n = A(ws[2 * H + j]),
            hn = A(ws[3 * H + j]);
    const A dnp = d * (A(1) - z) * (A(1) - n * n);
    const A drp = dnp * hn * r * (A(1) - r);
    const A dzp = d * (A(prev[j]) - n) * z * (A(1) - z);
    dgi[j] = T(drp);
    dgi[H + j] = T(dzp);
    dgi[2 * H + j] = T(dnp);
    out2[j] = T(drp);
    out2[H + j] = T(dzp);
    out2[2 * H + j] = T(dnp * r);
    out2[3 * H + j] = T(d * z);
  } else {
    const A y = A(ws[j]);  // h
    dgi[j] = T(mode == kTanh ? d * (A(1) - y * y) : (y > A(0) ? d : A(0)));
  }
}

}  // namespace rnn_args
}  // namespace fastt
