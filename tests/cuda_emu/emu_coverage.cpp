// Kernel coverage of an emulated test run: with FASTT_EMU_COVERAGE=FILE,
// every registered (op, CUDA, dtype) kernel is wrapped in a counting
// trampoline, and at exit FILE lists each entry's call count ("op dtype
// count"), so scripts/cuda_emu_test.sh can name kernels no test ran.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "csrc/dispatch.h"

namespace fastt {
namespace {

constexpr int kEntries = kNumOps * kNumDTypes;
KernelFn g_orig[kEntries];
std::atomic<long> g_calls[kEntries];

template <int I>
void counting(KernelArgs& a) {
  g_calls[I].fetch_add(1, std::memory_order_relaxed);
  g_orig[I](a);
}

template <int... I>
constexpr KernelFn trampoline(int i, std::integer_sequence<int, I...>) {
  constexpr KernelFn table[] = {&counting<I>...};
  return table[i];
}

void dump() {
  const char* path = std::getenv("FASTT_EMU_COVERAGE");
  FILE* f = path ? std::fopen(path, "w") : nullptr;
  if (!f) return;
  for (int i = 0; i < kEntries; ++i)
    if (g_orig[i])
      std::fprintf(f, "%s %s %ld\n", op_name(Op(i / kNumDTypes)),
                   dtype_name(DType(i % kNumDTypes)), g_calls[i].load());
  std::fclose(f);
}

struct CoverageInit {
  CoverageInit() {
    if (!std::getenv("FASTT_EMU_COVERAGE")) return;
    init_dispatch_table();
    const int dev = int(DeviceType::CUDA);
    for (int i = 0; i < kEntries; ++i) {
      KernelFn& fn = g_dispatch[i / kNumDTypes][dev][i % kNumDTypes];
      if (!fn) continue;
      g_orig[i] = fn;
      fn = trampoline(i, std::make_integer_sequence<int, kEntries>{});
    }
    std::atexit(dump);
  }
} g_coverage_init;

}  // namespace
}  // namespace fastt
