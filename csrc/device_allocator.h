// DeviceCachingAllocator: the stream-ordered caching allocator behind device
// tensors, written against a small RawBackend so its logic runs (and is
// tested) on the host; kernels/cuda/allocator.cpp plugs in cudaMalloc/Event.
//
// Model (a simplified torch CUDACachingAllocator):
// - Requests round up to 512 B. Requests <= 1 MiB come from the small pool,
//   carved out of 2 MiB segments; larger ones from the large pool, whose
//   segments are 20 MiB for requests under 10 MiB, else the request rounded
//   up to 2 MiB.
// - Free blocks sit in one ordered set per pool keyed (stream, size, ptr):
//   a lookup is a best fit among the blocks of the requesting stream. A
//   bigger block is split and the remainder stays cached; on free, a block
//   merges with free neighbours of its segment.
// - A block freed on its allocation stream is reusable by that stream at
//   once (stream order makes it safe). record_stream(p, s) notes use on
//   another stream; freeing such a block records an event on each of those
//   streams and the block returns to the pool only once they all completed
//   (polled when a lookup misses).
// - When the backend is out of memory: wait for the device, return every
//   cached whole segment, retry once, then throw OutOfMemoryError.
// - No-caching mode (FASTT_NO_CUDA_MEMORY_CACHING=1, like torch's
//   PYTORCH_NO_CUDA_MEMORY_CACHING; for memory checkers): every allocation
//   is its own raw_alloc of the request rounded up to 4 bytes only (the
//   base alignment is the backend's: cudaMalloc's 256 B covers 16-byte
//   vector loads; 4 because sub-word atomics CAS the aligned 32-bit word
//   holding the element), and every free is a raw_free: at once when the
//   block was used on its allocation stream only (cudaFree waits for the
//   device), else once the record_stream events completed, as cached
//   blocks do. Stats count each block as a segment.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fastt {

// An opaque stream handle (a cudaStream_t on CUDA; 0 is the default one).
using StreamHandle = uintptr_t;

// What the allocator needs from a device. Only the slow paths call it.
class RawBackend {
 public:
  virtual ~RawBackend() = default;
  // nullptr when the device is out of memory; throws on other errors.
  virtual void* raw_alloc(size_t nbytes) = 0;
  virtual void raw_free(void* p, size_t nbytes) = 0;
  virtual void* event_create() = 0;
  virtual void event_record(void* event, StreamHandle stream) = 0;
  virtual bool event_query(void* event) = 0;  // true once completed
  virtual void event_destroy(void* event) = 0;
  virtual void synchronize() = 0;  // waits for all work on the device
  virtual void mem_info(size_t* free_bytes, size_t* total_bytes) = 0;
};

struct DeviceAllocatorStats {
  int64_t allocated_bytes = 0;  // in blocks handed out (rounded sizes)
  int64_t max_allocated_bytes = 0;
  int64_t requested_bytes = 0;  // as asked for (unrounded)
  int64_t reserved_bytes = 0;   // in segments obtained from the backend
  int64_t max_reserved_bytes = 0;
  int64_t active_blocks = 0;    // blocks handed out and not yet freed
  int64_t segments = 0;         // segments held
  int64_t pending_free_blocks = 0;  // freed, waiting for other streams
  int64_t alloc_count = 0;          // allocate() calls (nbytes > 0)
  int64_t free_count = 0;           // free() calls (non-null)
  int64_t num_device_allocs = 0;    // raw_alloc calls that succeeded
  int64_t num_device_frees = 0;     // raw_free calls
  int64_t num_alloc_retries = 0;    // times the cache was flushed to retry
  int64_t num_ooms = 0;             // OutOfMemoryError thrown
};

class DeviceCachingAllocator {
 public:
  static constexpr size_t kMinBlockSize = 512;
  static constexpr size_t kSmallSize = size_t(1) << 20;    // 1 MiB
  static constexpr size_t kSmallBuffer = size_t(2) << 20;  // 2 MiB
  static constexpr size_t kMinLargeAlloc = size_t(10) << 20;
  static constexpr size_t kLargeBuffer = size_t(20) << 20;
  static constexpr size_t kRoundLarge = size_t(2) << 20;

  // `label` names the device in errors ("CUDA" / "GPU 0" style pieces:
  // kind = "CUDA", device_label = "GPU 0"). The backend must outlive this.
  // `no_caching`: the mode above (see no_caching_from_env()).
  DeviceCachingAllocator(RawBackend* backend, std::string kind,
                         std::string device_label, bool no_caching = false);
  // Returns cached segments to the backend; blocks still in use leak.
  ~DeviceCachingAllocator();
  DeviceCachingAllocator(const DeviceCachingAllocator&) = delete;
  DeviceCachingAllocator& operator=(const DeviceCachingAllocator&) = delete;

  // Memory for `nbytes` (512-aligned within a segment) used in order on
  // `stream`. nullptr for 0 bytes. Throws OutOfMemoryError.
  void* allocate(size_t nbytes, StreamHandle stream);
  // Returns a pointer from allocate() (nullptr is ignored). Throws
  // ValueError for a pointer this allocator does not own.
  void free(void* p);
  // Marks `p` (a pointer from allocate()) as used by `stream`, so freeing
  // it waits for the work queued there so far.
  void record_stream(void* p, StreamHandle stream);
  // Waits for pending frees, then returns every cached whole segment.
  void empty_cache();

  DeviceAllocatorStats stats();
  // Max allocated/reserved restart from the current values.
  void reset_peak();
  // Counters (alloc/free counts, device allocs, retries, ooms) restart.
  void reset_accumulated();
  // Whether `p` is the start of a block handed out (tests, checks).
  bool owns(void* p);
  // Rounded size of the block at `p` (0 when none).
  size_t block_size(void* p);

  // Whether FASTT_NO_CUDA_MEMORY_CACHING is set to something other than
  // "" or "0" (read once per process).
  static bool no_caching_from_env();
  bool no_caching() const { return no_caching_; }

  static size_t round_size(size_t nbytes) {
    return nbytes < kMinBlockSize
               ? kMinBlockSize
               : (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
  }
  // Size of the segment obtained from the backend for a rounded request.
  static size_t segment_size(size_t size) {
    if (size <= kSmallSize) return kSmallBuffer;
    if (size < kMinLargeAlloc) return kLargeBuffer;
    return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
  }

 private:
  struct Block {
    char* ptr = nullptr;
    size_t size = 0;
    size_t requested = 0;
    StreamHandle stream = 0;
    bool small = false;
    bool allocated = false;
    int event_count = 0;  // events still to complete before reuse
    Block* prev = nullptr;  // neighbours within the segment
    Block* next = nullptr;
    std::vector<StreamHandle> stream_uses;  // other streams (record_stream)
  };
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  using Pool = std::set<Block*, BlockLess>;

  Pool& pool_of(bool small) { return small ? small_pool_ : large_pool_; }
  Block* find_free(bool small, StreamHandle stream, size_t size);
  Block* alloc_segment(bool small, StreamHandle stream, size_t size,
                       size_t requested);
  Block* alloc_uncached(StreamHandle stream, size_t nbytes);
  Block* new_segment(void* p, size_t size, StreamHandle stream, bool small);
  void release_block(Block* b);  // raw_free of a whole segment
  Block* split(Block* b, size_t size);
  void free_block(Block* b);  // back into its pool, merging neighbours
  void merge(Block* dst, Block* src);
  void process_events(bool all);
  void sync_and_process_events();
  void release_cached_segments();
  [[noreturn]] void throw_oom(size_t requested, size_t segment);
  Block* new_block();
  void delete_block(Block* b);
  void* get_event();

  RawBackend* backend_;
  std::string kind_;
  std::string device_label_;
  bool no_caching_;
  std::mutex mutex_;
  Pool small_pool_;
  Pool large_pool_;
  std::unordered_map<void*, Block*> active_;
  std::deque<std::pair<void*, Block*>> pending_;  // (event, block)
  std::vector<void*> event_cache_;
  std::vector<Block*> block_cache_;  // spare Block structs
  DeviceAllocatorStats stats_;
};

// "1.50 GiB" style sizes for messages.
std::string format_bytes(size_t nbytes);

}  // namespace fastt
