// Custom nodes: a backward written by the user (torch.autograd.Function in
// Python, CustomBackward in C++) recorded as one node of the tape, and the
// checks torch's engine makes on what it returns (count, shape, dtype,
// device of each gradient).
#include "autograd/formulas.h"
#include "autograd/functions.h"
#include "autograd/node.h"
#include "csrc/ops.h"

namespace fastt {
namespace autograd {
namespace {

CustomInfo::Meta meta_of(const Tensor& t) {
  CustomInfo::Meta m;
  if (!t.defined()) return m;
  m.defined = true;
  m.dtype = t.dtype();
  m.device = t.device();
  m.sizes.assign(t.sizes().begin(), t.sizes().end());
  return m;
}

bool contains(const std::vector<Tensor>& v, const Tensor& t) {
  for (const Tensor& x : v)
    if (x.defined() && x.impl() == t.impl()) return true;
  return false;
}

// torch's is_expandable_to: g's shape broadcasts to... the input's shape
// when summed (the gradient of a broadcast input).
bool expandable(IntList from, IntList to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != to[lead + d] && from[d] != 1) return false;
  return true;
}

}  // namespace

FASTT_FORMULA(Custom) {
  CustomInfo& c = *n.extra->custom;
  std::vector<Tensor> grads(n.num_outputs);
  for (size_t k = 0; k < grads.size(); ++k) {
    grads[k] = go[k];
    if (!grads[k].defined() && c.materialize_grads && k < c.outputs.size() &&
        c.outputs[k].defined) {
      const CustomInfo::Meta& m = c.outputs[k];
      grads[k] = zeros(m.sizes, m.dtype, m.device);
    }
  }
  if (n.released && c.num_saved > 0) (void)n.unpack(0);  // freed: torch's error
  std::vector<Tensor> saved(n.saved.size());
  for (size_t i = 0; i < saved.size(); ++i) saved[i] = n.unpack(i);
  std::vector<Tensor> r = c.fn->backward(std::move(grads), std::move(saved));
  const size_t nin = n.next.size();
  FASTT_CHECK(r.size() == nin, RuntimeError,
              "function {} returned an incorrect number of gradients "
              "(expected {}, got {})",
              c.name, nin, r.size());
  for (size_t i = 0; i < nin; ++i) {
    if (!n.needs(i) || !r[i].defined()) continue;
    const CustomInfo::Meta& m = c.inputs[i];
    Tensor g = std::move(r[i]);
    if (!g.sizes().equals(m.sizes)) {
      FASTT_CHECK(expandable(m.sizes, g.sizes()), RuntimeError,
                  "Function {} returned an invalid gradient at index {} - "
                  "got {} but expected shape compatible with {}",
                  c.name, i, shape_str(g.sizes()), shape_str(m.sizes));
      g = sum_to(g, m.sizes);
    }
    FASTT_CHECK(g.device() == m.device, RuntimeError,
                "Function {} returned an invalid gradient at index {} - "
                "expected device {} but got {}",
                c.name, i, m.device.str(), g.device().str());
    if (g.dtype() != m.dtype) g = g.to(m.dtype);
    gi[i] = std::move(g);
  }
}

}  // namespace autograd

using namespace autograd;

std::vector<Tensor> record_custom(std::shared_ptr<CustomBackward> fn,
                                  CustomRecord r) {
  FASTT_CHECK(fn != nullptr, ValueError, "record_custom: null backward");
  for (const Tensor& d : r.dirty) {
    FASTT_CHECK(d.defined() && contains(r.inputs, d), RuntimeError,
                "{}: mark_dirty only accepts input tensors, but one of the "
                "dirty tensors isn't one",
                r.name);
    FASTT_CHECK(contains(r.outputs, d), RuntimeError,
                "{}: Some elements marked as dirty during the forward "
                "method were not returned as output. The inputs that are "
                "modified inplace must all be outputs of the Function.",
                r.name);
  }
  // torch counts the Function's write as one more version of each dirty
  // tensor.
  for (const Tensor& d : r.dirty) d.storage()->bump_version();
  bool any = false;
  if (grad_enabled())
    for (const Tensor& t : r.inputs) any = any || needs_grad(t);
  std::vector<Tensor> outs(r.outputs.size());
  if (!any) {
    // Nothing to record; a dirty input keeps its history, a new tensor
    // none.
    for (size_t k = 0; k < outs.size(); ++k) outs[k] = r.outputs[k];
    return outs;
  }
  for (const Tensor& d : r.dirty) check_inplace(d, r.name.c_str());

  NodeRef node = make_node(GradFn::Custom, r.inputs);
  node->num_outputs = uint16_t(std::max<size_t>(r.outputs.size(), 1));
  auto info = std::make_unique<CustomInfo>();
  info->fn = std::move(fn);
  info->name = r.name;
  info->materialize_grads = r.materialize_grads;
  for (const Tensor& t : r.inputs) info->inputs.push_back(meta_of(t));
  for (const Tensor& t : r.outputs) info->outputs.push_back(meta_of(t));
  node->extra = new Node::Extra;
  node->extra->custom = std::move(info);

  for (size_t k = 0; k < outs.size(); ++k) {
    Tensor o = r.outputs[k];
    if (!o.defined()) continue;
    if (contains(r.non_differentiable, o) ||
        !(is_floating(o.dtype()) || is_complex(o.dtype()))) {
      outs[k] = o;
      continue;
    }
    const uint16_t nr = uint16_t(k);
    if (contains(r.dirty, o)) {
      // Modified in place: the input itself takes the history (its base's
      // through CopySlices when it is a view).
      Tensor h = o.alias();
      set_history(h, node.get(), nr);
      commit_inplace(o, h);
      outs[k] = o;
    } else if (contains(r.inputs, o)) {
      Tensor a = o.alias();  // torch's view_as: a new tensor with history
      set_history(a, node.get(), nr);
      outs[k] = std::move(a);
    } else {
      set_history(o, node.get(), nr);
      outs[k] = std::move(o);
    }
  }
  // Saved after the outputs have their history, so an output is saved as
  // the node's own (no cycle; history restored on unpack).
  for (size_t i = 0; i < r.save.size(); ++i) {
    const Tensor& t = r.save[i];
    int64_t out_nr = -1;
    for (size_t k = 0; k < outs.size() && t.defined(); ++k)
      if (outs[k].defined() && (outs[k].impl() == t.impl() ||
                                r.outputs[k].impl() == t.impl()) &&
          outs[k].impl()->grad_fn == node.get())
        out_nr = int64_t(k);
    if (out_nr >= 0)
      node->save(i, outs[size_t(out_nr)], true, uint16_t(out_nr));
    else
      node->save(i, t);
  }
  if (r.save.empty()) node->saved.clear();
  node->extra->custom->num_saved = r.save.size();
  return outs;
}

}  // namespace fastt
