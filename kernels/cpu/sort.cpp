// Placeholder: the sort kernel family is being written.
#include "kernels/cpu/loop.h"

namespace fastt {
void register_sort_kernels() {}
}  // namespace fastt
