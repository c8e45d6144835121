// The instruction-set level fastt's CPU kernels run at, chosen once when
// fastt loads: the widest level the CPU runs among those the build has
// (CMake's FASTT_CPU_ISA_LEVELS), or a lower one FASTT_CPU_ISA names
// (sse2 | avx2 | avx512; torch's ATEN_CPU_CAPABILITY is read too). It picks
// which copy of the per-ISA kernel families fills the dispatch table
// (csrc/dispatch.cpp) and the vector math table (kernels/cpu/vec_math.cpp).
#pragma once
#include <cstdint>

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

// Bytes an elementwise kernel moves (inputs + output) from which it writes
// its dense output with non-temporal stores (kernels/cpu/loop.h,
// dense_out): past a quarter of the last-level cache the output would
// only push the inputs out of it, and going around the cache lets the
// loads have the memory bus (4M-element float32 add 2.1 -> 1.4 ms on a
// 32 MiB L3). Read once at load from /sys (the last-level cache's size);
// FASTT_STREAM_STORE_BYTES overrides (0: never). A plain global, so a
// kernel pays one load and compare for the choice.
extern int64_t g_stream_store_bytes;
// Runs written that way so far (a relaxed count, for tests: a battery
// that never reached the streaming code would pass without checking it).
extern int64_t g_stream_store_runs;
// The last-level cache's size in bytes as found at load (0: unknown).
int64_t llc_bytes();

}  // namespace cpu_isa
}  // namespace fastt
