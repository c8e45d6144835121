// Deferred device-side errors (recoverable device asserts): the per-device
// error slot kernels report a bad index or class target into, and the
// host-side check every synchronizing call runs. Plain C++ (no device
// code): kernels include device_error.cuh for report_device_error().
//
// Semantics. A kernel that meets a value it must not use (an index
// outside [-size, size), a class target outside [0, C) that is not
// ignore_index, a bernoulli_ probability outside [0, 1]) records it in
// the slot of its device and carries on
// without reading or writing out of bounds: it skips that element, and
// writes 0 where the output element would otherwise stay uninitialised.
// Only the FIRST report after the last check is kept (later ones are
// dropped until the host has read it; which of several bad values of one
// launch comes first is unspecified). No host sync happens at the op: the
// error surfaces as a typed exception (IndexError) from the next call
// that waits for that device — cuda::synchronize, Stream/Event
// synchronize, a query reporting completion, a blocking copy to or from
// the host (.item(), .cpu(), .tolist(), printing) or a data-dependent size
// (nonzero, masked_select) — naming the op, the value and the bound.
// Raising clears the slot, so the device stays usable (unlike a CUDA
// device assert, which poisons the context). An error never followed by a
// synchronizing call is never raised.
//
// The slot is mapped pinned host memory (cudaHostAllocMapped), allocated
// once per device on first use: kernels write it through its device
// address, the host reads it with a plain load (no CUDA call), so a check
// when nothing went wrong costs a few nanoseconds.
#pragma once
#include <cstdint>

#include "kernels/cuda/runtime.h"

namespace fastt {
namespace cuda {

enum DeviceErrorKind : int32_t {
  kDeviceErrorNone = 0,
  kDeviceErrorIndex = 1,   // index out of range (IndexError)
  kDeviceErrorTarget = 2,  // class target out of range (IndexError)
  kDeviceErrorProbability = 3,  // a probability outside [0, 1]
                                // (RuntimeError; bernoulli_)
};

// The slot. `claimed` is taken by the first reporter (atomicCAS 0 -> 1);
// it then fills the fields and sets `ready` last, so the host never reads
// half a record (a record not yet ready is raised at a later check).
struct DeviceError {
  int32_t claimed;
  int32_t ready;
  int32_t kind;  // DeviceErrorKind
  int32_t pad;
  // The op's name: a host string literal passed to the kernel as an
  // integer, which device code only copies (0: Python-style indexing,
  // whose message names no op, as on the CPU).
  uint64_t op;
  int64_t value;  // the offending index or target
  int64_t bound;  // the size it had to be below (classes for targets)
  int64_t dim;    // the indexed dim (-1 for targets)
};

// A string literal as the integer kernels carry for DeviceError::op.
inline uint64_t op_cookie(const char* name) {
  return uint64_t(reinterpret_cast<uintptr_t>(name));
}

// Slots by device: host addresses (read by the checks) and device
// addresses (kernel parameters); null until the device's first use.
extern DeviceError* g_device_error_host[kMaxDevices];
extern DeviceError* g_device_error_dev[kMaxDevices];

DeviceError* init_device_error_slot(int device);
[[noreturn]] void raise_device_error(int device);

// The device address of `device`'s slot, for a kernel launch.
inline DeviceError* device_error_slot(int device) {
  DeviceError* p = g_device_error_dev[device];
  return FASTT_LIKELY(p != nullptr) ? p : init_device_error_slot(device);
}
inline DeviceError* device_error_slot() {
  return device_error_slot(current_device());
}

// Throws the error a kernel on `device` reported, if any, and clears it.
// Call only after waiting for the device (or a stream/event of it).
inline void check_device_errors(int device) {
  const DeviceError* e = g_device_error_host[device];
  if (FASTT_UNLIKELY(e != nullptr &&
                     __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) != 0))
    raise_device_error(device);
}

}  // namespace cuda
}  // namespace fastt
