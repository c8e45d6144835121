// The dispatch table's storage and its one-time filling. Each kernel family
// has a register_* function (declared in kernels/registry.def); after they
// run, every entry left empty in the CPU column is marked unsupported for
// that dtype, and the CUDA column belongs to the CUDA backend.
#include "dispatch.h"

#include <mutex>

#include "errors.h"
#include "kernels/cpu/cpu_isa.h"

namespace fastt {

#define FASTT_KERNEL_FAMILY(name) void register_##name##_kernels();
// Per-ISA families (CMakeLists.txt): one entry per level built, renamed by
// cmake/isa_object.sh; FASTT_ISA_BUILT (bit 1 << level) says which exist.
#if defined(FASTT_ISA_BUILT)
#define FASTT_ISA_DECL(level, name) \
  extern "C" void fastt_isa_##level##_register_##name();
#if FASTT_ISA_BUILT & 2
#define FASTT_ISA_DECL_SSE2(name) FASTT_ISA_DECL(sse2, name)
#define FASTT_ISA_FN_SSE2(name) &fastt_isa_sse2_register_##name
#else
#define FASTT_ISA_DECL_SSE2(name)
#define FASTT_ISA_FN_SSE2(name) nullptr
#endif
#if FASTT_ISA_BUILT & 4
#define FASTT_ISA_DECL_AVX2(name) FASTT_ISA_DECL(avx2, name)
#define FASTT_ISA_FN_AVX2(name) &fastt_isa_avx2_register_##name
#else
#define FASTT_ISA_DECL_AVX2(name)
#define FASTT_ISA_FN_AVX2(name) nullptr
#endif
#if FASTT_ISA_BUILT & 8
#define FASTT_ISA_DECL_AVX512(name) FASTT_ISA_DECL(avx512, name)
#define FASTT_ISA_FN_AVX512(name) &fastt_isa_avx512_register_##name
#else
#define FASTT_ISA_DECL_AVX512(name)
#define FASTT_ISA_FN_AVX512(name) nullptr
#endif
#define FASTT_ISA_KERNEL_FAMILY(name) \
  FASTT_ISA_DECL_SSE2(name) FASTT_ISA_DECL_AVX2(name) FASTT_ISA_DECL_AVX512(name)
#else
#define FASTT_ISA_KERNEL_FAMILY(name) FASTT_KERNEL_FAMILY(name)
#endif
#include "kernels/registry.def"
#undef FASTT_KERNEL_FAMILY
#undef FASTT_ISA_KERNEL_FAMILY
// Defined by the CUDA backend when it is built, else by no_cuda.cpp.
void register_cuda_kernels();

KernelFn g_dispatch[kNumOps][kNumDeviceTypes][kNumDTypes];
namespace {
Unsupported g_unsupported[kNumOps][kNumDeviceTypes][kNumDTypes];

constexpr const char* kOpNames[kNumOps] = {
#define FASTT_OP(name, family) #name,
#include "ops.def"
#undef FASTT_OP
};

struct TableInit {
  TableInit() { init_dispatch_table(); }
} g_table_init;

}  // namespace

const char* op_name(Op op) { return kOpNames[int(op)]; }

void register_kernel(Op op, DeviceType dev, DType dtype, KernelFn fn) {
  g_dispatch[int(op)][int(dev)][int(dtype)] = fn;
  g_unsupported[int(op)][int(dev)][int(dtype)] = Unsupported::None;
}

void mark_unsupported(Op op, DeviceType dev, DType dtype, Unsupported why) {
  g_dispatch[int(op)][int(dev)][int(dtype)] = nullptr;
  g_unsupported[int(op)][int(dev)][int(dtype)] = why;
}

KernelFn registered_kernel(Op op, DeviceType dev, DType dtype) {
  return g_dispatch[int(op)][int(dev)][int(dtype)];
}

Unsupported unsupported_reason(Op op, DeviceType dev, DType dtype) {
  return g_unsupported[int(op)][int(dev)][int(dtype)];
}

#if defined(FASTT_ISA_BUILT)
#define FASTT_ISA_CALL(name, level)                                        \
  {                                                                        \
    void (*const fns[])() = {nullptr, FASTT_ISA_FN_SSE2(name),             \
                             FASTT_ISA_FN_AVX2(name),                      \
                             FASTT_ISA_FN_AVX512(name)};                   \
    fns[level]();                                                          \
  }
#endif

bool register_isa_kernel_families(int level) {
#if defined(FASTT_ISA_BUILT)
  if (level < cpu_isa::kSse2 || level > cpu_isa::kAvx512 ||
      !((FASTT_ISA_BUILT >> level) & 1))
    return false;
#define FASTT_KERNEL_FAMILY(name)
#define FASTT_ISA_KERNEL_FAMILY(name) FASTT_ISA_CALL(name, level)
#include "kernels/registry.def"
#undef FASTT_KERNEL_FAMILY
#undef FASTT_ISA_KERNEL_FAMILY
  return true;
#else
  (void)level;
  return false;
#endif
}

void init_dispatch_table() {
  static std::once_flag once;
  std::call_once(once, [] {
#define FASTT_KERNEL_FAMILY(name) register_##name##_kernels();
#if defined(FASTT_ISA_BUILT)
    // The level was chosen among those built (kernels/cpu/cpu_isa.cpp).
    const int level = cpu_isa::level();
#define FASTT_ISA_KERNEL_FAMILY(name) FASTT_ISA_CALL(name, level)
#else
#define FASTT_ISA_KERNEL_FAMILY(name) FASTT_KERNEL_FAMILY(name)
#endif
#include "kernels/registry.def"
#undef FASTT_KERNEL_FAMILY
#undef FASTT_ISA_KERNEL_FAMILY
    register_cuda_kernels();
  });
}

void throw_no_kernel(Op op, DeviceType dev, DType dtype) {
  Unsupported why = g_unsupported[int(op)][int(dev)][int(dtype)];
  if (why == Unsupported::Device)
    throw NotImplementedError(fmt::format(
        "{}: no kernel for device '{}' (dtype {}); this backend does not "
        "implement the op in this build",
        op_name(op), device_type_name(dev), dtype_name(dtype)));
  throw NotImplementedError(fmt::format(
      "{}: not implemented for dtype '{}' on device '{}'", op_name(op),
      dtype_name(dtype), device_type_name(dev)));
}

}  // namespace fastt
