// Bindings of fused multi-tensor optimizer steps (csrc/ops/optim.h):
// _C._sgd_step, _adam_step, _rmsprop_step, _adagrad_step, _adadelta_step,
// _adamax_step, _nadam_step, _radam_step, _asgd_step, _rprop_step, each taking
// Python lists of tensors (converted once into reused vectors; entries whose
// grad is None are skipped) and the hyperparameters positionally or by
// torch's keyword names. To add one:
// a Sig table, a function like the others, a row in g_optim_functions.
#include "common.h"

#include <memory>
#include <vector>

#include "csrc/ops/optim.h"

namespace fastt {
namespace py {
namespace {

constexpr int kMaxOptimArgs = 16;
constexpr int kMaxOptimLists = 6;

// Parameter names (all may be positional); the first `nreq` are required.
struct OptimSig {
  const char* fname;
  const char* names[kMaxOptimArgs];
  int nreq;
};

void parse_optim_args(const OptimSig& sig, PyObject* const* args,
                      Py_ssize_t nargs, PyObject* kwnames, PyObject** out) {
  int nnames = 0;
  while (nnames < kMaxOptimArgs && sig.names[nnames]) out[nnames++] = nullptr;
  if (nargs > nnames) {
    PyErr_Format(PyExc_TypeError,
                 "%s() takes at most %d arguments (%zd given)", sig.fname,
                 nnames, nargs);
    throw_py();
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  if (kwnames) {
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      int found = -1;
      for (int i = 0; i < nnames && found < 0; ++i)
        if (PyUnicode_CompareWithASCIIString(key, sig.names[i]) == 0)
          found = i;
      if (found < 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s() got an unexpected keyword argument '%U'",
                     sig.fname, key);
        throw_py();
      }
      if (out[found]) {
        PyErr_Format(PyExc_TypeError,
                     "%s() got multiple values for argument '%s'", sig.fname,
                     sig.names[found]);
        throw_py();
      }
      out[found] = args[nargs + k];
    }
  }
  for (int i = 0; i < sig.nreq; ++i)
    if (!out[i]) {
      PyErr_Format(PyExc_TypeError,
                   "%s() missing required argument '%s' (pos %d)", sig.fname,
                   sig.names[i], i + 1);
      throw_py();
    }
}

// The tensor lists of one call, reused across calls (no allocation in a
// steady state) and emptied afterwards so no tensor is kept alive. While
// the GIL is held the Python lists keep every tensor alive, so the slots
// hold borrowed handles (no atomic reference count per tensor, which was
// most of the binding's time); a call that releases the GIL owns them.
struct ListSlots {
  std::vector<Tensor> v[kMaxOptimLists];
  int64_t numel = 0;  // of the first list (the parameters)
  bool borrowed = true;
};
struct SlotsGuard {
  ListSlots& s;
  ~SlotsGuard() {
    for (auto& v : s.v) {
      if (s.borrowed)
        for (Tensor& t : v) t.release();  // drop without a decrement
      v.clear();
    }
  }
};
ListSlots& slots() {
  // Only a pointer in TLS (the module's TLS block counts against glibc's
  // static TLS surplus).
  thread_local std::unique_ptr<ListSlots> s;
  if (FASTT_UNLIKELY(!s)) s.reset(new ListSlots());
  return *s;
}

// The items of a list or tuple argument (None or absent: no items).
PyObject** list_items(const OptimSig& sig, int index, PyObject* o,
                      Py_ssize_t* n) {
  *n = 0;
  if (!given(o)) return nullptr;
  if (!PyList_Check(o) && !PyTuple_Check(o)) {
    PyErr_Format(PyExc_TypeError,
                 "%s(): argument '%s' must be a list of Tensors, not %s",
                 sig.fname, sig.names[index], Py_TYPE(o)->tp_name);
    throw_py();
  }
  *n = PySequence_Fast_GET_SIZE(o);
  return PySequence_Fast_ITEMS(o);
}

// Reads the first `nlists` arguments (params, grads, state lists...) into
// the slots. Entries whose grad is None are left out of every list (their
// state may be None too), so a caller can pass a group's full lists.
void read_lists(const OptimSig& sig, PyObject** a, int nlists, ListSlots& s) {
  s.numel = 0;
  // Owned handles only when the GIL will be released (a large update).
  Py_ssize_t n_params;
  PyObject** params = list_items(sig, 0, a[0], &n_params);
  int64_t numel = 0;
  for (Py_ssize_t i = 0; i < n_params; ++i)
    if (is_tensor(params[i])) numel += unwrap(params[i]).numel();
  s.borrowed = numel < kReleaseGILNumel;
  Py_ssize_t n_grads;
  PyObject** grads = list_items(sig, 1, a[1], &n_grads);
  bool any_none = false;
  for (Py_ssize_t i = 0; i < n_grads; ++i) any_none |= grads[i] == Py_None;
  for (int l = 0; l < nlists; ++l) {
    Py_ssize_t n;
    PyObject** items = list_items(sig, l, a[l], &n);
    if (any_none && n != 0 && n != n_grads) {
      PyErr_Format(PyExc_RuntimeError,
                   "%s(): '%s' has %zd entries but 'grads' has %zd",
                   sig.fname, sig.names[l], n, n_grads);
      throw_py();
    }
    std::vector<Tensor>& out = s.v[l];
    out.reserve(size_t(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (any_none && grads[i] == Py_None) continue;
      PyObject* item = items[i];
      if (!is_tensor(item)) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument '%s' must be a list of Tensors, but "
                     "item %zd is %s",
                     sig.fname, sig.names[l], i, Py_TYPE(item)->tp_name);
        throw_py();
      }
      if (s.borrowed) out.emplace_back(unwrap(item).impl());  // adopts
      else out.push_back(unwrap(item));
      if (l == 0) s.numel += out.back().numel();
    }
  }
}

double opt_double(PyObject* o, double fallback, const char* what) {
  return o ? to_double(o, what) : fallback;
}
bool opt_bool(PyObject* o, bool fallback, const char* what) {
  return o ? to_bool(o, what) : fallback;
}

// Runs f without the GIL when the update is large.
template <class F>
void run_maybe_nogil(int64_t numel, F&& f) {
  if (numel < kReleaseGILNumel) return f();
  PyThreadState* st = PyEval_SaveThread();
  try {
    f();
  } catch (...) {
    PyEval_RestoreThread(st);
    throw;
  }
  PyEval_RestoreThread(st);
}

PyObject* f_sgd_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{
      "_sgd_step",
      {"params", "grads", "momentum_buffer_list", "lr", "momentum",
       "dampening", "weight_decay", "nesterov", "maximize", "first_step"},
      4};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 3, s);
  const double lr = to_double(a[3], "lr");
  const double momentum = opt_double(a[4], 0, "momentum");
  const double dampening = opt_double(a[5], 0, "dampening");
  const double wd = opt_double(a[6], 0, "weight_decay");
  const bool nesterov = opt_bool(a[7], false, "nesterov");
  const bool maximize = opt_bool(a[8], false, "maximize");
  const bool first = opt_bool(a[9], false, "first_step");
  run_maybe_nogil(s.numel, [&] {
    sgd_step_(s.v[0], s.v[1], s.v[2], lr, momentum, dampening, wd, nesterov,
              maximize, first);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_adam_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                      PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{
      "_adam_step",
      {"params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs",
       "state_steps", "lr", "beta1", "beta2", "eps", "weight_decay",
       "amsgrad", "maximize", "decoupled_weight_decay"},
      6};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 6, s);
  const double lr = opt_double(a[6], 1e-3, "lr");
  const double beta1 = opt_double(a[7], 0.9, "beta1");
  const double beta2 = opt_double(a[8], 0.999, "beta2");
  const double eps = opt_double(a[9], 1e-8, "eps");
  const double wd = opt_double(a[10], 0, "weight_decay");
  const bool amsgrad = opt_bool(a[11], false, "amsgrad");
  const bool maximize = opt_bool(a[12], false, "maximize");
  const bool decoupled = opt_bool(a[13], false, "decoupled_weight_decay");
  run_maybe_nogil(s.numel, [&] {
    adam_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], s.v[5], lr, beta1,
               beta2, eps, wd, amsgrad, maximize, decoupled);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_rmsprop_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{
      "_rmsprop_step",
      {"params", "grads", "square_avgs", "grad_avgs", "momentum_buffer_list",
       "state_steps", "lr", "alpha", "eps", "weight_decay", "momentum",
       "centered", "maximize"},
      6};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 6, s);
  const double lr = opt_double(a[6], 1e-2, "lr");
  const double alpha = opt_double(a[7], 0.99, "alpha");
  const double eps = opt_double(a[8], 1e-8, "eps");
  const double wd = opt_double(a[9], 0, "weight_decay");
  const double momentum = opt_double(a[10], 0, "momentum");
  const bool centered = opt_bool(a[11], false, "centered");
  const bool maximize = opt_bool(a[12], false, "maximize");
  run_maybe_nogil(s.numel, [&] {
    rmsprop_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], s.v[5], lr, alpha,
                  eps, wd, momentum, centered, maximize);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_adagrad_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{"_adagrad_step",
                            {"params", "grads", "state_sums", "state_steps",
                             "lr", "lr_decay", "weight_decay", "eps",
                             "maximize"},
                            4};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 4, s);
  const double lr = opt_double(a[4], 1e-2, "lr");
  const double lr_decay = opt_double(a[5], 0, "lr_decay");
  const double wd = opt_double(a[6], 0, "weight_decay");
  const double eps = opt_double(a[7], 1e-10, "eps");
  const bool maximize = opt_bool(a[8], false, "maximize");
  run_maybe_nogil(s.numel, [&] {
    adagrad_step_(s.v[0], s.v[1], s.v[2], s.v[3], lr, lr_decay, wd, eps,
                  maximize);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_adadelta_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{"_adadelta_step",
                            {"params", "grads", "square_avgs", "acc_deltas",
                             "state_steps", "lr", "rho", "eps",
                             "weight_decay", "maximize"},
                            5};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 5, s);
  const double lr = opt_double(a[5], 1.0, "lr");
  const double rho = opt_double(a[6], 0.9, "rho");
  const double eps = opt_double(a[7], 1e-6, "eps");
  const double wd = opt_double(a[8], 0, "weight_decay");
  const bool maximize = opt_bool(a[9], false, "maximize");
  run_maybe_nogil(s.numel, [&] {
    adadelta_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], lr, rho, eps, wd,
                   maximize);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_adamax_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{"_adamax_step",
                            {"params", "grads", "exp_avgs", "exp_infs",
                             "state_steps", "lr", "beta1", "beta2", "eps",
                             "weight_decay", "maximize"},
                            5};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 5, s);
  const double lr = opt_double(a[5], 2e-3, "lr");
  const double beta1 = opt_double(a[6], 0.9, "beta1");
  const double beta2 = opt_double(a[7], 0.999, "beta2");
  const double eps = opt_double(a[8], 1e-8, "eps");
  const double wd = opt_double(a[9], 0, "weight_decay");
  const bool maximize = opt_bool(a[10], false, "maximize");
  run_maybe_nogil(s.numel, [&] {
    adamax_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], lr, beta1, beta2,
                 eps, wd, maximize);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_nadam_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{
      "_nadam_step",
      {"params", "grads", "exp_avgs", "exp_avg_sqs", "mu_products",
       "state_steps", "lr", "beta1", "beta2", "eps", "weight_decay",
       "momentum_decay", "maximize", "decoupled_weight_decay"},
      6};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 6, s);
  const double lr = opt_double(a[6], 2e-3, "lr");
  const double beta1 = opt_double(a[7], 0.9, "beta1");
  const double beta2 = opt_double(a[8], 0.999, "beta2");
  const double eps = opt_double(a[9], 1e-8, "eps");
  const double wd = opt_double(a[10], 0, "weight_decay");
  const double md = opt_double(a[11], 4e-3, "momentum_decay");
  const bool maximize = opt_bool(a[12], false, "maximize");
  const bool decoupled = opt_bool(a[13], false, "decoupled_weight_decay");
  run_maybe_nogil(s.numel, [&] {
    nadam_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], s.v[5], lr, beta1,
                beta2, eps, wd, md, maximize, decoupled);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_radam_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{
      "_radam_step",
      {"params", "grads", "exp_avgs", "exp_avg_sqs", "state_steps", "lr",
       "beta1", "beta2", "eps", "weight_decay", "maximize",
       "decoupled_weight_decay"},
      5};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 5, s);
  const double lr = opt_double(a[5], 1e-3, "lr");
  const double beta1 = opt_double(a[6], 0.9, "beta1");
  const double beta2 = opt_double(a[7], 0.999, "beta2");
  const double eps = opt_double(a[8], 1e-8, "eps");
  const double wd = opt_double(a[9], 0, "weight_decay");
  const bool maximize = opt_bool(a[10], false, "maximize");
  const bool decoupled = opt_bool(a[11], false, "decoupled_weight_decay");
  run_maybe_nogil(s.numel, [&] {
    radam_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], lr, beta1, beta2,
                eps, wd, maximize, decoupled);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_asgd_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                      PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{
      "_asgd_step",
      {"params", "grads", "axs", "etas", "mus", "state_steps", "lr", "lambd",
       "alpha", "t0", "weight_decay", "maximize"},
      6};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 6, s);
  const double lr = opt_double(a[6], 1e-2, "lr");
  const double lambd = opt_double(a[7], 1e-4, "lambd");
  const double alpha = opt_double(a[8], 0.75, "alpha");
  const double t0 = opt_double(a[9], 1e6, "t0");
  const double wd = opt_double(a[10], 0, "weight_decay");
  const bool maximize = opt_bool(a[11], false, "maximize");
  run_maybe_nogil(s.numel, [&] {
    asgd_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], s.v[5], lr, lambd,
               alpha, t0, wd, maximize);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

PyObject* f_rprop_step(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  FASTT_PY_BEGIN
  static const OptimSig sig{
      "_rprop_step",
      {"params", "grads", "prevs", "step_sizes", "state_steps", "etaminus",
       "etaplus", "step_size_min", "step_size_max", "maximize"},
      5};
  PyObject* a[kMaxOptimArgs];
  parse_optim_args(sig, args, nargs, kwnames, a);
  ListSlots& s = slots();
  SlotsGuard guard{s};
  read_lists(sig, a, 5, s);
  const double etaminus = opt_double(a[5], 0.5, "etaminus");
  const double etaplus = opt_double(a[6], 1.2, "etaplus");
  const double lo = opt_double(a[7], 1e-6, "step_size_min");
  const double hi = opt_double(a[8], 50, "step_size_max");
  const bool maximize = opt_bool(a[9], false, "maximize");
  run_maybe_nogil(s.numel, [&] {
    rprop_step_(s.v[0], s.v[1], s.v[2], s.v[3], s.v[4], etaminus, etaplus,
                lo, hi, maximize);
  });
  Py_RETURN_NONE;
  FASTT_PY_END
}

}  // namespace

#define FASTT_OPTIM_KW(name, fn)                                           \
  {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
   METH_FASTCALL | METH_KEYWORDS, nullptr}

PyMethodDef g_optim_functions[] = {
    FASTT_OPTIM_KW("_sgd_step", f_sgd_step),
    FASTT_OPTIM_KW("_adam_step", f_adam_step),
    FASTT_OPTIM_KW("_rmsprop_step", f_rmsprop_step),
    FASTT_OPTIM_KW("_adagrad_step", f_adagrad_step),
    FASTT_OPTIM_KW("_adadelta_step", f_adadelta_step),
    FASTT_OPTIM_KW("_adamax_step", f_adamax_step),
    FASTT_OPTIM_KW("_nadam_step", f_nadam_step),
    FASTT_OPTIM_KW("_radam_step", f_radam_step),
    FASTT_OPTIM_KW("_asgd_step", f_asgd_step),
    FASTT_OPTIM_KW("_rprop_step", f_rprop_step),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace py
}  // namespace fastt
