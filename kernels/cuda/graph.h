// CUDA graphs (torch.cuda.CUDAGraph): the work queued on a stream between
// capture_begin and capture_end is captured (not run) into a graph whose
// memory comes from a private pool, then replayed with one cudaGraphLaunch.
//
// Memory: while a thread captures, its device allocations come from the
// graph's GraphPool. A block whose storage dies goes back to that pool,
// never to the caching allocator, so no later work can take memory a
// replay writes; blocks freed during the capture are reused by the same
// capture (stream order makes that safe). Graphs captured into one pool
// (graph_pool_handle(), CUDAGraph.pool()) share its free blocks, as
// torch's do: replay them in the order they were captured. The pool
// returns its blocks to the allocator when the last graph, handle and
// storage of it are gone (after synchronizing the device).
//
// Not captured: work on other streams and on the host. Calls that
// synchronize with the host (a device-to-host copy: item(), printing;
// synchronize()) fail the capture, as on a GPU; random ops raise (a replay
// would draw the numbers the capture drew).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

namespace fastt {
namespace cuda {

class GraphPool;
// A new, empty pool on `device` (torch.cuda.graph_pool_handle()).
std::shared_ptr<GraphPool> new_graph_pool(int device);

class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Captures the current stream of the current device, which must not be
  // the legacy default stream, in `mode` (cudaStreamCaptureMode: 0
  // global, 1 thread-local, 2 relaxed); this thread's allocations come
  // from `pool` (a new pool when null) until capture_end().
  void capture_begin(std::shared_ptr<GraphPool> pool, int mode);
  // Ends the capture and instantiates the graph; throws (and leaves
  // nothing captured) when the capture failed.
  void capture_end();
  // Launches the graph on the current stream of its device.
  void replay();
  // Drops the graph and this graph's hold on its pool.
  void reset();

  const std::shared_ptr<GraphPool>& pool() const { return pool_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int device_ = -1;
  bool capturing_ = false;
  std::thread::id thread_;  // the capturing thread (its pool routing)
  std::shared_ptr<GraphPool> pool_;
};

// Whether `stream` is being captured (torch.cuda.is_current_stream_capturing
// on the current stream).
bool stream_is_capturing(cudaStream_t stream);
// Threads capturing now, and pool blocks storages hold (graph.cpp): the
// allocator's and the random kernels' checks are one load while zero.
extern std::atomic<int> g_graph_capturing;
extern std::atomic<int64_t> g_graph_lent;
// True while some thread captures (a flag test, for hot paths).
inline bool graph_capture_active() {
  return g_graph_capturing.load(std::memory_order_relaxed) > 0;
}

// Raises NotImplementedError naming `op` when the current stream captures:
// a random kernel takes its (seed, offset) as arguments, so a replay
// would draw the capture's numbers again.
void check_no_random_capture(const char* op);

// The allocator's hooks (allocator.cpp), called behind the flags above:
// memory for a thread that captures, from its graph's pool (null: it does
// not capture); whether `p` was a pool's block, now given back to it.
void* graph_pool_alloc(size_t nbytes, int device);
bool graph_pool_free(void* p);

}  // namespace cuda
}  // namespace fastt
