// Work, and the Gloo process group of csrc/distributed/process_group.h.
// Reductions are fastt's own functions per dtype (Gloo's take void
// pointers), so every fastt dtype reduces: 16-bit floats in float, bool as
// logical or/and. Gloo's errors (a peer gone, a timeout) become
// DistBackendError naming the collective.
#include "csrc/distributed/process_group.h"

#include <deque>
#include <thread>

#ifdef FASTT_HAS_GLOO
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#endif

namespace fastt {
namespace distributed {

// ---- Work ----

bool Work::is_completed() {
  std::lock_guard<std::mutex> g(mu_);
  return done_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> g(mu_);
  return done_ && !error_;
}

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
    error_ = error;
  }
  cv_.notify_all();
}

void Work::wait(Millis timeout) {
  if (timeout.count() <= 0) timeout = default_timeout;
  {
    std::function<void(Millis)> w;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!done_ && waiter) w = std::move(waiter);
    }
    if (w) {
      try {
        w(timeout);
        finish();
      } catch (...) {
        finish(std::current_exception());
      }
    }
  }
  std::unique_lock<std::mutex> g(mu_);
  if (!cv_.wait_for(g, timeout, [&] { return done_; }))
    throw DistBackendError(fmt::format(
        "Work.wait: the operation did not complete within {}ms",
        timeout.count()));
  if (error_) std::rethrow_exception(error_);
}

#ifdef FASTT_HAS_GLOO

namespace {

using Func = std::function<void(void*, const void*, const void*, size_t)>;

template <class T, class Op>
Func elementwise(Op op) {
  return [op](void* c, const void* a, const void* b, size_t n) {
    T* o = static_cast<T*>(c);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = op(x[i], y[i]);
  };
}

const char* op_name(ReduceOp op) {
  static const char* names[] = {"SUM", "AVG", "PRODUCT", "MIN",  "MAX",
                                "BAND", "BOR", "BXOR", "PREMUL_SUM"};
  return names[int(op) < 9 ? int(op) : 0];
}

// The reduction of `op` over T (AVG reduces as SUM; the caller divides).
template <class T>
Func reduce_func(ReduceOp op, DType dt) {
  constexpr bool cplx = IsComplex<T>::value;
  constexpr bool integral = std::is_integral<T>::value;
  constexpr bool boolean = std::is_same<T, bool>::value;
  auto bad = [&]() -> Func {
    throw DistBackendError(fmt::format(
        "Cannot use ReduceOp.{} with {} tensors", op_name(op),
        dtype_name(dt)));
  };
  if constexpr (boolean) {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Max:
      case ReduceOp::Bor:
        return elementwise<T>([](bool a, bool b) { return a || b; });
      case ReduceOp::Product:
      case ReduceOp::Min:
      case ReduceOp::Band:
        return elementwise<T>([](bool a, bool b) { return a && b; });
      case ReduceOp::Bxor:
        return elementwise<T>([](bool a, bool b) { return a != b; });
      default:
        return bad();
    }
  } else {
    using M = typename OpMath<T>::type;
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg:
        return elementwise<T>([](T a, T b) { return T(M(a) + M(b)); });
      case ReduceOp::Product:
        return elementwise<T>([](T a, T b) { return T(M(a) * M(b)); });
      case ReduceOp::Min:
      case ReduceOp::Max:
        if constexpr (cplx) {
          return bad();
        } else {
          // NaN propagates, as torch's reductions do.
          if (op == ReduceOp::Min)
            return elementwise<T>([](T a, T b) {
              return (M(a) != M(a) || M(a) < M(b)) ? a : b;
            });
          return elementwise<T>([](T a, T b) {
            return (M(a) != M(a) || M(a) > M(b)) ? a : b;
          });
        }
      case ReduceOp::Band:
      case ReduceOp::Bor:
      case ReduceOp::Bxor:
        if constexpr (integral) {
          if (op == ReduceOp::Band)
            return elementwise<T>([](T a, T b) { return T(a & b); });
          if (op == ReduceOp::Bor)
            return elementwise<T>([](T a, T b) { return T(a | b); });
          return elementwise<T>([](T a, T b) { return T(a ^ b); });
        } else {
          return bad();
        }
      default:
        return bad();
    }
  }
}

Func reduce_func(ReduceOp op, DType dt) {
  FASTT_CHECK(op != ReduceOp::Avg || is_inexact(dt), DistBackendError,
              "Cannot use ReduceOp.AVG with {} tensors (fastt averages "
              "floating and complex tensors only)", dtype_name(dt));
  return visit_dtype(dt, [&](auto tag) {
    return reduce_func<decltype(tag)>(op, dt);
  });
}

void divide(const Tensor& t, int64_t n) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same<T, bool>::value ||
                  std::is_integral<T>::value) {
      return;
    } else {
      using M = typename OpMath<T>::type;
      T* p = static_cast<T*>(t.data_ptr());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = T(M(p[i]) / M(n));
    }
  });
}

uint8_t* bytes_of(const Tensor& t) {
  return t.defined() ? static_cast<uint8_t*>(t.data_ptr()) : nullptr;
}
size_t nbytes_of(const Tensor& t) { return t.defined() ? t.nbytes() : 0; }

// Gloo's rendezvous reads and writes through fastt's store.
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit StoreAdapter(std::shared_ptr<distributed::Store> s)
      : s_(std::move(s)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    s_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    Bytes b = s_->get(key);
    return std::vector<char>(b.begin(), b.end());
  }
  void wait(const std::vector<std::string>& keys) override { s_->wait(keys); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& t) override {
    s_->wait(keys, t);
  }

 private:
  std::shared_ptr<distributed::Store> s_;
};

class GlooGroup final : public ProcessGroup {
 public:
  GlooGroup(std::shared_ptr<Store> store, int rank, int size, Millis timeout,
            const std::string& hostname, const std::string& iface)
      : timeout_(timeout) {
    rank_ = rank;
    size_ = size;
    gloo::transport::tcp::attr attr;
    if (iface.empty())
      attr.hostname = hostname;
    else
      attr.iface = iface;
    try {
      device_ = gloo::transport::tcp::CreateDevice(attr);
      auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
      ctx->setTimeout(timeout);
      StoreAdapter adapter(store);
      ctx->connectFullMesh(adapter, device_);
      context_ = ctx;
    } catch (const DistError&) {
      throw;
    } catch (const std::exception& e) {
      throw DistBackendError(fmt::format(
          "init_process_group: Gloo could not connect rank {} of {} "
          "(hostname '{}'): {}", rank, size, hostname, e.what()));
    }
    worker_ = std::thread([this] { run(); });
  }
  ~GlooGroup() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  std::string backend() const override { return "gloo"; }

  std::shared_ptr<Work> allreduce(Tensor t, ReduceOp op) override {
    Func fn = reduce_func(op, t.dtype());
    return enqueue("all_reduce", [=](uint32_t tag) {
      if (nbytes_of(t) == 0) return;
      auto o = options<gloo::AllreduceOptions>(tag);
      o.setReduceFunction(fn);
      set_output(o, t);
      gloo::allreduce(o);
      if (op == ReduceOp::Avg) divide(t, size_);
    });
  }
  std::shared_ptr<Work> broadcast(Tensor t, int root) override {
    return enqueue("broadcast", [=](uint32_t tag) {
      if (nbytes_of(t) == 0) return;
      auto o = options<gloo::BroadcastOptions>(tag);
      o.setRoot(root);
      o.setOutput(bytes_of(t), nbytes_of(t));
      gloo::broadcast(o);
    });
  }
  std::shared_ptr<Work> reduce(Tensor t, int root, ReduceOp op) override {
    Func fn = reduce_func(op, t.dtype());
    return enqueue("reduce", [=](uint32_t tag) {
      if (nbytes_of(t) == 0) return;
      auto o = options<gloo::ReduceOptions>(tag);
      o.setRoot(root);
      o.setReduceFunction(fn);
      set_output(o, t);
      gloo::reduce(o);
      if (op == ReduceOp::Avg && rank_ == root) divide(t, size_);
    });
  }
  std::shared_ptr<Work> allgather(Tensor out, Tensor in) override {
    return enqueue("all_gather", [=](uint32_t tag) {
      if (nbytes_of(in) == 0) return;  // Gloo divides by the block size
      auto o = options<gloo::AllgatherOptions>(tag);
      o.setInput(bytes_of(in), nbytes_of(in));
      o.setOutput(bytes_of(out), nbytes_of(out));
      gloo::allgather(o);
    });
  }
  std::shared_ptr<Work> gather(Tensor out, Tensor in, int root) override {
    return enqueue("gather", [=](uint32_t tag) {
      if (nbytes_of(in) == 0) return;
      auto o = options<gloo::GatherOptions>(tag);
      o.setRoot(root);
      o.setInput(bytes_of(in), nbytes_of(in));
      if (rank_ == root) o.setOutput(bytes_of(out), nbytes_of(out));
      gloo::gather(o);
    });
  }
  std::shared_ptr<Work> scatter(Tensor out, Tensor in, int root) override {
    return enqueue("scatter", [=](uint32_t tag) {
      if (nbytes_of(out) == 0) return;
      auto o = options<gloo::ScatterOptions>(tag);
      o.setRoot(root);
      size_t block = nbytes_of(out);
      std::vector<uint8_t*> ins;
      if (rank_ == root)
        for (int r = 0; r < size_; ++r) ins.push_back(bytes_of(in) + r * block);
      else
        ins.assign(size_t(size_), bytes_of(out));  // unread off the root
      o.setInputs(ins, block);
      o.setOutput(bytes_of(out), block);
      gloo::scatter(o);
    });
  }
  std::shared_ptr<Work> alltoall(Tensor out, Tensor in,
                                 std::vector<int64_t> out_counts,
                                 std::vector<int64_t> in_counts) override {
    return enqueue("all_to_all", [=](uint32_t tag) {
      if (out_counts.empty() && in_counts.empty()) {
        if (nbytes_of(in) == 0) return;
        auto o = options<gloo::AlltoallOptions>(tag);
        o.setInput(bytes_of(in), nbytes_of(in));
        o.setOutput(bytes_of(out), nbytes_of(out));
        gloo::alltoall(o);
        return;
      }
      size_t item = in.itemsize();
      auto scaled = [&](std::vector<int64_t> c) {
        for (auto& x : c) x *= int64_t(item);
        return c;
      };
      auto o = options<gloo::AlltoallvOptions>(tag);
      o.setInput(bytes_of(in), scaled(in_counts));
      o.setOutput(bytes_of(out), scaled(out_counts));
      gloo::alltoallv(o);
    });
  }
  std::shared_ptr<Work> barrier() override {
    return enqueue("barrier", [=](uint32_t tag) {
      auto o = options<gloo::BarrierOptions>(tag);
      gloo::barrier(o);
    });
  }
  std::shared_ptr<Work> send(Tensor t, int dst, int64_t tag) override {
    std::shared_ptr<gloo::transport::UnboundBuffer> buf;
    const uint64_t slot = p2p_slot(tag);
    p2p_wait("send", dst, [&] {
      buf.reset(context_->createUnboundBuffer(bytes_of(t), nbytes_of(t))
                    .release());
      buf->send(dst, slot);
      return true;
    });
    auto w = std::make_shared<Work>();
    w->default_timeout = timeout_;
    w->waiter = [buf, t, dst](Millis timeout) {
      p2p_wait("send", dst, [&] { return buf->waitSend(timeout); });
    };
    return w;
  }
  std::shared_ptr<Work> recv(Tensor t, int src, int64_t tag) override {
    std::shared_ptr<gloo::transport::UnboundBuffer> buf;
    const uint64_t slot = p2p_slot(tag);
    p2p_wait("recv", src, [&] {
      buf.reset(context_->createUnboundBuffer(bytes_of(t), nbytes_of(t))
                    .release());
      if (src >= 0) {
        buf->recv(src, slot);
      } else {
        std::vector<int> all;
        for (int r = 0; r < size_; ++r)
          if (r != rank_) all.push_back(r);
        buf->recv(all, slot);
      }
      return true;
    });
    auto w = std::make_shared<Work>();
    w->default_timeout = timeout_;
    Work* raw = w.get();
    w->waiter = [buf, t, src, raw](Millis timeout) {
      int from = -1;
      p2p_wait("recv", src,
               [&] { return buf->waitRecv(&from, timeout); });
      raw->source_rank_ = from;
    };
    return w;
  }

 private:
  using Job = std::function<void(uint32_t)>;
  struct Item {
    const char* name;
    Job job;
    std::shared_ptr<Work> work;
  };

  // Point-to-point slots: a prefix byte no Gloo collective uses (theirs
  // are small: 0x01 is gather's), then the 32-bit user tag.
  // A collective's options: its tag and the group's timeout.
  template <class O>
  O options(uint32_t tag) const {
    O o(context_);
    o.setTag(tag);
    o.setTimeout(timeout_);
    return o;
  }
  static uint64_t p2p_slot(int64_t tag) {
    FASTT_CHECK(tag >= 0 && tag <= int64_t(UINT32_MAX), ValueError,
                "send/recv: tag {} must be in [0, 2**32)", tag);
    return (uint64_t(0xFF) << 56) | uint64_t(tag);
  }
  template <class F>
  static void p2p_wait(const char* what, int peer, F&& f) {
    bool ok;
    try {
      ok = f();
    } catch (const std::exception& e) {
      throw DistBackendError(fmt::format("{} (peer {}): {}", what, peer,
                                         e.what()));
    }
    FASTT_CHECK(ok, DistBackendError, "{} (peer {}) was aborted", what,
                peer);
  }
  template <class O>
  static void set_output(O& o, const Tensor& t) {
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      o.template setOutput<T>(static_cast<T*>(t.data_ptr()),
                              size_t(t.numel()));
    });
  }

  bool stopping() {
    std::lock_guard<std::mutex> g(mu_);
    return stop_;
  }
  std::shared_ptr<Work> enqueue(const char* name, Job job) {
    auto w = std::make_shared<Work>();
    w->default_timeout = timeout_;
    {
      std::lock_guard<std::mutex> g(mu_);
      queue_.push_back({name, std::move(job), w});
    }
    cv_.notify_one();
    return w;
  }
  void run() {
    for (;;) {
      Item item;
      {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      uint32_t tag = next_tag_++;
      if (stopping()) {  // the group is being destroyed: do not start it
        item.work->finish(std::make_exception_ptr(DistBackendError(
            fmt::format("{}: the process group was destroyed before it "
                        "ran", item.name))));
        continue;
      }
      try {
        item.job(tag);
        item.work->finish();
      } catch (const DistError&) {
        item.work->finish(std::current_exception());
      } catch (const std::exception& e) {
        item.work->finish(std::make_exception_ptr(DistBackendError(
            fmt::format("{} on rank {} of {} failed (Gloo): {}", item.name,
                        rank_, size_, e.what()))));
      }
    }
  }

  Millis timeout_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::thread worker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stop_ = false;
  uint32_t next_tag_ = 0;
};

}  // namespace

bool gloo_available() { return true; }

std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store> store,
                                              int rank, int size,
                                              Millis timeout,
                                              const std::string& hostname,
                                              const std::string& iface) {
  return std::make_shared<GlooGroup>(std::move(store), rank, size, timeout,
                                     hostname, iface);
}

#else  // !FASTT_HAS_GLOO

bool gloo_available() { return false; }

std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store>, int,
                                              int, Millis,
                                              const std::string&,
                                              const std::string&) {
  throw DistBackendError(
      "fastt was built without Gloo, the CPU back end of "
      "fastt.distributed: install it (apt-get install libgloo-dev) and "
      "rebuild fastt");
}

#endif

#ifndef FASTT_WITH_CUDA
std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store>, int,
                                              int, Millis,
                                              const std::string&, int) {
  throw DistBackendError(
      "the NCCL back end needs fastt built with CUDA (this build has no "
      "CUDA backend); use backend='gloo'");
}
#endif

}  // namespace distributed
}  // namespace fastt
