// DeviceCachingAllocator (see device_allocator.h for the model). The hit
// path is: one lock, one set lookup + erase, an optional split (one set
// insert) and one hash insert; the backend is only called on a miss.
#include "device_allocator.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "errors.h"
#include "macros.h"

namespace fastt {

std::string format_bytes(size_t n) {
  if (n < 1024) return fmt::format("{} bytes", n);
  if (n < (size_t(1) << 20)) return fmt::format("{:.2f} KiB", n / 1024.0);
  if (n < (size_t(1) << 30))
    return fmt::format("{:.2f} MiB", n / double(size_t(1) << 20));
  return fmt::format("{:.2f} GiB", n / double(size_t(1) << 30));
}

DeviceCachingAllocator::DeviceCachingAllocator(RawBackend* backend,
                                               std::string kind,
                                               std::string device_label,
                                               bool no_caching)
    : backend_(backend),
      kind_(std::move(kind)),
      device_label_(std::move(device_label)),
      no_caching_(no_caching) {
  active_.reserve(1024);
}

bool DeviceCachingAllocator::no_caching_from_env() {
  static const bool on = [] {
    const char* s = std::getenv("FASTT_NO_CUDA_MEMORY_CACHING");
    return s && *s && std::strcmp(s, "0") != 0;
  }();
  return on;
}

DeviceCachingAllocator::~DeviceCachingAllocator() {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    sync_and_process_events();
    release_cached_segments();
  } catch (...) {
    // The device may already be gone at process exit; nothing to do.
  }
  for (void* e : event_cache_) backend_->event_destroy(e);
  for (Block* b : small_pool_) delete b;
  for (Block* b : large_pool_) delete b;
  for (auto& kv : active_) delete kv.second;
  for (Block* b : block_cache_) delete b;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::new_block() {
  if (block_cache_.empty()) return new Block();
  Block* b = block_cache_.back();
  block_cache_.pop_back();
  return b;
}

void DeviceCachingAllocator::delete_block(Block* b) {
  b->ptr = nullptr;
  b->size = b->requested = 0;
  b->stream = 0;
  b->allocated = false;
  b->event_count = 0;
  b->prev = b->next = nullptr;
  b->stream_uses.clear();
  block_cache_.push_back(b);
}

void* DeviceCachingAllocator::get_event() {
  if (event_cache_.empty()) return backend_->event_create();
  void* e = event_cache_.back();
  event_cache_.pop_back();
  return e;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::find_free(
    bool small, StreamHandle stream, size_t size) {
  Pool& pool = pool_of(small);
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::split(Block* b,
                                                             size_t size) {
  const size_t remaining = b->size - size;
  // Small blocks split down to the minimum block; large ones keep a
  // remainder only if it is itself a large block (small requests would
  // otherwise fragment large segments).
  const bool worth = b->small ? remaining >= kMinBlockSize
                              : remaining > kSmallSize;
  if (!worth) return b;
  Block* r = new_block();
  r->ptr = b->ptr + size;
  r->size = remaining;
  r->stream = b->stream;
  r->small = b->small;
  r->prev = b;
  r->next = b->next;
  if (b->next) b->next->prev = r;
  b->next = r;
  b->size = size;
  pool_of(r->small).insert(r);
  return b;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::alloc_segment(
    bool small, StreamHandle stream, size_t size, size_t requested) {
  const size_t seg = segment_size(size);
  void* p = backend_->raw_alloc(seg);
  if (!p) {
    // Out of memory: frees waiting on other streams may give a fit once the
    // device is idle; failing that, return whole cached segments and retry.
    sync_and_process_events();
    if (Block* b = find_free(small, stream, size)) return b;
    release_cached_segments();
    ++stats_.num_alloc_retries;
    p = backend_->raw_alloc(seg);
    if (!p) throw_oom(requested, seg);
  }
  return new_segment(p, seg, stream, small);
}

// The Block of a segment just obtained from the backend, counted.
DeviceCachingAllocator::Block* DeviceCachingAllocator::new_segment(
    void* p, size_t size, StreamHandle stream, bool small) {
  Block* b = new_block();
  b->ptr = static_cast<char*>(p);
  b->size = size;
  b->stream = stream;
  b->small = small;
  stats_.reserved_bytes += int64_t(size);
  if (stats_.reserved_bytes > stats_.max_reserved_bytes)
    stats_.max_reserved_bytes = stats_.reserved_bytes;
  ++stats_.segments;
  ++stats_.num_device_allocs;
  return b;
}

// No-caching mode: a block of its own (see the header).
DeviceCachingAllocator::Block* DeviceCachingAllocator::alloc_uncached(
    StreamHandle stream, size_t nbytes) {
  if (!pending_.empty()) process_events(false);
  const size_t size = (nbytes + 3) / 4 * 4;
  void* p = backend_->raw_alloc(size);
  if (!p) {
    sync_and_process_events();  // pending frees return their memory
    ++stats_.num_alloc_retries;
    p = backend_->raw_alloc(size);
    if (!p) throw_oom(nbytes, size);
  }
  return new_segment(p, size, stream, false);
}

void DeviceCachingAllocator::release_block(Block* b) {
  backend_->raw_free(b->ptr, b->size);
  stats_.reserved_bytes -= int64_t(b->size);
  --stats_.segments;
  ++stats_.num_device_frees;
  delete_block(b);
}

void* DeviceCachingAllocator::allocate(size_t nbytes, StreamHandle stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  // Sizes this large would overflow the rounding; no device has them.
  if (nbytes > (size_t(1) << 60)) throw_oom(nbytes, nbytes);
  Block* b;
  if (FASTT_UNLIKELY(no_caching_)) {
    b = alloc_uncached(stream, nbytes);
  } else {
    const size_t size = round_size(nbytes);
    const bool small = size <= kSmallSize;
    b = find_free(small, stream, size);
    if (!b) {
      if (!pending_.empty()) {
        process_events(false);
        b = find_free(small, stream, size);
      }
      if (!b) b = alloc_segment(small, stream, size, nbytes);
    }
    b = split(b, size);
  }
  b->allocated = true;
  b->requested = nbytes;
  active_.emplace(b->ptr, b);
  stats_.allocated_bytes += int64_t(b->size);
  if (stats_.allocated_bytes > stats_.max_allocated_bytes)
    stats_.max_allocated_bytes = stats_.allocated_bytes;
  stats_.requested_bytes += int64_t(nbytes);
  ++stats_.active_blocks;
  ++stats_.alloc_count;
  return b->ptr;
}

void DeviceCachingAllocator::free(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = active_.find(p);
  FASTT_CHECK(it != active_.end(), ValueError,
              "{} caching allocator: free of pointer {} that it did not "
              "allocate (or already freed)",
              kind_, p);
  Block* b = it->second;
  active_.erase(it);
  b->allocated = false;
  stats_.allocated_bytes -= int64_t(b->size);
  stats_.requested_bytes -= int64_t(b->requested);
  --stats_.active_blocks;
  ++stats_.free_count;
  if (b->stream_uses.empty()) {
    free_block(b);
    return;
  }
  // Used on other streams: reusable only after the work queued there so far
  // has finished, which an event on each of them tells.
  for (StreamHandle s : b->stream_uses) {
    void* e = get_event();
    backend_->event_record(e, s);
    pending_.emplace_back(e, b);
    ++b->event_count;
  }
  b->stream_uses.clear();
  ++stats_.pending_free_blocks;
}

void DeviceCachingAllocator::merge(Block* dst, Block* src) {
  pool_of(src->small).erase(src);
  if (src == dst->prev) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  dst->size += src->size;
  delete_block(src);
}

void DeviceCachingAllocator::free_block(Block* b) {
  // A neighbour is in the pool iff it is neither handed out nor waiting on
  // events; only those merge.
  if (no_caching_) {
    release_block(b);
    return;
  }
  auto cached = [](const Block* n) {
    return n && !n->allocated && n->event_count == 0;
  };
  b->requested = 0;
  if (cached(b->prev)) merge(b, b->prev);
  if (cached(b->next)) merge(b, b->next);
  pool_of(b->small).insert(b);
}

void DeviceCachingAllocator::sync_and_process_events() {
  backend_->synchronize();
  process_events(true);
}

// Returns the blocks whose events all completed to their pools (`all`:
// the device is known idle, so every event has).
void DeviceCachingAllocator::process_events(bool all) {
  if (pending_.empty()) return;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!all && !backend_->event_query(it->first)) {
      ++it;
      continue;
    }
    Block* b = it->second;
    event_cache_.push_back(it->first);
    it = pending_.erase(it);
    if (--b->event_count == 0) {
      --stats_.pending_free_blocks;
      free_block(b);
    }
  }
}

void DeviceCachingAllocator::release_cached_segments() {
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev || b->next) {  // part of a segment still in use
        ++it;
        continue;
      }
      it = pool->erase(it);
      release_block(b);
    }
  }
}

void DeviceCachingAllocator::throw_oom(size_t requested, size_t segment) {
  ++stats_.num_ooms;
  size_t free_bytes = 0, total_bytes = 0;
  try {
    backend_->mem_info(&free_bytes, &total_bytes);
  } catch (...) {
  }
  const size_t allocated = size_t(stats_.allocated_bytes);
  const size_t reserved = size_t(stats_.reserved_bytes);
  throw OutOfMemoryError(fmt::format(
      "{} out of memory. Tried to allocate {} ({} bytes; segment of {}). {} "
      "has a total capacity of {} of which {} is free. Of the allocated "
      "memory {} is allocated by fastt, and {} is reserved by fastt but "
      "unallocated.",
      kind_, format_bytes(requested), requested, format_bytes(segment),
      device_label_, format_bytes(total_bytes), format_bytes(free_bytes),
      format_bytes(allocated), format_bytes(reserved - allocated)));
}

void DeviceCachingAllocator::record_stream(void* p, StreamHandle stream) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = active_.find(p);
  FASTT_CHECK(it != active_.end(), ValueError,
              "record_stream: pointer {} was not allocated by the {} caching "
              "allocator (or is already freed)",
              p, kind_);
  Block* b = it->second;
  if (stream == b->stream) return;
  for (StreamHandle s : b->stream_uses)
    if (s == stream) return;
  b->stream_uses.push_back(stream);
}

void DeviceCachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  sync_and_process_events();
  release_cached_segments();
}

DeviceAllocatorStats DeviceCachingAllocator::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DeviceCachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.max_allocated_bytes = stats_.allocated_bytes;
  stats_.max_reserved_bytes = stats_.reserved_bytes;
}

void DeviceCachingAllocator::reset_accumulated() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.alloc_count = stats_.free_count = 0;
  stats_.num_device_allocs = stats_.num_device_frees = 0;
  stats_.num_alloc_retries = stats_.num_ooms = 0;
}

bool DeviceCachingAllocator::owns(void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  return active_.count(p) != 0;
}

size_t DeviceCachingAllocator::block_size(void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = active_.find(p);
  return it == active_.end() ? 0 : it->second->size;
}

}  // namespace fastt
