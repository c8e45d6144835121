// The per-parameter half of DistributedDataParallel's reducer
// (python/fastt/nn/parallel/distributed.py holds the rest): one C++
// post-accumulate-grad hook per parameter copies the fresh .grad into its
// bucket view and counts its group down; a group's last parameter calls
// on_ready(group) once. That keeps the per-parameter cost of a step in
// C++ (tens of ns) and leaves one Python call per bucket.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "csrc/tensor.h"

namespace fastt {
namespace distributed {

class GradCounter {
 public:
  using Callback = std::function<void(int64_t)>;
  // views[i]: parameter i's place in its bucket (undefined when gradients
  // are not copied); copy: copy gradients into the views; as_view: make
  // .grad the view itself (gradient_as_bucket_view). An empty on_ready:
  // nothing to do per group (a world of one).
  GradCounter(std::vector<Tensor> params, std::vector<int64_t> group_of,
              std::vector<Tensor> views, bool copy, bool as_view,
              Callback on_ready, Callback on_twice);
  ~GradCounter();
  GradCounter(const GradCounter&) = delete;
  GradCounter& operator=(const GradCounter&) = delete;

  // A new step: every group waits for all its parameters again. `expect`
  // false: hooks do nothing until the next arm (no_sync, eval).
  void arm(bool expect);
  bool expecting() const { return expect_; }
  // A forward's check and arm in one call: true (and nothing armed) when
  // the last armed step saw some hooks but not all (its backward did not
  // reach every parameter), else arm(expect) and false.
  bool begin(bool expect);
  // Parameter i is ready: 1 from its hook, 2 marked unused (its .grad, or
  // zeros, go into the bucket).
  void mark(int64_t i, int how);
  bool any_done() const;
  const std::vector<int8_t>& done() const { return done_; }
  void remove_hooks();

 private:
  std::vector<Tensor> params_;
  std::vector<int64_t> group_of_;
  std::vector<Tensor> views_;
  std::vector<int64_t> counts_, pending_;
  size_t groups_left_ = 0;  // the last one disarms before its callback
  // The armed step completed: a hook firing now belongs to that step
  // (a parameter marked unused that got a gradient after all, a second
  // backward) and is an error; cleared by arm().
  bool finished_ = false;
  std::vector<int8_t> done_;
  std::vector<int64_t> hooks_;
  bool copy_, as_view_;
  bool expect_ = false;
  Callback on_ready_, on_twice_;
};

}  // namespace distributed
}  // namespace fastt
