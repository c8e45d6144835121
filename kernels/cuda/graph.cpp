// CUDA graphs and their private memory pools: see graph.h.
#include "kernels/cuda/graph.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "csrc/capture.h"
#include "csrc/errors.h"
#include "csrc/macros.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/runtime.h"
#include "kernels/cuda/stream.h"

namespace fastt {
namespace cuda {

namespace {
// Blocks of pools that died while a capture ran (synchronizing then would
// fail the capture): freed when no capture runs any more.
std::mutex g_dead_mu;
std::vector<std::pair<int, void*>> g_dead_blocks;

// Waits for the device (a replay may still run on some stream), then
// gives the blocks to the allocator.
void free_blocks(std::vector<std::pair<int, void*>>& blocks) {
  if (blocks.empty()) return;
  if (cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
  for (auto& b : blocks) {
    try {
      device_allocator(b.first).free(b.second);
    } catch (...) {
    }
  }
  blocks.clear();
}

void free_dead_blocks() {
  std::vector<std::pair<int, void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(g_dead_mu);
    if (g_dead_blocks.empty() || graph_capture_active()) return;
    blocks.swap(g_dead_blocks);
  }
  free_blocks(blocks);
}
}  // namespace

class GraphPool {
 public:
  explicit GraphPool(int device) : device_(device) {}
  ~GraphPool() {
    std::vector<std::pair<int, void*>> blocks;
    for (auto& b : size_) blocks.emplace_back(device_, b.first);
    if (graph_capture_active()) {
      std::lock_guard<std::mutex> lock(g_dead_mu);
      g_dead_blocks.insert(g_dead_blocks.end(), blocks.begin(),
                           blocks.end());
      return;
    }
    free_blocks(blocks);
  }
  int device() const { return device_; }
  void* take(size_t nbytes, cudaStream_t stream) {
    const size_t n = DeviceCachingAllocator::round_size(nbytes);
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<void*>& fl = free_[n];
    if (!fl.empty()) {
      void* p = fl.back();
      fl.pop_back();
      return p;
    }
    void* p = device_allocator(device_).allocate(
        n, reinterpret_cast<StreamHandle>(stream));
    size_[p] = n;
    return p;
  }
  void give_back(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    free_[size_.at(p)].push_back(p);
  }

 private:
  int device_;
  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // by rounded size
  std::unordered_map<void*, size_t> size_;  // every block of the pool
};

namespace {
std::mutex g_mu;                  // the two maps
std::unordered_map<std::thread::id, std::shared_ptr<GraphPool>> g_pool_of;
std::unordered_map<void*, std::shared_ptr<GraphPool>> g_owner;

void unregister_thread(std::thread::id tid) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_pool_of.erase(tid) > 0) --g_graph_capturing;
  }
  free_dead_blocks();
}
}  // namespace

std::atomic<int> g_graph_capturing{0};
std::atomic<int64_t> g_graph_lent{0};

std::shared_ptr<GraphPool> new_graph_pool(int device) {
  check_device(device, "graph_pool_handle");
  return std::make_shared<GraphPool>(device);
}

void* graph_pool_alloc(size_t nbytes, int device) {
  if (g_graph_capturing.load(std::memory_order_relaxed) == 0) return nullptr;
  std::shared_ptr<GraphPool> pool;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_pool_of.find(std::this_thread::get_id());
    if (it == g_pool_of.end() || it->second->device() != device)
      return nullptr;
    pool = it->second;
  }
  void* p = pool->take(nbytes, current_stream(device));
  std::lock_guard<std::mutex> lock(g_mu);
  g_owner[p] = std::move(pool);
  ++g_graph_lent;
  return p;
}

bool graph_pool_free(void* p) {
  if (g_graph_lent.load(std::memory_order_relaxed) == 0) return false;
  std::shared_ptr<GraphPool> pool;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_owner.find(p);
    if (it == g_owner.end()) return false;
    pool = std::move(it->second);
    g_owner.erase(it);
    --g_graph_lent;
  }
  pool->give_back(p);
  return true;  // the last holder of the pool frees it here
}

bool stream_is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();  // the legacy stream while another captures
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

void check_no_random_capture(const char* op) {
  if (FASTT_LIKELY(!graph_capture_active()) ||
      !stream_is_capturing(current_stream()))
    return;
  throw NotImplementedError(fmt::format(
      "{}: random numbers inside a CUDA graph capture are not supported "
      "yet (each replay would draw the numbers the capture drew); draw them "
      "outside the graph into a tensor the graph reads",
      op));
}

Graph::~Graph() {
  try {
    reset();
  } catch (...) {
  }
}

void Graph::capture_begin(std::shared_ptr<GraphPool> pool, int mode) {
  FASTT_CHECK(!capturing_, RuntimeError,
              "CUDAGraph.capture_begin: this graph is already capturing");
  FASTT_CHECK(exec_ == nullptr, RuntimeError,
              "This CUDAGraph instance already owns a captured graph. To "
              "capture a new graph, create a new instance.");
  FASTT_CHECK(mode >= 0 && mode <= 2, ValueError,
              "CUDAGraph.capture_begin: capture_error_mode must be "
              "'global', 'thread_local' or 'relaxed'");
  const int device = current_device();
  const cudaStream_t stream = current_stream(device);
  FASTT_CHECK(stream != nullptr, RuntimeError,
              "CUDA graphs must be captured on a non-default stream. "
              "(However, after capture, it's ok to replay them on the "
              "default stream.)");
  if (!pool) pool = new_graph_pool(device);
  FASTT_CHECK(pool->device() == device, ValueError,
              "CUDAGraph.capture_begin: the memory pool belongs to cuda:{}, "
              "the capture runs on cuda:{}",
              pool->device(), device);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    FASTT_CHECK(g_pool_of.count(std::this_thread::get_id()) == 0,
                RuntimeError,
                "CUDAGraph.capture_begin: this thread is already capturing "
                "a graph");
    g_pool_of[std::this_thread::get_id()] = pool;
    ++g_graph_capturing;
  }
  const cudaError_t err =
      cudaStreamBeginCapture(stream, cudaStreamCaptureMode(mode));
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    unregister_thread(std::this_thread::get_id());
    throw_cuda_error(err, "CUDAGraph.capture_begin");
  }
  thread_ = std::this_thread::get_id();
  device_ = device;
  stream_ = stream;
  pool_ = std::move(pool);
  capturing_ = true;
}

void Graph::capture_end() {
  FASTT_CHECK(capturing_, RuntimeError,
              "CUDAGraph.capture_end: the graph is not capturing (call "
              "capture_begin first)");
  cudaGraph_t graph = nullptr;
  const cudaError_t err = cudaStreamEndCapture(stream_, &graph);
  capturing_ = false;
  unregister_thread(thread_);
  if (err != cudaSuccess || graph == nullptr) {
    (void)cudaGetLastError();
    pool_.reset();
    throw RuntimeError(fmt::format(
        "CUDA graph capture failed: {} (inside a capture nothing may wait "
        "for the device: no device-to-host copy such as item(), tolist() "
        "or printing a CUDA tensor, no synchronize(), no work on the "
        "default stream)",
        cudaGetErrorString(err)));
  }
  const cudaError_t ierr = cudaGraphInstantiate(&exec_, graph, 0);
  (void)cudaGraphDestroy(graph);
  if (ierr != cudaSuccess) {
    exec_ = nullptr;
    pool_.reset();
    (void)cudaGetLastError();
    throw_cuda_error(ierr, "CUDAGraph.capture_end (instantiate)");
  }
}

void Graph::replay() {
  FASTT_CHECK(exec_ != nullptr, RuntimeError,
              "CUDAGraph.replay: no graph was captured (capture it first "
              "with fastt.cuda.graph or capture_begin/capture_end)");
  DeviceGuard guard(device_);
  FASTT_CUDA_CHECK(cudaGraphLaunch(exec_, current_stream(device_)),
                   "CUDAGraph.replay");
}

void Graph::reset() {
  if (capturing_) {
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream_, &graph) != cudaSuccess)
      (void)cudaGetLastError();
    if (graph) (void)cudaGraphDestroy(graph);
    capturing_ = false;
    unregister_thread(thread_);
  }
  if (exec_) {
    (void)cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  pool_.reset();
}

// ---- fastt.compile's device graphs (csrc/capture.h DeviceGraphHooks) ----
namespace {
// A run of recorded CUDA kernels captured on a side stream of its device.
struct RunCapture {
  Graph graph;
  int device = 0;
  cudaStream_t prev = nullptr;
};

cudaStream_t side_stream(int device) {
  static std::mutex mu;
  static cudaStream_t streams[kMaxDevices] = {};
  std::lock_guard<std::mutex> lock(mu);
  if (streams[device] == nullptr)
    streams[device] = Stream::create(device).handle();
  return streams[device];
}

void* run_begin(int device) {
  if (device != current_device()) return nullptr;
  auto c = std::make_unique<RunCapture>();
  c->device = device;
  c->prev = current_stream(device);
  try {
    set_current_stream(device, side_stream(device));
    // Thread-local mode: other threads' syncs (a data loader's copies) do
    // not fail a capture the user did not ask for.
    c->graph.capture_begin(nullptr, 1);
  } catch (...) {
    set_current_stream(device, c->prev);
    return nullptr;
  }
  return c.release();
}

void* run_end(void* capture) {
  std::unique_ptr<RunCapture> c(static_cast<RunCapture*>(capture));
  bool ok = true;
  try {
    c->graph.capture_end();
  } catch (...) {
    ok = false;
  }
  set_current_stream(c->device, c->prev);
  return ok ? c.release() : nullptr;
}

void run_launch(void* graph) {
  static_cast<RunCapture*>(graph)->graph.replay();
}

void run_destroy(void* graph) { delete static_cast<RunCapture*>(graph); }

const bool g_hooks_installed = [] {
  capture::DeviceGraphHooks h;
  h.begin = run_begin;
  h.end = run_end;
  h.launch = run_launch;
  h.destroy = run_destroy;
  capture::set_device_graph_hooks(h);
  return true;
}();
}  // namespace

}  // namespace cuda
}  // namespace fastt
