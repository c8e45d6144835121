// Placeholder: the factory kernel family is being written.
#include "kernels/cpu/loop.h"

namespace fastt {
void register_factory_kernels() {}
}  // namespace fastt
