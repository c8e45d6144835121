// The recurrent cells' fused gate kernels on the CPU (the math is
// kernels/rnn_cell.h, shared with CUDA): one pass over the B x H elements
// of a time step, rows in parallel when the step is large. float rows run
// a vectorized copy of the same math (sigmoid and tanh from vec_exp; the
// AVX2/AVX-512 clones), the other dtypes the shared scalar code.
#include "kernels/cpu/vec_exp.h"

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/loop.h"
#include "kernels/rnn_cell.h"

namespace fastt {
namespace {
using namespace cpu;
using namespace rnn_args;

template <class T>
const T* cptr(const Tensor* t) {
  return t && t->defined() ? static_cast<const T*>(t->data_ptr()) : nullptr;
}
template <class T>
T* mptr(Tensor* t) {
  return t && t->defined() ? static_cast<T*>(t->data_ptr()) : nullptr;
}

// ---- float rows, vectorized ----
inline float vsigmoid(float x) { return vec_sigmoid(x); }
inline float vtanh(float x) { return vec_tanh(x); }

struct RowsF32 {
  int64_t mode, H, G, W, O2;
  const float *gi, *gh, *prev, *dh, *ws, *dcn;
  float *h, *wso, *dgi, *o2;
};

FASTT_VEC_CLONES void forward_rows_f32(const RowsF32& c, int64_t rb,
                                       int64_t re) {
  const int64_t H = c.H;
  for (int64_t b = rb; b < re; ++b) {
    const float* gi = c.gi + b * c.G * H;
    const float* gh = c.gh + b * c.G * H;
    float* h = c.h + b * H;
    if (c.mode == kLstm) {
      const float* cp = c.prev + b * H;
      float* ws = c.wso + b * c.W * H;
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        const float i = vsigmoid(gi[j] + gh[j]);
        const float f = vsigmoid(gi[H + j] + gh[H + j]);
        const float g = vtanh(gi[2 * H + j] + gh[2 * H + j]);
        const float o = vsigmoid(gi[3 * H + j] + gh[3 * H + j]);
        const float cc = f * cp[j] + i * g;
        h[j] = o * vtanh(cc);
        ws[j] = i;
        ws[H + j] = f;
        ws[2 * H + j] = g;
        ws[3 * H + j] = o;
        ws[4 * H + j] = cc;
      }
    } else if (c.mode == kGru) {
      const float* hp = c.prev + b * H;
      float* ws = c.wso + b * c.W * H;
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        const float r = vsigmoid(gi[j] + gh[j]);
        const float z = vsigmoid(gi[H + j] + gh[H + j]);
        const float hn = gh[2 * H + j];
        const float n = vtanh(gi[2 * H + j] + r * hn);
        h[j] = (1.0f - z) * n + z * hp[j];
        ws[j] = r;
        ws[H + j] = z;
        ws[2 * H + j] = n;
        ws[3 * H + j] = hn;
      }
    } else if (c.mode == kTanh) {
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) h[j] = vtanh(gi[j] + gh[j]);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        const float x = gi[j] + gh[j];
        h[j] = x < 0.0f ? 0.0f : x;
      }
    }
  }
}

FASTT_VEC_CLONES void backward_rows_f32(const RowsF32& c, int64_t rb,
                                        int64_t re) {
  const int64_t H = c.H;
  for (int64_t b = rb; b < re; ++b) {
    const float* dh = c.dh + b * H;
    const float* ws = c.ws + b * c.W * H;
    float* dgi = c.dgi + b * c.G * H;
    if (c.mode == kLstm) {
      const float* cp = c.prev + b * H;
      const float* dcn = c.dcn + b * H;
      float* dcp = c.o2 + b * H;
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        const float i = ws[j], f = ws[H + j], g = ws[2 * H + j],
                    o = ws[3 * H + j];
        const float tc = vtanh(ws[4 * H + j]);
        const float d = dh[j];
        const float dc = dcn[j] + d * o * (1.0f - tc * tc);
        dgi[j] = dc * g * i * (1.0f - i);
        dgi[H + j] = dc * cp[j] * f * (1.0f - f);
        dgi[2 * H + j] = dc * i * (1.0f - g * g);
        dgi[3 * H + j] = d * tc * o * (1.0f - o);
        dcp[j] = dc * f;
      }
    } else {
      for (int64_t j = 0; j < H; ++j)
        cell_backward<float>(c.mode, H, j, dh, ws,
                             c.prev ? c.prev + b * H : nullptr, nullptr, dgi,
                             c.o2 ? c.o2 + b * c.O2 * H : nullptr);
    }
  }
}

template <class T>
struct RnnCellK {
  static void run(KernelArgs& a) {
    const int64_t mode = a.i0, H = a.i1, G = gates(mode),
                  W = workspace(mode);
    const int64_t B = a.out->sizes()[0];
    const T *gi = cptr<T>(a.in[0]), *gh = cptr<T>(a.in[1]),
            *prev = cptr<T>(a.in[2]);
    T *h = mptr<T>(a.out), *ws = mptr<T>(a.out2);
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(G * H, 1));
    if constexpr (std::is_same_v<T, float>) {
      const RowsF32 c{mode, H, G, W, 0, gi, gh, prev, nullptr, nullptr,
                      nullptr, h, ws, nullptr, nullptr};
      parallel_for(0, B, grain, [&](int64_t rb, int64_t re) {
        forward_rows_f32(c, rb, re);
      });
      return;
    }
    parallel_for(0, B, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(
                                                 G * H, 1)),
                 [&](int64_t rb, int64_t re) {
                   for (int64_t b = rb; b < re; ++b)
                     for (int64_t j = 0; j < H; ++j)
                       cell_forward(mode, H, j, gi + b * G * H, gh + b * G * H,
                                    prev ? prev + b * H : nullptr, h + b * H,
                                    ws ? ws + b * W * H : nullptr);
                 });
  }
};

template <class T>
struct RnnCellBackwardK {
  static void run(KernelArgs& a) {
    const int64_t mode = a.i0, H = a.i1, G = gates(mode);
    const int64_t W = mode == kTanh || mode == kRelu ? 1 : workspace(mode);
    const int64_t O2 = mode == kLstm ? 1 : mode == kGru ? 4 : 0;
    const int64_t B = a.out->sizes()[0];
    const T *dh = cptr<T>(a.in[0]), *ws = cptr<T>(a.in[1]),
            *prev = cptr<T>(a.in[2]), *dcn = cptr<T>(a.in[3]);
    T *dgi = mptr<T>(a.out), *o2 = mptr<T>(a.out2);
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(G * H, 1));
    if constexpr (std::is_same_v<T, float>) {
      const RowsF32 c{mode, H, G, W, O2, nullptr, nullptr, prev, dh, ws,
                      dcn, nullptr, nullptr, dgi, o2};
      parallel_for(0, B, grain, [&](int64_t rb, int64_t re) {
        backward_rows_f32(c, rb, re);
      });
      return;
    }
    parallel_for(0, B, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(
                                                 G * H, 1)),
                 [&](int64_t rb, int64_t re) {
                   for (int64_t b = rb; b < re; ++b)
                     for (int64_t j = 0; j < H; ++j)
                       cell_backward(mode, H, j, dh + b * H, ws + b * W * H,
                                     prev ? prev + b * H : nullptr,
                                     dcn ? dcn + b * H : nullptr,
                                     dgi + b * G * H,
                                     o2 ? o2 + b * O2 * H : nullptr);
                 });
  }
};

}  // namespace

void register_rnn_kernels() {
#define FASTT_KERNELS_rnn
#include "kernels/kernels.def"
}

}  // namespace fastt
