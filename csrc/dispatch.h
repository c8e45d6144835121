// The single-level dispatch table: kDispatch[op][device][dtype] holds a
// plain function pointer. An op entry point fills a KernelArgs, looks the
// kernel up once and calls it. No strings, maps, std::function, virtual
// calls or locks on that path. The dtype column is the op's compute dtype.
#pragma once
#include <cstdint>

#include "device.h"
#include "dtype.h"
#include "macros.h"
#include "tensor.h"

namespace fastt {

enum class Op : uint16_t {
#define FASTT_OP(name, family) name,
#include "ops.def"
#undef FASTT_OP
};
constexpr int kNumOps = 0
#define FASTT_OP(name, family) +1
#include "ops.def"
#undef FASTT_OP
    ;
const char* op_name(Op op);

constexpr int kMaxOperands = 4;

// What a kernel receives. Loop-family kernels read the first block (an
// elementwise iteration space, already broadcast and coalesced); the others
// read the tensors and parameters. Fields a kernel does not use are left
// uninitialised by the caller (the Tensors block's pointers excepted), so
// keep reads to what the op row documents.
struct KernelArgs {
  // -- Loop family: operands are outputs first, then inputs --
  int nops;        // number of operands
  int ndim;        // >= 1; dim 0 is the fastest varying
  int64_t numel;   // product of sizes
  bool contiguous; // every operand dense with stride == itemsize over numel
  char* data[kMaxOperands];
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];  // in bytes, 0 where broadcast
  DType dtypes[kMaxOperands];                // per operand, for copy
  alignas(16) char scalar_buf[kMaxOperands][16];  // storage for scalar inputs

  // -- Parameters (op rows in ops.def say which) --
  double f0, f1;
  int64_t i0, i1, i2;
  Scalar s0;

  // -- Tensors family (null when unused: a recording copies what the
  // pointers name) --
  Tensor* out = nullptr;
  Tensor* out2 = nullptr;
  const Tensor* in[kMaxOperands] = {};
  IntList dims;
};

using KernelFn = void (*)(KernelArgs&);

// Why a table entry is empty.
enum class Unsupported : uint8_t {
  None = 0,    // a kernel is registered
  DType = 1,   // the op does not exist for this dtype (e.g. bitwise on float)
  Device = 2,  // the backend has no kernel for this op (yet / not built)
};

extern KernelFn g_dispatch[kNumOps][kNumDeviceTypes][kNumDTypes];

[[noreturn]] void throw_no_kernel(Op op, DeviceType dev, DType dtype);

// Dispatch hook (csrc/profiler.cpp). While a profiling session runs or a
// thread records a step (csrc/capture.h), lookups return a trampoline
// that runs the kernel g_dispatch holds for (op, dev, dtype) and times or
// records it. A plain bool, hidden (libfastt is always linked statically)
// so the test is one cmpb on a rip-relative address plus a predicted jump.
// It changes only in profiler::start/stop and capture::begin/end; a
// thread racing with those simply sees the old value for one more op.
extern FASTT_PROFILER_VIS bool g_dispatch_hooked;
KernelFn hooked_kernel(Op op, DeviceType dev, DType dtype);
// Raises or lowers g_dispatch_hooked after the profiler or a capture
// started or stopped.
void refresh_dispatch_hook();
// Runs the kernel of flat table entry `entry` (op, device, dtype) as the
// trampoline would, without recording it: timed when a session runs.
void run_kernel_entry(int entry, KernelArgs& a);

// The one lookup on every op's path.
inline KernelFn lookup_kernel(Op op, DeviceType dev, DType dtype) {
  KernelFn fn = g_dispatch[int(op)][int(dev)][int(dtype)];
  if (FASTT_UNLIKELY(fn == nullptr)) throw_no_kernel(op, dev, dtype);
  if (FASTT_UNLIKELY(g_dispatch_hooked))
    return hooked_kernel(op, dev, dtype);
  return fn;
}

// Registration, called from the register_*_kernels functions at startup.
void register_kernel(Op op, DeviceType dev, DType dtype, KernelFn fn);
void mark_unsupported(Op op, DeviceType dev, DType dtype, Unsupported why);
KernelFn registered_kernel(Op op, DeviceType dev, DType dtype);
Unsupported unsupported_reason(Op op, DeviceType dev, DType dtype);
// Ensures the table is filled (it is at static-init time; this is for code
// that runs during static init of other libraries).
void init_dispatch_table();
// Refills the CPU entries of the per-ISA kernel families
// (kernels/registry.def) with one instruction-set level's kernels
// (kernels/cpu/cpu_isa.h's Level); false if the build lacks that level.
// For tests that compare levels in one process: not thread-safe against
// running ops, and the caller must not pick a level the CPU cannot run.
bool register_isa_kernel_families(int level);

}  // namespace fastt
