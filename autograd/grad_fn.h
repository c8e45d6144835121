// The GradFn enum (one entry per backward formula: grad_fns.def, plus the
// Grad(...) rows of csrc/ops/elementwise.def) and what a recording saves.
// Ops include this, not node.h.
#pragma once
#include <cstdint>

namespace fastt {
namespace autograd {

enum class GradFn : uint16_t {
#define FASTT_GRAD_FN(name, str) name,
#include "grad_fns.def"
#undef FASTT_GRAD_FN
};
const char* grad_fn_name(GradFn fn);

// What an elementwise recording keeps for its formula (the rows' save).
enum class Save : uint8_t {
  None,   // nothing (neg, add, ...)
  In,     // the inputs
  Out,    // the result
  InOut,  // the inputs and the result
};

}  // namespace autograd
}  // namespace fastt
