// Bindings of csrc/distributed (fastt._C._distributed): the stores, the
// Gloo process group and Work, for python/fastt/distributed, which holds
// torch.distributed's API. Off the per-op hot path, so pybind11 classes;
// every blocking call runs without the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "csrc/distributed/process_group.h"
#include "csrc/distributed/reducer.h"
#include "python/src/common.h"

namespace fastt {
namespace py {

namespace {

namespace pb = pybind11;
namespace dist = fastt::distributed;
using dist::Millis;

PyObject* g_dist_error = nullptr;
PyObject* g_store_error = nullptr;
PyObject* g_network_error = nullptr;
PyObject* g_backend_error = nullptr;

dist::Bytes bytes_arg(const pb::bytes& b) {
  std::string s = b;
  return dist::Bytes(s.begin(), s.end());
}
pb::bytes to_py(const dist::Bytes& b) {
  return pb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}
Tensor tensor_arg(pb::handle h) {
  if (h.is_none()) return Tensor();
  return to_tensor(h.ptr(), "tensor");
}

template <class F>
auto released(F&& f) -> decltype(f()) {
  pb::gil_scoped_release r;
  return f();
}

// A group's destructor joins its worker thread, which may need the GIL
// (the last reference to a tensor over Python memory): the holder Python
// drops deletes it with the GIL released.
std::shared_ptr<dist::ProcessGroup> gil_free_delete(
    std::shared_ptr<dist::ProcessGroup> g) {
  auto* keep = new std::shared_ptr<dist::ProcessGroup>(std::move(g));
  return std::shared_ptr<dist::ProcessGroup>(
      keep->get(), [keep](dist::ProcessGroup*) {
        if (PyGILState_Check()) {
          pb::gil_scoped_release r;
          delete keep;
        } else {
          delete keep;
        }
      });
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const dist::DistStoreError& e) {
    PyErr_SetString(g_store_error, e.what());
  } catch (const dist::DistNetworkError& e) {
    PyErr_SetString(g_network_error, e.what());
  } catch (const dist::DistBackendError& e) {
    PyErr_SetString(g_backend_error, e.what());
  } catch (const dist::DistError& e) {
    PyErr_SetString(g_dist_error, e.what());
  } catch (const fastt::Error&) {
    translate_exception();
  }
}

PyObject* new_error(pb::module_& m, const char* name, PyObject* base,
                    const char* doc) {
  std::string full = std::string("fastt.distributed.") + name;
  PyObject* e = PyErr_NewExceptionWithDoc(full.c_str(), doc, base, nullptr);
  if (!e) throw pb::error_already_set();
  m.add_object(name, pb::reinterpret_borrow<pb::object>(e));
  return e;
}

}  // namespace

bool init_distributed(PyObject* module) {
  try {
    auto root = pb::reinterpret_borrow<pb::module_>(module);
    pb::module_ m = root.def_submodule(
        "_distributed", "fastt.distributed's C++ side (csrc/distributed)");
    g_dist_error = new_error(m, "DistError", PyExc_RuntimeError,
                             "An error of fastt.distributed.");
    g_store_error = new_error(m, "DistStoreError", g_dist_error,
                              "A store operation failed or timed out.");
    g_network_error = new_error(m, "DistNetworkError", g_dist_error,
                                "A connection failed or was lost.");
    g_backend_error = new_error(m, "DistBackendError", g_dist_error,
                                "A collective failed in its back end.");
    pb::register_exception_translator(translate);

    using StoreP = std::shared_ptr<dist::Store>;
    pb::class_<dist::Store, StoreP>(m, "_Store")
        .def("set",
             [](dist::Store& s, const std::string& k, const pb::bytes& v) {
               auto b = bytes_arg(v);
               released([&] { s.set(k, b); });
             })
        .def("get",
             [](dist::Store& s, const std::string& k) {
               return to_py(released([&] { return s.get(k); }));
             })
        .def("add",
             [](dist::Store& s, const std::string& k, int64_t a) {
               return released([&] { return s.add(k, a); });
             })
        .def("compare_set",
             [](dist::Store& s, const std::string& k, const pb::bytes& e,
                const pb::bytes& d) {
               auto eb = bytes_arg(e), db = bytes_arg(d);
               return to_py(
                   released([&] { return s.compare_set(k, eb, db); }));
             })
        .def("check",
             [](dist::Store& s, const std::vector<std::string>& keys) {
               return released([&] { return s.check(keys); });
             })
        .def("delete_key",
             [](dist::Store& s, const std::string& k) {
               return released([&] { return s.delete_key(k); });
             })
        .def("num_keys",
             [](dist::Store& s) {
               return released([&] { return s.num_keys(); });
             })
        .def("wait",
             [](dist::Store& s, const std::vector<std::string>& keys,
                int64_t ms) {
               released([&] {
                 s.wait(keys, ms < 0 ? s.timeout() : Millis(ms));
               });
             })
        .def_property_readonly(
            "timeout_ms", [](dist::Store& s) { return s.timeout().count(); })
        .def("set_timeout_ms",
             [](dist::Store& s, int64_t ms) { s.set_timeout(Millis(ms)); })
        .def_property_readonly(
            "port", [](dist::Store& s) { return dist::tcp_store_port(s); })
        .def("wait_server_gone", [](dist::Store& s, int64_t ms) {
          released([&] { dist::wait_server_gone(s, Millis(ms)); });
        });

    m.def("_hash_store",
          [](int64_t ms) { return dist::make_hash_store(Millis(ms)); });
    m.def("_file_store", [](const std::string& path, int64_t world,
                            int64_t ms) {
      return released(
          [&] { return dist::make_file_store(path, world, Millis(ms)); });
    });
    m.def("_tcp_store", [](const std::string& host, int port, int64_t world,
                           bool master, int64_t ms, bool wait_workers) {
      return released([&] {
        return dist::make_tcp_store(host, port, world, master, Millis(ms),
                                    wait_workers);
      });
    });
    m.def("_prefix_store", [](const std::string& prefix, StoreP base) {
      return dist::make_prefix_store(prefix, std::move(base));
    });

    using WorkP = std::shared_ptr<dist::Work>;
    pb::class_<dist::Work, WorkP>(m, "_Work")
        .def("wait",
             [](dist::Work& w, int64_t ms) {
               released([&] { w.wait(Millis(ms)); });
             })
        .def("is_completed", &dist::Work::is_completed)
        .def("is_success", &dist::Work::is_success)
        .def("source_rank", &dist::Work::source_rank);

    // Every op runs without the GIL (NCCL's may block: communicator
    // setup, grouped calls); tensors are converted first, with it.
    using PG = dist::ProcessGroup;
    using PGP = std::shared_ptr<PG>;
    auto op = [](int v) { return dist::ReduceOp(v); };
    pb::class_<PG, PGP>(m, "_ProcessGroup")
        .def("rank", &PG::rank)
        .def("size", &PG::size)
        .def("backend", &PG::backend)
        .def("allreduce",
             [op](PG& g, pb::handle t, int o) {
               Tensor x = tensor_arg(t);
               return released([&] { return g.allreduce(x, op(o)); });
             })
        .def("broadcast",
             [](PG& g, pb::handle t, int root) {
               Tensor x = tensor_arg(t);
               return released([&] { return g.broadcast(x, root); });
             })
        .def("reduce",
             [op](PG& g, pb::handle t, int root, int o) {
               Tensor x = tensor_arg(t);
               return released([&] { return g.reduce(x, root, op(o)); });
             })
        .def("allgather",
             [](PG& g, pb::handle out, pb::handle in) {
               Tensor o = tensor_arg(out), i = tensor_arg(in);
               return released([&] { return g.allgather(o, i); });
             })
        .def("gather",
             [](PG& g, pb::handle out, pb::handle in, int root) {
               Tensor o = tensor_arg(out), i = tensor_arg(in);
               return released([&] { return g.gather(o, i, root); });
             })
        .def("scatter",
             [](PG& g, pb::handle out, pb::handle in, int root) {
               Tensor o = tensor_arg(out), i = tensor_arg(in);
               return released([&] { return g.scatter(o, i, root); });
             })
        .def("alltoall",
             [](PG& g, pb::handle out, pb::handle in,
                std::vector<int64_t> oc, std::vector<int64_t> ic) {
               Tensor o = tensor_arg(out), i = tensor_arg(in);
               return released([&] {
                 return g.alltoall(o, i, std::move(oc), std::move(ic));
               });
             })
        .def("barrier",
             [](PG& g) { return released([&] { return g.barrier(); }); })
        .def("send",
             [](PG& g, pb::handle t, int dst, int64_t tag) {
               Tensor x = tensor_arg(t);
               return released([&] { return g.send(x, dst, tag); });
             })
        .def("recv",
             [](PG& g, pb::handle t, int src, int64_t tag) {
               Tensor x = tensor_arg(t);
               return released([&] { return g.recv(x, src, tag); });
             })
        .def("group_start",
             [](PG& g) { released([&] { g.group_start(); }); })
        .def("group_end", [](PG& g) { released([&] { g.group_end(); }); });

    m.def("_gloo_available", &dist::gloo_available);
    m.def("_gloo_group", [](StoreP store, int rank, int size, int64_t ms,
                            const std::string& hostname,
                            const std::string& iface) {
      return gil_free_delete(released([&] {
        return dist::make_gloo_group(std::move(store), rank, size,
                                     Millis(ms), hostname, iface);
      }));
    });
    // DDP's per-parameter hooks (csrc/distributed/reducer.h); the
    // callbacks run inside backward, which holds the GIL.
    using GCCallback = dist::GradCounter::Callback;
    auto py_callback = [](pb::object f) -> GCCallback {
      if (f.is_none()) return nullptr;
      return [f = std::move(f)](int64_t k) {
        pb::gil_scoped_acquire g;
        try {
          f(k);
        } catch (pb::error_already_set& e) {
          e.restore();
          throw PyErrAlreadySet{};
        }
      };
    };
    using GC = dist::GradCounter;
    pb::class_<GC, std::shared_ptr<GC>>(m, "_GradCounter")
        .def(pb::init([py_callback](pb::list params,
                                    std::vector<int64_t> group_of,
                                    pb::list views, bool copy, bool as_view,
                                    pb::object on_ready,
                                    pb::object on_twice) {
          std::vector<Tensor> ps, vs;
          for (auto p : params) ps.push_back(tensor_arg(p));
          for (auto v : views) vs.push_back(tensor_arg(v));
          return std::make_shared<GC>(std::move(ps), std::move(group_of),
                                      std::move(vs), copy, as_view,
                                      py_callback(std::move(on_ready)),
                                      py_callback(std::move(on_twice)));
        }))
        .def("arm", &GC::arm)
        .def("begin", &GC::begin)
        .def_property_readonly("expecting", &GC::expecting)
        .def("mark", &GC::mark)
        .def("any_done", &GC::any_done)
        .def("done", [](GC& c) {
          return std::vector<int>(c.done().begin(), c.done().end());
        })
        .def("remove_hooks", &GC::remove_hooks);
    m.def("_nccl_group", [](StoreP store, int rank, int size, int64_t ms,
                            const std::string& library, int device) {
      return gil_free_delete(released([&] {
        return dist::make_nccl_group(std::move(store), rank, size,
                                     Millis(ms), library, device);
      }));
    });
    return true;
  } catch (pb::error_already_set& e) {
    e.restore();
    return false;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_ImportError, e.what());
    return false;
  }
}

}  // namespace py
}  // namespace fastt
