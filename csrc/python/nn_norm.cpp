// Bindings of normalization, softmax backward, losses (csrc/ops/nn.h).
#include "common.h"

namespace fastt {
namespace py {

PyMethodDef g_nn_functions[] = {{nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt
