// CPU storages put the Storage header and the data in one block from the
// CachingAllocator, so a fresh tensor costs one pooled allocation for data.
#include "storage.h"

#include <new>

#include "allocator.h"
#include "capture.h"
#include "errors.h"

namespace fastt {
namespace {

constexpr size_t kHeader = (sizeof(Storage) + CachingAllocator::kAlignment -
                            1) / CachingAllocator::kAlignment *
                           CachingAllocator::kAlignment;
DeviceAllocatorHooks g_hooks[kNumDeviceTypes];

}  // namespace

void set_device_allocator(DeviceType type, DeviceAllocatorHooks hooks) {
  g_hooks[int(type)] = hooks;
}

const DeviceAllocatorHooks& device_hooks(DeviceType type) {
  return g_hooks[int(type)];
}

Storage* Storage::create(size_t nbytes, Device device) {
  if (FASTT_UNLIKELY(g_capturing))  // a recording's memory: its pool's
    if (Storage* s = capture::pool_storage(nbytes, device)) return s;
  if (FASTT_LIKELY(device.is_cpu())) {
    FASTT_CHECK(nbytes < (size_t(1) << 56), OutOfMemoryError,
                "CPU out of memory: tried to allocate {} bytes", nbytes);
    void* block = CachingAllocator::allocate(kHeader + nbytes);
    Storage* s = new (block) Storage();
    s->inline_data_ = true;
    s->data_ = static_cast<char*>(block) + kHeader;
    s->nbytes_ = nbytes;
    s->device_ = device;
    return s;
  }
  const DeviceAllocatorHooks& h = g_hooks[int(device.type)];
  FASTT_CHECK(h.allocate != nullptr, RuntimeError,
              "cannot allocate memory on device {}: fastt was built without "
              "{}",
              device.str(), device.is_cuda() ? "CUDA" : "support for it");
  void* data = h.allocate(nbytes, device.index);
  Storage* s = new Storage();
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->device_ = device;
  return s;
}

Storage* Storage::wrap(void* data, size_t nbytes, Device device,
                       Deleter deleter, void* ctx) {
  Storage* s = new Storage();
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->device_ = device;
  s->deleter_ = deleter;
  s->ctx_ = ctx;
  return s;
}

void Storage::destroy() {
  if (inline_data_) {
    size_t total = kHeader + nbytes_;
    this->~Storage();
    CachingAllocator::deallocate(this, total);
    return;
  }
  if (deleter_) {
    deleter_(ctx_, data_, nbytes_);
  } else if (data_) {
    const DeviceAllocatorHooks& h = g_hooks[int(device_.type)];
    if (h.deallocate) h.deallocate(data_, nbytes_, device_.index);
  }
  delete this;
}

}  // namespace fastt
