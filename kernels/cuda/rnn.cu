// The recurrent cells' fused gate kernels on CUDA (the CPU's
// kernels/cpu/rnn.cpp; the math is kernels/rnn_cell.h): a thread per
// element of the B x H step.
#include "kernels/cuda/loop.cuh"
#include "kernels/rnn_cell.h"

namespace fastt {
namespace cuda {
namespace {
using namespace rnn_args;

template <class T>
const T* cptr(const Tensor* t) {
  return t && t->defined() ? static_cast<const T*>(t->data_ptr()) : nullptr;
}
template <class T>
T* mptr(Tensor* t) {
  return t && t->defined() ? static_cast<T*>(t->data_ptr()) : nullptr;
}

template <class T>
__global__ void rnn_cell_kernel(int64_t mode, int64_t B, int64_t H,
                                const T* gi, const T* gh, const T* prev, T* h,
                                T* ws) {
  const int64_t G = gates(mode), W = workspace(mode);
  const int64_t n = B * H, stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += stride) {
    const int64_t b = e / H, j = e % H;
    cell_forward(mode, H, j, gi + b * G * H, gh + b * G * H,
                 prev ? prev + b * H : nullptr, h + b * H,
                 ws ? ws + b * W * H : nullptr);
  }
}

template <class T>
__global__ void rnn_cell_backward_kernel(int64_t mode, int64_t B, int64_t H,
                                         const T* dh, const T* ws,
                                         const T* prev, const T* dcn, T* dgi,
                                         T* o2) {
  const int64_t G = gates(mode);
  const int64_t W = mode == kTanh || mode == kRelu ? 1 : workspace(mode);
  const int64_t O2 = mode == kLstm ? 1 : mode == kGru ? 4 : 0;
  const int64_t n = B * H, stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += stride) {
    const int64_t b = e / H, j = e % H;
    cell_backward(mode, H, j, dh + b * H, ws + b * W * H,
                  prev ? prev + b * H : nullptr, dcn ? dcn + b * H : nullptr,
                  dgi + b * G * H, o2 ? o2 + b * O2 * H : nullptr);
  }
}

template <class T>
struct RnnCellK {
  static void run(KernelArgs& a) {
    const int64_t B = a.out->sizes()[0], H = a.i1;
    if (B * H == 0) return;
    rnn_cell_kernel<T><<<grid_for(B * H, kBlock), kBlock, 0,
                         current_stream()>>>(
        a.i0, B, H, cptr<T>(a.in[0]), cptr<T>(a.in[1]), cptr<T>(a.in[2]),
        mptr<T>(a.out), mptr<T>(a.out2));
    FASTT_CUDA_CHECK_LAUNCH("rnn_cell");
  }
};

template <class T>
struct RnnCellBackwardK {
  static void run(KernelArgs& a) {
    const int64_t B = a.out->sizes()[0], H = a.i1;
    if (B * H == 0) return;
    rnn_cell_backward_kernel<T><<<grid_for(B * H, kBlock), kBlock, 0,
                                  current_stream()>>>(
        a.i0, B, H, cptr<T>(a.in[0]), cptr<T>(a.in[1]), cptr<T>(a.in[2]),
        cptr<T>(a.in[3]), mptr<T>(a.out), mptr<T>(a.out2));
    FASTT_CUDA_CHECK_LAUNCH("rnn_cell_backward");
  }
};

}  // namespace

void register_rnn_cuda_kernels() {
#define FASTT_KERNELS_rnn
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt
