// Bindings of convolution and pooling (csrc/ops/conv.h).
#include "common.h"

namespace fastt {
namespace py {

PyMethodDef g_conv_functions[] = {{nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt
