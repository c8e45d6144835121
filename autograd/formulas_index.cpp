// Recording and backward formulas of the indexing and shape ops
// (csrc/ops/index.h): cat, index_select, gather, scatter, ... Same rules as
// formulas.cpp; apply_formula() falls through to apply_index_formula().
#include "autograd/functions.h"
#include "autograd/node.h"
#include "csrc/ops.h"

namespace fastt {
namespace autograd {

bool apply_index_formula(Node& n, Tensor* go, Tensor* gi) {
  (void)go;
  (void)gi;
  switch (n.fn) {
    default:
      return false;
  }
}

}  // namespace autograd
}  // namespace fastt
