// Bindings of fused multi-tensor optimizer steps (csrc/ops/optim.h).
#include "common.h"

namespace fastt {
namespace py {

PyMethodDef g_optim_functions[] = {{nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt
