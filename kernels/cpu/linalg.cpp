// Placeholder: the linalg kernel family is being written.
#include "kernels/cpu/loop.h"

namespace fastt {
void register_linalg_kernels() {}
}  // namespace fastt
