// Picks the vector math table (kernels/cpu/vec_math.h) once, when fastt
// loads: the instruction-set level of kernels/cpu/cpu_isa.h.
#include "kernels/cpu/vec_math.h"

#include "kernels/cpu/cpu_isa.h"

namespace fastt {
namespace vec_math {

#if defined(FASTT_HAS_SLEEF)
namespace sse2 { extern const Table table; }
namespace avx2 { extern const Table table; }
namespace avx512 { extern const Table table; }
#endif

namespace {

const Table* pick() {
#if defined(FASTT_HAS_SLEEF)
  switch (cpu_isa::level()) {
    case cpu_isa::kAvx512: return &avx512::table;
    case cpu_isa::kAvx2: return &avx2::table;
    case cpu_isa::kSse2: return &sse2::table;
  }
#endif
  return nullptr;
}

}  // namespace

const Table* const g_table = pick();

}  // namespace vec_math
}  // namespace fastt
