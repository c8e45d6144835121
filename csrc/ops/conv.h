// Convolution (conv1d, conv2d, conv_transpose2d) and 2-D pooling (max, avg,
// adaptive avg), forward and backward, with torch's semantics and checks.
// Convolutions are im2col/col2im kernels around Op::gemm; pools are one
// kernel each (kernels/cpu/conv.cpp). None of these record autograd: the
// *_backward functions are what the autograd formulas call.
#pragma once
#include <array>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "../tensor.h"

namespace fastt {

// Size arguments (stride, padding, dilation, kernel_size, ...) take one
// value for every spatial dim or one value per spatial dim, like torch's
// int-or-tuple arguments. Inputs may be batched ([N, C, ...]) or not
// ([C, ...]); the result follows. Empty batches and channel counts work.
//
// fastt extension: the convolutions' `padding` may also hold 2 values per
// spatial dim, all the "before" pads then all the "after" pads (for 2-D:
// top, left, bottom, right). padding="same" with an even kernel needs it;
// the ConvPadding overloads resolve to it; backward takes the same list.

// x [N, C, L], weight [O, C/groups, k], bias [O] or undefined.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride = {1}, IntList padding = {0},
              IntList dilation = {1}, int64_t groups = 1);
// x [N, C, H, W], weight [O, C/groups, kh, kw], bias [O] or undefined.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride = {1}, IntList padding = {0},
              IntList dilation = {1}, int64_t groups = 1);
// padding="valid" (no padding) or "same" (output size = input size;
// stride must be 1), like torch's string padding.
enum class ConvPadding : uint8_t { Valid, Same };
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride, ConvPadding padding, IntList dilation = {1},
              int64_t groups = 1);
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              IntList stride, ConvPadding padding, IntList dilation = {1},
              int64_t groups = 1);
// The explicit pads those use (for 2-D: 2 values, or 4 when "same" needs
// more after than before); pass them to the backward.
std::vector<int64_t> conv_padding(ConvPadding padding, const Tensor& weight,
                                  IntList stride, IntList dilation,
                                  int spatial, const char* op);
// "valid" / "same" -> ConvPadding; RuntimeError for anything else.
ConvPadding conv_padding_from_string(std::string_view padding);

// Gradients of conv{1,2}d for (input, weight, bias); a false entry of
// output_mask leaves that result undefined. Arguments as in the forward.
std::tuple<Tensor, Tensor, Tensor> conv1d_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight,
    IntList stride, IntList padding, IntList dilation, int64_t groups,
    std::array<bool, 3> output_mask = {true, true, true});
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight,
    IntList stride, IntList padding, IntList dilation, int64_t groups,
    std::array<bool, 3> output_mask = {true, true, true});

// x [N, Cin, H, W], weight [Cin, Cout/groups, kh, kw], bias [Cout].
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight,
                        const Tensor& bias, IntList stride = {1},
                        IntList padding = {0}, IntList output_padding = {0},
                        int64_t groups = 1, IntList dilation = {1});
std::tuple<Tensor, Tensor, Tensor> conv_transpose2d_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight,
    IntList stride, IntList padding, IntList output_padding, int64_t groups,
    IntList dilation, std::array<bool, 3> output_mask = {true, true, true});

// (values, int64 indices into each input plane, h * W + w). An empty
// stride means stride = kernel_size. NaN wins, like torch.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& x, IntList kernel_size, IntList stride = {},
    IntList padding = {0}, IntList dilation = {1}, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& x, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, IntList dilation = {1},
                  bool ceil_mode = false);
// Routes grad_out to the input elements `indices` names.
Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& x,
                           const Tensor& indices);

Tensor avg_pool2d(const Tensor& x, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, bool ceil_mode = false,
                  bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool2d_backward(const Tensor& grad_out, const Tensor& x,
                           IntList kernel_size, IntList stride,
                           IntList padding, bool ceil_mode,
                           bool count_include_pad,
                           std::optional<int64_t> divisor_override);

// output_size: 2 values (or 1 for both); -1 keeps that input dim's size
// (torch's None).
Tensor adaptive_avg_pool2d(const Tensor& x, IntList output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_out, const Tensor& x);

// ---- Kernel argument layout (shared with kernels/cpu/conv.cpp) ----
// Every kernel of this family gets 4-D tensors [N, C, H, W] (any strides
// for inputs; outputs dense) and its window in KernelArgs::dims, in this
// order. im2col/col2im see the column tensor as [N, C*kh*kw, oh*ow] whose
// last stride is 1.
enum WindowParam : int {
  kWinKernelH,
  kWinKernelW,
  kWinStrideH,
  kWinStrideW,
  kWinPadH,  // before the first row / column
  kWinPadW,
  kWinDilationH,
  kWinDilationW,
  kWinOutH,  // the windowed side's spatial size (output of the forward)
  kWinOutW,
  kWinCountPad,  // avg_pool2d: count_include_pad
  kWinDivisor,   // avg_pool2d: divisor_override, 0 when none
  kNumWindowParams
};

// ---- a device library's convolutions (cuDNN) ----
// The convolutions ask these hooks first for tensors on a device whose
// backend set them. Each hook fills a dense, preallocated result and
// returns true, or returns false without writing (dtype, geometry, no
// library in this build) and the im2col + gemm composition runs instead.
//
// One convolution in the composition's terms (csrc/ops/conv.cpp's Geom):
// the windowed side x [N, C, H, W], the other side y [N, O, oh, ow] and
// weight [O, C/G, kh, kw]; pad = the pad before the first row / column.
struct ConvDesc {
  int64_t N, C, H, W, O, G, kh, kw, oh, ow;
  int64_t stride[2], pad[2], dil[2];
};

struct ConvHooks {
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

// Defined (all null) in csrc/ops/conv.cpp; set once by a backend's
// registration (the CUDA backend's, when built with cuDNN:
// kernels/cuda/cudnn_conv.cpp).
extern ConvHooks g_conv_hooks;
// The CPU's: float32 through oneDNN (kernels/cpu/onednn_conv.cpp); a hook
// returns false to leave a call to fastt's im2col path.
extern ConvHooks g_cpu_conv_hooks;

}  // namespace fastt
