// The instruction-set level fastt's CPU kernels run at, chosen once when
// fastt loads: the widest level the CPU runs among those the build has
// (CMake's FASTT_CPU_ISA_LEVELS), or a lower one FASTT_CPU_ISA names
// (sse2 | avx2 | avx512; torch's ATEN_CPU_CAPABILITY is read too). It picks
// which copy of the per-ISA kernel families fills the dispatch table
// (csrc/dispatch.cpp) and the vector math table (kernels/cpu/vec_math.cpp).
#pragma once

namespace fastt {
namespace cpu_isa {

enum Level : int { kNone = 0, kSse2 = 1, kAvx2 = 2, kAvx512 = 3 };

// The level in use; kNone off x86-64. Safe to call during static
// initialization (the choice is a function-local static).
int level();
// The widest level this CPU runs that this build has.
int supported();
// Bit (1 << level) for each level the kernel families were built for.
int built_mask();
// "none", "sse2", "avx2", "avx512".
const char* name(int level);
// Why FASTT_CPU_ISA was not taken as given ("" when it was).
const char* warning();

}  // namespace cpu_isa
}  // namespace fastt
