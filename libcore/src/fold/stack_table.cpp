#include "fold/stack_table.h"

#include <algorithm>

#include "fold/col_context.h"
#include "gp/fold/stacks.h"

namespace gp::fold::detail {

uint32_t StackTable::frame(std::string_view name, model::FrameKind kind) {
  key_.assign(1, static_cast<char>(kind));
  key_.append(name);
  auto [id, inserted] = frame_ids_.try_insert(key_, static_cast<uint32_t>(names_.size()));
  if (inserted) {
    names_.emplace_back(name);
    kinds_.push_back(kind);
  }
  return *id;
}

uint32_t StackTable::sequence(std::span<const uint32_t> frames) {
  std::string_view key(reinterpret_cast<const char*>(frames.data()), frames.size_bytes());
  auto [id, inserted] = seq_ids_.try_insert(key, static_cast<uint32_t>(seq_begin_.size() - 1));
  if (inserted) {
    seq_frames_.insert(seq_frames_.end(), frames.begin(), frames.end());
    seq_begin_.push_back(static_cast<uint32_t>(seq_frames_.size()));
  }
  return *id;
}

void StackTable::add(uint32_t prefix, uint32_t stack, uint64_t count) {
  auto [value, inserted] = lines_.try_insert((static_cast<uint64_t>(prefix) << 32) | stack, count);
  if (!inserted) *value += count;
}

std::vector<StackTable::Line> StackTable::lines() const {
  std::vector<Line> out;
  out.reserve(lines_.size());
  lines_.for_each([&](uint64_t key, auto, uint64_t count) {
    out.push_back({static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key), count});
  });
  return out;
}

std::vector<std::pair<std::string, uint64_t>> text_lines(
    const StackTable& table, const std::vector<std::string>& frame_texts) {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::vector<StackTable::Line> lines = table.lines();
  out.reserve(lines.size());
  for (const StackTable::Line& l : lines) {
    std::string text;
    bool first = true;  // not text.empty(): a `.col` line may start with an empty container field
    for (uint32_t seq : {l.prefix, l.stack}) {
      for (uint32_t f : table.sequence_frames(seq)) {
        if (!first) text += ';';
        text += frame_texts[f];
        first = false;
      }
    }
    out.emplace_back(std::move(text), l.count);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t kept = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (kept > 0 && out[kept - 1].first == out[i].first) out[kept - 1].second += out[i].second;
    else if (kept++ != i) out[kept - 1] = std::move(out[i]);
  }
  out.resize(kept);
  return out;
}

std::vector<std::string> field_texts(const StackTable& table, bool kind_suffixes) {
  std::vector<std::string> out(table.frame_count());
  for (uint32_t id = 0; id < out.size(); ++id) {
    append_col_field(table.frame_name(id), out[id]);
    if (kind_suffixes) out[id] += kind_suffix(table.frame_kind(id));
  }
  return out;
}

}  // namespace gp::fold::detail
