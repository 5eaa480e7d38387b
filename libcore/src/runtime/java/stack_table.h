#pragma once
// Sums identical stacks (same thread, same frames) as the Java profilers' outputs are read, so
// a long JFR recording becomes one Stack per distinct (tid, frames) with a count.

#include <map>
#include <string>
#include <vector>

#include "gp/runtime/adapter.h"

namespace gp::runtime::java {

class StackTable {
 public:
  void add(Stack stack);
  size_t size() const { return stacks_.size(); }
  uint64_t samples() const { return samples_; }
  // The stacks in first-seen order.
  std::vector<Stack> take();

 private:
  std::map<std::string, size_t> index_;
  std::vector<Stack> stacks_;
  uint64_t samples_ = 0;
};

}  // namespace gp::runtime::java
