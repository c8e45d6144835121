// The cuDNN fast path of the convolutions, as hooks csrc/ops/conv.cpp asks
// first for CUDA tensors. Each hook fills a dense, preallocated result and
// returns true, or returns false without writing (dtype, geometry or no
// cuDNN in this build) and the im2col + gemm composition runs instead.
// Plain C++ (no CUDA headers), so the core compiles without CUDA.
#pragma once
#include <cstdint>

#include "csrc/tensor.h"

namespace fastt {

// One convolution in the composition's terms (csrc/ops/conv.cpp's Geom):
// the windowed side x [N, C, H, W], the other side y [N, O, oh, ow] and
// weight [O, C/G, kh, kw]; pad = the pad before the first row / column.
struct ConvDesc {
  int64_t N, C, H, W, O, G, kh, kw, oh, ow;
  int64_t stride[2], pad[2], dil[2];
};

struct CudnnConvHooks {
  // y = conv(x, w) (+ bias[O])
  bool (*forward)(const Tensor& x, const Tensor& w, const Tensor* bias,
                  const ConvDesc& d, Tensor& y);
  // x-side = conv's input gradient of gy (+ bias[C]): also the forward of
  // conv_transpose2d
  bool (*input_grad)(const Tensor& gy, const Tensor& w, const Tensor* bias,
                     const ConvDesc& d, Tensor& gx);
  // gw [O, C/G, kh, kw] = conv's weight gradient
  bool (*weight_grad)(const Tensor& gy, const Tensor& x, const ConvDesc& d,
                      Tensor& gw);
};

// Defined (all null) in csrc/ops/conv.cpp; set once by the CUDA backend's
// registration when built with cuDNN.
extern CudnnConvHooks g_cudnn_conv_hooks;

namespace cuda {
// Sets g_cudnn_conv_hooks (kernels/cuda/cudnn_conv.cpp; a no-op without
// FASTT_WITH_CUDNN). Called from register_conv_cuda_kernels().
void register_cudnn_conv();
}  // namespace cuda

}  // namespace fastt
