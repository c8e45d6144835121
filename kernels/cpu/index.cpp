// Placeholder: the index kernel family is being written.
#include "kernels/cpu/loop.h"

namespace fastt {
void register_index_kernels() {}
}  // namespace fastt
