// Placeholder: the reduce kernel family is being written.
#include "kernels/cpu/loop.h"

namespace fastt {
void register_reduce_kernels() {}
}  // namespace fastt
