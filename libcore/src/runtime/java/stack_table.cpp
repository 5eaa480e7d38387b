// Summing identical stacks (see stack_table.h).
#include "stack_table.h"

namespace gp::runtime::java {
namespace {

// Names cannot hold '\n' or '\0' in practice; they separate the key's fields.
std::string key_of(const Stack& s) {
  std::string key = std::to_string(s.tid);
  key += '\0';
  key += s.thread_name;
  for (const Frame& f : s.frames) {
    key += '\n';
    key += std::to_string(static_cast<int>(f.kind));
    key += ' ';
    key += std::to_string(f.line);
    key += ' ';
    key += f.name;
  }
  return key;
}

}  // namespace

void StackTable::add(Stack stack) {
  samples_ += stack.count;
  auto [it, fresh] = index_.try_emplace(key_of(stack), stacks_.size());
  if (fresh) {
    stacks_.push_back(std::move(stack));
  } else {
    stacks_[it->second].count += stack.count;
  }
}

std::vector<Stack> StackTable::take() {
  index_.clear();
  samples_ = 0;
  return std::move(stacks_);
}

}  // namespace gp::runtime::java
