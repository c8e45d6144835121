// Formula functions: one per GradFn declared by an elementwise row
// (Grad(...) in csrc/ops/elementwise.def), written as FASTT_FORMULA(Name)
// in a family file (formulas_elementwise.cpp) and found by apply_formula
// through a table indexed by GradFn. A row without its formula does not
// link.
#pragma once
#include "autograd/node.h"

namespace fastt {
namespace autograd {

using Formula = void (*)(Node& n, Tensor* grad_outputs, Tensor* grad_inputs);
#define FASTT_FORMULA(name) \
  void formula_##name(Node& n, Tensor* go, Tensor* gi)
#define FASTT_ROW_GRAD_FN(name) FASTT_FORMULA(name);
#define FASTT_GRAD_FN(name, str)
#include "grad_fns.def"
#undef FASTT_GRAD_FN
#undef FASTT_ROW_GRAD_FN

// A gradient summed to an input's shape (undoing broadcasting) and cast
// back to its dtype.
inline Tensor fit(const Tensor& g, IntList shape, DType dt) {
  Tensor r = sum_to(g, shape);
  return r.dtype() == dt ? r : r.to(dt);
}

}  // namespace autograd
}  // namespace fastt
