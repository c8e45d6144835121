// torch's out= contract, for the binding and for C++ callers of ops that
// compute into a fresh tensor: no autograd through out=, one device, a
// result dtype castable to out's, and an empty out resized to the result
// (torch resizes a non-empty out of another shape with a warning; fastt
// refuses it, as the core _out ops do).
#pragma once
#include "../tensor.h"

namespace fastt {

// An empty out (numel 0) of another shape becomes a fresh tensor of `shape`
// with out's dtype and device (the handle is rebound, as torch's silent
// resize); any other out is returned unchanged for the op to check.
Tensor& resize_out(Tensor& out, IntList shape);
// The same, to the broadcast shape of a and b (computed only when out is
// empty; a RuntimeError naming `op` when they don't broadcast).
Tensor& resize_out(Tensor& out, const Tensor& a, const Tensor& b,
                   const char* op);

// Writes `result` into `out` with every check above, naming `op`.
Tensor& assign_out(Tensor& out, const Tensor& result, const char* op);

}  // namespace fastt
