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
// dense_out): past the last-level cache's size the operands cannot stay
// in it from one call to the next, and going around it leaves the memory
// bus to the loads (4M-element float32 add 1.42 -> 0.97 ms on a 32 MiB
// L3). Below that, a repeated op finds its output lines in the cache and
// plain stores win (1M-element relu, 8 MB moved: 94 us plain, 150 us
// streamed; with 2 threads streaming lost up to 32 MB). Read once at load
// from /sys (the largest cache's size); FASTT_STREAM_STORE_BYTES overrides
// (0: never). A plain global, so a kernel pays one load and compare.
extern int64_t g_stream_store_bytes;
// Runs written that way so far (a relaxed count, for tests: a battery
// that never reached the streaming code would pass without checking it).
extern int64_t g_stream_store_runs;
// The last-level cache's size in bytes as found at load (0: unknown).
int64_t llc_bytes();

}  // namespace cpu_isa
}  // namespace fastt
