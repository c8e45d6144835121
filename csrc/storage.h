// Storage: a refcounted buffer shared by a tensor and all its views. It also
// carries the version counter that autograd uses to reject a saved tensor
// modified in place (views share it because they share the storage).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "device.h"

namespace fastt {

class Storage {
 public:
  using Deleter = void (*)(void* ctx, void* data, size_t nbytes);

  // Fresh memory from the device's caching allocator.
  static Storage* create(size_t nbytes, Device device);
  // Memory owned elsewhere (a NumPy array, a DLPack capsule): `deleter`
  // runs with `ctx` when the last reference goes.
  static Storage* wrap(void* data, size_t nbytes, Device device,
                       Deleter deleter, void* ctx);

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

  void incref() { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void decref() {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }
  int32_t use_count() const { return refcount_.load(); }

 private:
  Storage() = default;
  void destroy();

  std::atomic<int32_t> refcount_{1};
  std::atomic<uint32_t> version_{0};
  Device device_;
  bool inline_data_ = false;  // data_ lives in the same block as *this
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Deleter deleter_ = nullptr;
  void* ctx_ = nullptr;
};

// Per-device allocation hooks; the CUDA backend installs its own.
struct DeviceAllocatorHooks {
  void* (*allocate)(size_t nbytes, int device_index) = nullptr;
  void (*deallocate)(void* p, size_t nbytes, int device_index) = nullptr;
  // Byte copy between this device and another (or the host). The copy has
  // completed when it returns unless `non_blocking` and the host side is
  // pinned memory (torch's non_blocking=True).
  void (*copy)(void* dst, Device dst_device, const void* src,
               Device src_device, size_t nbytes, bool non_blocking) = nullptr;
};
// The hooks of a device type (null members where none is installed).
const DeviceAllocatorHooks& device_hooks(DeviceType type);
void set_device_allocator(DeviceType type, DeviceAllocatorHooks hooks);

}  // namespace fastt
