// fastt.distributed's NCCL back end (CUDA tensors). libnccl.so.2 is
// loaded at run time (python/fastt/distributed finds the nvidia-nccl-cu13
// wheel's copy, or the system's), so a CUDA build never links it and a
// machine without it gets an error naming the wheel. The few entry points
// used are declared here from NCCL's documented C API (types and enum
// values are its stable ABI). A communicator per device is made on the
// first collective that uses the device: rank 0's ncclGetUniqueId goes
// through the group's store. Every op is enqueued on the tensor's device's
// current stream, so it is ordered with the kernels around it as torch's
// NCCL work is after Work.wait(); Work completes at once for the host.
// gather/scatter/all_to_all are grouped ncclSend/ncclRecv.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "csrc/distributed/process_group.h"
#include "kernels/cuda/runtime.h"
#include "kernels/cuda/stream.h"

namespace fastt {
namespace distributed {

namespace {

// ---- NCCL's C API (nccl.h), declared from its documentation ----
using ncclComm_t = struct ncclComm*;
struct ncclUniqueId {
  char internal[128];
};
using ncclResult_t = int;   // ncclSuccess = 0
using ncclDataType_t = int;
using ncclRedOp_t = int;
enum : int {
  kInt8 = 0, kUint8 = 1, kInt32 = 2, kUint32 = 3, kInt64 = 4, kUint64 = 5,
  kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9
};
enum : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

struct Api {
  ncclResult_t (*GetUniqueId)(ncclUniqueId*);
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*CommDestroy)(ncclComm_t);
  ncclResult_t (*CommAbort)(ncclComm_t);
  const char* (*GetErrorString)(ncclResult_t);
  ncclResult_t (*AllReduce)(const void*, void*, size_t, ncclDataType_t,
                            ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*Broadcast)(const void*, void*, size_t, ncclDataType_t, int,
                            ncclComm_t, cudaStream_t);
  ncclResult_t (*Reduce)(const void*, void*, size_t, ncclDataType_t,
                         ncclRedOp_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*AllGather)(const void*, void*, size_t, ncclDataType_t,
                            ncclComm_t, cudaStream_t);
  ncclResult_t (*Send)(const void*, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t);
  ncclResult_t (*Recv)(void*, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
};

template <class F>
void bind(void* lib, const char* name, F* fn, const std::string& path) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  FASTT_CHECK(*fn != nullptr, DistBackendError,
              "NCCL: {} has no symbol {} (too old an NCCL?)", path, name);
}

const Api& api(const std::string& path) {
  static std::mutex mu;
  static std::unordered_map<std::string, Api> loaded;
  std::lock_guard<std::mutex> g(mu);
  auto it = loaded.find(path);
  if (it != loaded.end()) return it->second;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  FASTT_CHECK(lib != nullptr, DistBackendError,
              "NCCL is not available ({}): install the nvidia-nccl-cu13 "
              "wheel (pip install nvidia-nccl-cu13) or point "
              "FASTT_NCCL_LIBRARY at libnccl.so.2", dlerror());
  Api a;
  bind(lib, "ncclGetUniqueId", &a.GetUniqueId, path);
  bind(lib, "ncclCommInitRank", &a.CommInitRank, path);
  bind(lib, "ncclCommDestroy", &a.CommDestroy, path);
  bind(lib, "ncclCommAbort", &a.CommAbort, path);
  bind(lib, "ncclGetErrorString", &a.GetErrorString, path);
  bind(lib, "ncclAllReduce", &a.AllReduce, path);
  bind(lib, "ncclBroadcast", &a.Broadcast, path);
  bind(lib, "ncclReduce", &a.Reduce, path);
  bind(lib, "ncclAllGather", &a.AllGather, path);
  bind(lib, "ncclSend", &a.Send, path);
  bind(lib, "ncclRecv", &a.Recv, path);
  bind(lib, "ncclGroupStart", &a.GroupStart, path);
  bind(lib, "ncclGroupEnd", &a.GroupEnd, path);
  return loaded.emplace(path, a).first->second;
}

// NCCL's type for a fastt dtype (complex: its real parts, for sums).
ncclDataType_t nccl_type(DType t, ReduceOp op, bool reducing) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8: return kUint8;
    case DType::Int8: return kInt8;
    case DType::Int32: return kInt32;
    case DType::Int64: return kInt64;
    case DType::Float16: return kFloat16;
    case DType::BFloat16: return kBfloat16;
    case DType::Float32:
    case DType::Complex64: return kFloat32;
    case DType::Float64:
    case DType::Complex128: return kFloat64;
    default:
      break;
  }
  if (!reducing) return kUint8;  // moved as bytes
  throw DistBackendError(fmt::format("NCCL has no {} type for reductions",
                                     dtype_name(t)));
}

ncclRedOp_t nccl_op(ReduceOp op, DType t) {
  bool cplx = is_complex(t);
  if (t == DType::Bool) {  // torch's mapping: sum/max -> or, prod/min -> and
    if (op == ReduceOp::Sum || op == ReduceOp::Max) return kMax;
    if (op == ReduceOp::Product || op == ReduceOp::Min) return kMin;
  }
  switch (op) {
    case ReduceOp::Sum: return kSum;
    case ReduceOp::Avg:
      if (is_inexact(t)) return kAvg;
      break;
    case ReduceOp::Product:
      if (!cplx) return kProd;
      break;
    case ReduceOp::Min:
      if (!cplx) return kMin;
      break;
    case ReduceOp::Max:
      if (!cplx) return kMax;
      break;
    default:
      break;
  }
  static const char* names[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX",
                                "BAND", "BOR", "BXOR", "PREMUL_SUM"};
  throw DistBackendError(fmt::format(
      "Cannot use ReduceOp.{} with {} tensors on NCCL",
      names[int(op) < 9 ? int(op) : 0], dtype_name(t)));
}

// Elements as NCCL counts them (complex: two reals; bytes: nbytes).
size_t count(const Tensor& t, ncclDataType_t type) {
  if (!t.defined()) return 0;
  if (type == kUint8 && itemsize(t.dtype()) != 1) return t.nbytes();
  return size_t(t.numel()) * (is_complex(t.dtype()) ? 2 : 1);
}

class NcclGroup final : public ProcessGroup {
 public:
  NcclGroup(std::shared_ptr<Store> store, int rank, int size, Millis timeout,
            std::string lib, int device)
      : store_(std::move(store)), timeout_(timeout), api_(api(lib)) {
    rank_ = rank;
    size_ = size;
    if (device >= 0) comm(device, true);
  }
  ~NcclGroup() override {
    for (auto& kv : comms_) api_.CommDestroy(kv.second);
  }
  std::string backend() const override { return "nccl"; }

  std::shared_ptr<Work> allreduce(Tensor t, ReduceOp op) override {
    auto type = nccl_type(t.dtype(), op, true);
    auto o = nccl_op(op, t.dtype());
    return run(t, "all_reduce", [&](ncclComm_t c, cudaStream_t s) {
      return api_.AllReduce(t.data_ptr(), t.data_ptr(), count(t, type), type,
                            o, c, s);
    });
  }
  std::shared_ptr<Work> broadcast(Tensor t, int root) override {
    return run(t, "broadcast", [&](ncclComm_t c, cudaStream_t s) {
      return api_.Broadcast(t.data_ptr(), t.data_ptr(), t.nbytes(), kUint8,
                            root, c, s);
    });
  }
  std::shared_ptr<Work> reduce(Tensor t, int root, ReduceOp op) override {
    auto type = nccl_type(t.dtype(), op, true);
    auto o = nccl_op(op, t.dtype());
    return run(t, "reduce", [&](ncclComm_t c, cudaStream_t s) {
      return api_.Reduce(t.data_ptr(), t.data_ptr(), count(t, type), type, o,
                         root, c, s);
    });
  }
  std::shared_ptr<Work> allgather(Tensor out, Tensor in) override {
    return run(in, "all_gather", [&](ncclComm_t c, cudaStream_t s) {
      return api_.AllGather(in.data_ptr(), out.data_ptr(), in.nbytes(),
                            kUint8, c, s);
    });
  }
  std::shared_ptr<Work> gather(Tensor out, Tensor in, int root) override {
    size_t block = in.nbytes();
    return run(in, "gather", [&](ncclComm_t c, cudaStream_t s) {
      return grouped([&]() -> ncclResult_t {
        if (rank_ != root)
          return api_.Send(in.data_ptr(), block, kUint8, root, c, s);
        for (int r = 0; r < size_; ++r) {
          char* dst = static_cast<char*>(out.data_ptr()) + r * block;
          ncclResult_t e =
              r == rank_ ? copy(dst, in.data_ptr(), block, s)
                         : api_.Recv(dst, block, kUint8, r, c, s);
          if (e != 0) return e;
        }
        return 0;
      });
    });
  }
  std::shared_ptr<Work> scatter(Tensor out, Tensor in, int root) override {
    size_t block = out.nbytes();
    return run(out, "scatter", [&](ncclComm_t c, cudaStream_t s) {
      return grouped([&]() -> ncclResult_t {
        if (rank_ != root)
          return api_.Recv(out.data_ptr(), block, kUint8, root, c, s);
        for (int r = 0; r < size_; ++r) {
          const char* src = static_cast<char*>(in.data_ptr()) + r * block;
          ncclResult_t e =
              r == rank_ ? copy(out.data_ptr(), src, block, s)
                         : api_.Send(src, block, kUint8, r, c, s);
          if (e != 0) return e;
        }
        return 0;
      });
    });
  }
  std::shared_ptr<Work> alltoall(Tensor out, Tensor in,
                                 std::vector<int64_t> out_counts,
                                 std::vector<int64_t> in_counts) override {
    size_t item = in.itemsize();
    if (in_counts.empty()) {
      in_counts.assign(size_t(size_), in.numel() / size_);
      out_counts.assign(size_t(size_), out.numel() / size_);
    }
    return run(in, "all_to_all", [&](ncclComm_t c, cudaStream_t s) {
      return grouped([&]() -> ncclResult_t {
        size_t io = 0, oo = 0;
        for (int r = 0; r < size_; ++r) {
          const char* src = static_cast<char*>(in.data_ptr()) + io * item;
          char* dst = static_cast<char*>(out.data_ptr()) + oo * item;
          size_t ni = size_t(in_counts[r]) * item;
          size_t no = size_t(out_counts[r]) * item;
          ncclResult_t e = 0;
          if (r == rank_) {
            e = copy(dst, src, ni, s);
          } else {
            e = api_.Send(src, ni, kUint8, r, c, s);
            if (e == 0) e = api_.Recv(dst, no, kUint8, r, c, s);
          }
          if (e != 0) return e;
          io += size_t(in_counts[r]);
          oo += size_t(out_counts[r]);
        }
        return 0;
      });
    });
  }
  std::shared_ptr<Work> barrier() override {
    int dev = cuda::current_device();
    if (!barrier_buf_.defined() || barrier_buf_.device().index != dev)
      barrier_buf_ = Tensor::empty({1}, DType::Float32,
                                   Device(DeviceType::CUDA, dev));
    auto w = allreduce(barrier_buf_, ReduceOp::Sum);
    cuda::stream_synchronize(cuda::current_stream(dev), dev);
    return w;
  }
  std::shared_ptr<Work> send(Tensor t, int dst, int64_t) override {
    return run(t, "send", [&](ncclComm_t c, cudaStream_t s) {
      return api_.Send(t.data_ptr(), t.nbytes(), kUint8, dst, c, s);
    });
  }
  std::shared_ptr<Work> recv(Tensor t, int src, int64_t) override {
    FASTT_CHECK(src >= 0, DistBackendError,
                "recv: NCCL cannot receive from any source; name src");
    auto w = run(t, "recv", [&](ncclComm_t c, cudaStream_t s) {
      return api_.Recv(t.data_ptr(), t.nbytes(), kUint8, src, c, s);
    });
    w->source_rank_ = src;
    return w;
  }

 private:
  ncclResult_t copy(void* dst, const void* src, size_t n, cudaStream_t s) {
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s);
    return e == cudaSuccess ? 0 : 1;  // ncclUnhandledCudaError
  }
  template <class F>
  ncclResult_t grouped(F&& body) {
    ncclResult_t e = api_.GroupStart();
    if (e != 0) return e;
    ncclResult_t b = body();
    e = api_.GroupEnd();
    return b != 0 ? b : e;
  }
  void group_start() override { check(api_.GroupStart(), "ncclGroupStart"); }
  void group_end() override { check(api_.GroupEnd(), "ncclGroupEnd"); }

  // The device's communicator; made here by every rank together, so only
  // a collective (`collective`) may make it: a first send/recv would wait
  // for ranks that never come.
  ncclComm_t comm(int dev, bool collective) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = comms_.find(dev);
    if (it != comms_.end()) return it->second;
    FASTT_CHECK(collective, DistBackendError,
                "NCCL: the first operation on cuda:{} must be a collective "
                "of the whole group (it creates the communicator); run "
                "barrier() first, or pass device_id to "
                "init_process_group", dev);
    std::string key = fmt::format("nccl_id/{}", comms_made_++);
    ncclUniqueId id;
    if (rank_ == 0) {
      check(api_.GetUniqueId(&id), "ncclGetUniqueId");
      store_->set(key, Bytes(id.internal, id.internal + sizeof id));
    } else {
      Bytes b = store_->get(key);
      FASTT_CHECK(b.size() == sizeof id, DistBackendError,
                  "NCCL: rank 0's unique id has {} bytes", b.size());
      std::copy(b.begin(), b.end(), id.internal);
    }
    cuda::DeviceGuard guard(dev);
    ncclComm_t c = nullptr;
    check(api_.CommInitRank(&c, size_, id, rank_), "ncclCommInitRank");
    comms_[dev] = c;
    return c;
  }
  void check(ncclResult_t e, const char* what) {
    if (e != 0)
      throw DistBackendError(fmt::format(
          "{} on rank {} of {} failed (NCCL): {}", what, rank_, size_,
          api_.GetErrorString(e)));
  }
  template <class F>
  std::shared_ptr<Work> run(const Tensor& t, const char* what, F&& op) {
    FASTT_CHECK(t.is_cuda(), DistBackendError,
                "{}: the NCCL back end takes CUDA tensors, got a {} tensor",
                what, t.device().str());
    int dev = t.device().index;
    const bool p2p = !std::strcmp(what, "send") || !std::strcmp(what, "recv");
    ncclComm_t c = comm(dev, !p2p);
    cuda::DeviceGuard guard(dev);
    check(op(c, cuda::current_stream(dev)), what);
    auto w = std::make_shared<Work>();
    w->default_timeout = timeout_;
    w->finish();
    return w;
  }

  std::shared_ptr<Store> store_;
  Millis timeout_;
  const Api& api_;
  std::mutex mu_;
  std::unordered_map<int, ncclComm_t> comms_;
  int comms_made_ = 0;
  Tensor barrier_buf_;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store> store,
                                              int rank, int size,
                                              Millis timeout,
                                              const std::string& library,
                                              int device) {
  return std::make_shared<NcclGroup>(std::move(store), rank, size, timeout,
                                     library, device);
}

}  // namespace distributed
}  // namespace fastt
