// Capture and replay of a step (fastt.compile). While a thread records,
// every top-level kernel call passes the dispatch hook (the profiler's
// trampolines, dispatch.h) into capture::record_and_run, which runs the
// kernel and appends (kernel, a deep copy of its KernelArgs) to a Graph.
// Storages created meanwhile come from the graph's private pool, so the
// step's intermediates reuse memory exactly as eager did and stay the
// graph's after the step: a replay runs the list against the same
// addresses with nothing else in between (no Python, no argument parsing,
// no dispatch, no allocation, no autograd bookkeeping).
//
// Work that is not a kernel call is one of:
//  - a host step that must run again on replay (a validation of class
//    targets, the assignment of a leaf's .grad): host_step;
//  - a random op's counter range: the reservation is taken again on
//    replay, so replayed dropout draws what eager would draw;
//  - a graph break: reading a tensor's value on the host (item, tolist,
//    printing), data-dependent output shapes, host computations (FFT),
//    work on two CUDA devices. A break stops the recording (the step stays
//    eager) or, under fullgraph, raises naming the op.
//
// CUDA kernels are recorded like the CPU's (their storages come from a
// device pool of the recording). At the end, each run of consecutive CUDA
// kernels (random ones excepted: their counters are patched per replay)
// is captured once into a device graph (DeviceGraphHooks, installed by
// the CUDA backend: stream capture, kernels/cuda/graph.h) that a replay
// launches with one call; a run whose capture fails replays kernel by
// kernel.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dispatch.h"
#include "generator.h"
#include "tensor.h"

namespace fastt {

// True while some thread records (only that thread's work is recorded).
// Read by Storage::create, Generator::reserve, Tensor::item and the other
// break points, behind FASTT_UNLIKELY; the hook in lookup_kernel is the
// profiler's flag, which begin() raises too.
extern FASTT_PROFILER_VIS bool g_capturing;

namespace capture {

class Graph;

// Starts recording this thread's work. Throws if it already records.
void begin(bool fullgraph);
// Stops recording and returns the graph (replayable() says whether a
// break stopped it).
std::shared_ptr<Graph> end();
// Stops recording and drops what was recorded (an exception escaped).
void abort() noexcept;
// This thread records (and is not inside a suspended call).
bool recording();
// This thread runs a capture (recording, suspended or broken).
bool in_capture();
struct Recorder;
// A thread that records exits (its ThreadState dies): lowers the dispatch
// hook it raised and abandons (leaks) the recording.
void thread_exit(Recorder* r) noexcept;

// Inside, nothing is recorded and storages come from the normal
// allocator: for a call that a host step replays as a whole (an
// optimizer's step), whose kernels must not be recorded twice.
class Suspend {
 public:
  Suspend();
  ~Suspend() { release(); }
  void release();  // ends it early
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool active_;
};

// ---- hooks, called behind `if (FASTT_UNLIKELY(g_capturing))` ----
// A break at `what` ("item()", "fft"): under fullgraph throws
// RuntimeError naming it; otherwise the recording stops here and the
// step runs eagerly from now on.
void graph_break(const char* what);
// Called on a recording's first break, after it is noted (the Python
// binding notes where the user's code stood, to split the function there).
void set_break_observer(void (*observer)());
inline void host_read(const char* what) {
  if (FASTT_UNLIKELY(g_capturing)) graph_break(what);
}
// Records fn (which the caller has just run) to run again on replay;
// false when this thread does not record here (fn is dropped).
bool host_step(std::function<void()> fn);
// The same over tensors: the recording keeps non-owning shadows of them,
// as it does of a kernel's arguments (holding them would keep the step's
// intermediates alive, and the memory plan may move them), and fn gets
// those on each replay, in order.
void host_step(std::vector<Tensor> tensors,
               std::function<void(Tensor* tensors)> fn);
// A Generator::reserve: the next recorded kernel takes its (seed, offset)
// from a fresh reservation of `blocks` on each replay.
void note_reserve(Generator* g, uint64_t blocks);
// A storage from the recording's pool; null when this thread does not
// record (the caller then allocates as usual).
Storage* pool_storage(size_t nbytes, Device device);
// The engine changed leaf's .grad from `before` to `after` (the same
// tensor when it accumulated in place).
void note_grad(const Tensor& leaf, const Tensor& before, const Tensor& after);
// A backward walk started (the step trains: its outputs may require grad).
void note_backward();

// Tests: memory the plan frees is filled with 0xff bytes and kept, so a
// kernel argument it failed to move reads garbage (Graph::Impl's plan).
void set_poison(bool on);

// Device graphs for the recorded CUDA kernels (installed by the CUDA
// backend; absent, the kernels replay one by one).
struct DeviceGraphHooks {
  // Starts capturing this thread's launches on `device`; null when that is
  // not possible here.
  void* (*begin)(int device) = nullptr;
  // Ends the capture: a launchable graph, or null when it failed (the
  // error is cleared).
  void* (*end)(void* capture) = nullptr;
  // Launches a graph on the current stream of its device.
  void (*launch)(void* graph) = nullptr;
  void (*destroy)(void* graph) = nullptr;
};
void set_device_graph_hooks(DeviceGraphHooks hooks);

// Called by the dispatch hook (profiler.cpp) with the flat table entry.
// Returns false when this thread does not record here (the hook then runs
// the kernel as usual).
bool record_and_run(int entry, KernelArgs& a);

// What a recording produced.
class Graph {
 public:
  struct Impl;
  explicit Graph(std::unique_ptr<Impl> impl);
  ~Graph();

  bool replayable() const;
  // Why not (the first break), empty when replayable.
  const std::string& break_reason() const;
  bool ran_backward() const;
  size_t num_kernels() const;
  size_t num_host_steps() const;
  // The pool: lifetimes still alive at the end, and the arena the others
  // were laid out in (arena_bytes; 0 when the plan did not pay or could
  // not move an address); unplanned_bytes: the pool before the plan.
  size_t pool_bytes() const;
  // Device graphs the recorded CUDA kernels were captured into.
  size_t num_device_graphs() const;
  size_t arena_bytes() const;
  size_t unplanned_bytes() const;

  // "" when every address the kernels use belongs to the pool or to one of
  // `known` (tensors the caller keeps: inputs, parameters, buffers,
  // optimizer state); otherwise what was found (the graph must not be
  // replayed: it could outlive that memory). Adds the leaves and gradients
  // the engine touched to `known`.
  std::string check_addresses(std::vector<Tensor>& known) const;
  // The gradients the replay accumulates into in place are still the
  // leaves' .grad, and the leaves guard_assigned_grads picked have none
  // (checked before each replay).
  bool grads_unchanged() const;
  // A step assigns .grad to the leaves that had none when it accumulated.
  // A replay is right for such a leaf if it has none before the step
  // either, or if the step clears it itself (zero_grad inside), which is
  // what a leaf that had a .grad before the capture shows: `had_grad`
  // lists those leaves; the others must have none before each replay.
  // A leaf of `had_grad` whose .grad the step reads without assigning or
  // accumulating into it must keep that .grad (code outside the step may
  // assign a new one, which the recorded kernels would not read).
  void guard_assigned_grads(const std::vector<Tensor>& had_grad);
  // Runs the recorded list. Not thread-safe against other replays of the
  // same graph.
  void replay();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace capture
}  // namespace fastt
