// Device side of the deferred error slot (semantics in device_error.h):
// report_device_error() records a bad index or target, first report wins.
#pragma once
#include "kernels/cuda/device_error.h"

namespace fastt {
namespace cuda {

// Only threads that met a bad value get here (off the hot path).
__device__ inline void report_device_error(DeviceError* slot, int32_t kind,
                                           uint64_t op, int64_t value,
                                           int64_t bound, int64_t dim) {
  if (atomicCAS(&slot->claimed, 0, 1) != 0) return;  // not the first
  slot->kind = kind;
  slot->op = op;
  slot->value = value;
  slot->bound = bound;
  slot->dim = dim;
  __threadfence_system();  // the fields before `ready`, across PCIe
  *reinterpret_cast<volatile int32_t*>(&slot->ready) = 1;
}

}  // namespace cuda
}  // namespace fastt
