// A process group on Gloo (libgloo-dev, TCP transport): the collectives of
// fastt.distributed over contiguous CPU tensors. Collectives run in FIFO
// order on one worker thread per group (every rank issues them in the same
// order, which is what Gloo's tags rely on), so the caller can wait without
// the GIL or go on (async_op). Point-to-point send/recv are posted from the
// caller and waited on in Work::wait. python/fastt/distributed makes
// tensors contiguous and splits lists; this file sees flat buffers only.
// Built without Gloo, make_gloo_group raises DistBackendError naming the
// package to install.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "csrc/distributed/store.h"
#include "csrc/tensor.h"

namespace fastt {
namespace distributed {

// torch.distributed.ReduceOp's members, in its order.
enum class ReduceOp : int {
  Sum = 0, Avg, Product, Min, Max, Band, Bor, Bxor, Premul_sum, Unused
};

// One operation's completion: set once by the thread that ran it.
class Work {
 public:
  bool is_completed();
  bool is_success();
  // Waits (timeout 0: the group's timeout); rethrows the op's error.
  void wait(Millis timeout = Millis(0));
  void finish(std::exception_ptr error = nullptr);
  // For recv: the rank the message came from.
  int source_rank() const { return source_rank_; }

  std::function<void(Millis)> waiter;  // p2p: blocks until done, or throws
  int source_rank_ = -1;
  Millis default_timeout{0};

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend() const = 0;

  // Every buffer is a contiguous CPU tensor; an undefined one where the
  // op does not use it on this rank (gather's output off the root, ...).
  virtual std::shared_ptr<Work> allreduce(Tensor t, ReduceOp op) = 0;
  virtual std::shared_ptr<Work> broadcast(Tensor t, int root) = 0;
  virtual std::shared_ptr<Work> reduce(Tensor t, int root, ReduceOp op) = 0;
  // out holds size() blocks of in's numel, rank r's in block r.
  virtual std::shared_ptr<Work> allgather(Tensor out, Tensor in) = 0;
  virtual std::shared_ptr<Work> gather(Tensor out, Tensor in, int root) = 0;
  virtual std::shared_ptr<Work> scatter(Tensor out, Tensor in, int root) = 0;
  // Block sizes in elements (empty: equal blocks).
  virtual std::shared_ptr<Work> alltoall(Tensor out, Tensor in,
                                         std::vector<int64_t> out_counts,
                                         std::vector<int64_t> in_counts) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;
  virtual std::shared_ptr<Work> send(Tensor t, int dst, int64_t tag) = 0;
  // src -1: from any rank (Work::source_rank says which).
  virtual std::shared_ptr<Work> recv(Tensor t, int src, int64_t tag) = 0;
  // Brackets point-to-point calls that must be issued together
  // (batch_isend_irecv): NCCL's ncclGroupStart/End; nothing for Gloo.
  virtual void group_start() {}
  virtual void group_end() {}

 protected:
  int rank_ = 0;
  int size_ = 1;
};

bool gloo_available();
// iface (GLOO_SOCKET_IFNAME): a network interface whose address Gloo
// uses instead of hostname's, when not empty.
std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store> store,
                                              int rank, int size,
                                              Millis timeout,
                                              const std::string& hostname,
                                              const std::string& iface);

// NCCL (CUDA tensors; kernels/cuda/nccl.cpp): `library` is the path of
// libnccl.so.2 to load; device >= 0 makes that device's communicator now
// (init_process_group's device_id), else each is made by the first
// collective on it. Without CUDA, or without that library, it raises
// DistBackendError naming what to install.
std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store> store,
                                              int rank, int size,
                                              Millis timeout,
                                              const std::string& library,
                                              int device);

}  // namespace distributed
}  // namespace fastt
