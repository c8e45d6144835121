// GradCounter (csrc/distributed/reducer.h).
#include "csrc/distributed/reducer.h"

#include <algorithm>

#include "csrc/autograd.h"
#include "csrc/errors.h"
#include "csrc/ops.h"

namespace fastt {
namespace distributed {

GradCounter::GradCounter(std::vector<Tensor> params,
                         std::vector<int64_t> group_of,
                         std::vector<Tensor> views, bool copy, bool as_view,
                         Callback on_ready, Callback on_twice)
    : params_(std::move(params)), group_of_(std::move(group_of)),
      views_(std::move(views)), copy_(copy), as_view_(as_view),
      on_ready_(std::move(on_ready)), on_twice_(std::move(on_twice)) {
  const size_t n = params_.size();
  FASTT_CHECK(group_of_.size() == n && views_.size() == n, ValueError,
              "GradCounter: {} parameters, {} groups, {} views", n,
              group_of_.size(), views_.size());
  for (size_t i = 0; i < n; ++i) {
    int64_t g = group_of_[i];
    FASTT_CHECK(g >= 0, ValueError, "GradCounter: negative group");
    if (size_t(g) >= counts_.size()) counts_.resize(size_t(g) + 1, 0);
    ++counts_[size_t(g)];
    FASTT_CHECK(!copy_ || views_[i].defined(), ValueError,
                "GradCounter: parameter {} has no bucket view", i);
  }
  pending_ = counts_;
  done_.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    hooks_.push_back(register_post_accumulate_grad_hook(
        params_[i], [this, i](const Tensor&) {
          if (expect_)
            mark(int64_t(i), 1);
          else if (finished_ && done_[i])
            on_twice_(int64_t(i));
        }));
}

GradCounter::~GradCounter() { remove_hooks(); }

void GradCounter::remove_hooks() {
  for (size_t i = 0; i < hooks_.size(); ++i)
    remove_hook(params_[i], hooks_[i]);
  hooks_.clear();
}

void GradCounter::arm(bool expect) {
  expect_ = expect;
  finished_ = false;
  if (!expect) return;
  std::copy(counts_.begin(), counts_.end(), pending_.begin());
  std::fill(done_.begin(), done_.end(), 0);
  groups_left_ = counts_.size();
}

bool GradCounter::begin(bool expect) {
  if (expect_ && any_done()) return true;
  arm(expect);
  return false;
}

bool GradCounter::any_done() const {
  return std::find(done_.begin(), done_.end(), 1) != done_.end();
}

void GradCounter::mark(int64_t i, int how) {
  FASTT_CHECK(i >= 0 && size_t(i) < params_.size(), IndexError,
              "GradCounter.mark: parameter {} out of range", i);
  if (done_[size_t(i)]) {
    on_twice_(i);  // raises
    return;
  }
  done_[size_t(i)] = int8_t(how);
  if (copy_) {
    const Tensor& p = params_[size_t(i)];
    Tensor& view = views_[size_t(i)];
    Tensor g = grad(p);
    if (!g.defined()) {
      view.zero_();  // unused here: zeros join the reduction
    } else if (!as_view_) {
      view.copy_(g);
    } else if (g.data_ptr() != view.data_ptr()) {
      view.copy_(g);
      set_grad(p, view);  // gradient_as_bucket_view: .grad IS the view
    }
  }
  int64_t group = group_of_[size_t(i)];
  if (--pending_[size_t(group)] == 0) {
    if (--groups_left_ == 0) {  // the step is complete
      expect_ = false;
      finished_ = true;
    }
    if (on_ready_) on_ready_(group);
  }
}

}  // namespace distributed
}  // namespace fastt
