// Recurrent layers (torch's RNN/LSTM/GRU, one layer and one direction per
// call): the input projection for all steps is the caller's one GEMM
// (gi); here the time loop runs one GEMM for the hidden projection and
// one fused gate kernel (Op::rnn_cell) per step, and the backward through
// time mirrors it (Op::rnn_cell_backward plus one GEMM per step; the weight
// gradients are one GEMM each over all steps). Packed sequences: rows of
// gi / out are grouped by time step, batch_sizes[t] rows per step
// (non-increasing), as torch's PackedSequence.data.
#pragma once
#include <vector>

#include "../tensor.h"

namespace fastt {

// mode: 0 tanh, 1 relu, 2 LSTM, 3 GRU (kernels/rnn_cell.h).
//   gi     [N, G*H]  input projection + b_ih, N = sum(batch_sizes) (or
//                    T * B when batch_sizes is empty: gi is [T, B, G*H]
//                    flattened, B = h0.size(0))
//   h0     [B, Hout] initial hidden state (Hout = proj size, else H)
//   c0     [B, H]    LSTM's initial cell state (else undefined)
//   w_hh   [G*H, Hout], b_hh [G*H] (may be undefined)
//   w_hr   [Hout, H] LSTM's projection (proj_size > 0; else undefined)
// Returns {out [N, Hout], h_n [B, Hout], c_n [B, H] (LSTM) or undefined}.
// reverse runs the steps from the last to the first.
std::vector<Tensor> rnn_layer(int64_t mode, const Tensor& gi, const Tensor& h0,
                              const Tensor& c0, const Tensor& w_hh,
                              const Tensor& b_hh, const Tensor& w_hr,
                              IntList batch_sizes, bool reverse);

namespace rnn_detail {
// What the forward keeps for the backward (all [N, ...], rows by step):
// the workspace of every step, the hidden state each step read, the cell
// state each step read (LSTM) and the unprojected h (LSTM with
// projection).
struct Saved {
  Tensor ws, h_prev, c_prev, h_raw;
};
std::vector<Tensor> forward(int64_t mode, const Tensor& gi, const Tensor& h0,
                            const Tensor& c0, const Tensor& w_hh,
                            const Tensor& b_hh, const Tensor& w_hr,
                            IntList batch_sizes, bool reverse, Saved* saved);
// Gradients {gi, h0, c0, w_hh, b_hh, w_hr} (undefined where not needed)
// from those of {out, h_n, c_n} (any may be undefined).
std::vector<Tensor> backward(int64_t mode, const Tensor& d_out,
                             const Tensor& d_hn, const Tensor& d_cn,
                             const Tensor& h0, const Tensor& w_hh,
                             const Tensor& w_hr, const Saved& saved,
                             IntList batch_sizes, bool reverse,
                             const bool needs[6]);
}  // namespace rnn_detail

}  // namespace fastt
