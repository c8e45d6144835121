// Formula functions: one per GradFn, i.e. per row of grad_fns.def (the
// GradFns that the Grad(...) rows of csrc/ops/elementwise.def declare
// included), written as FASTT_FORMULA(Name) in the family's file
// (formulas_elementwise.cpp, formulas_reduce.cpp, formulas_linalg.cpp,
// formulas_view.cpp, formulas_index.cpp, formulas_nn.cpp) and found by
// apply_formula through a table indexed by GradFn (formulas.cpp). A GradFn
// without its formula does not link.
#pragma once
#include "autograd/node.h"

namespace fastt {
namespace autograd {

using Formula = void (*)(Node& n, Tensor* grad_outputs, Tensor* grad_inputs);
#define FASTT_FORMULA(name) \
  void formula_##name(Node& n, Tensor* go, Tensor* gi)
#define FASTT_GRAD_FN(name, str) FASTT_FORMULA(name);
#include "grad_fns.def"
#undef FASTT_GRAD_FN

// A gradient summed to an input's shape (undoing broadcasting) and cast
// back to its dtype.
inline Tensor fit(const Tensor& g, IntList shape, DType dt) {
  Tensor r = sum_to(g, shape);
  return r.dtype() == dt ? r : r.to(dt);
}

}  // namespace autograd
}  // namespace fastt
