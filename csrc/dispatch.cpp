// The dispatch table's storage and its one-time filling. Each kernel family
// has a register_* function (declared in kernels/registry.def); after they
// run, every entry left empty in the CPU column is marked unsupported for
// that dtype, and the CUDA column belongs to the CUDA backend.
#include "dispatch.h"

#include <mutex>

#include "errors.h"

namespace fastt {

#define FASTT_KERNEL_FAMILY(name) void register_##name##_kernels();
#include "kernels/registry.def"
#undef FASTT_KERNEL_FAMILY
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

void init_dispatch_table() {
  static std::once_flag once;
  std::call_once(once, [] {
#define FASTT_KERNEL_FAMILY(name) register_##name##_kernels();
#include "kernels/registry.def"
#undef FASTT_KERNEL_FAMILY
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
