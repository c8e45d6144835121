// float32 CPU convolution through oneDNN (kernels/cpu/onednn_conv.cpp):
// fills csrc/ops/conv.h's g_cpu_conv_hooks when fastt is built with
// oneDNN (libdnnl-dev); without it both are no-ops / false.
#pragma once

namespace fastt {
void register_onednn_conv();
bool onednn_conv_built();
// fastt.backends.mkldnn.enabled (torch's switch): off, every convolution
// takes fastt's im2col path.
void set_onednn_enabled(bool on);
bool onednn_enabled();
}  // namespace fastt
