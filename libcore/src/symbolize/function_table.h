#pragma once
// Interning resolved names into a session's function table, shared by symbolize_session and
// StreamSymbolizer (private to src/symbolize).

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "gp/model/session.h"
#include "gp/symbolize/module_resolver.h"

namespace gp::symbolize {

// Interns functions into the session's table (reusing existing equal entries). The set holds
// function ids and is searched with views, so a lookup builds no key string.
class FunctionTable {
 public:
  explicit FunctionTable(model::Session& s)
      : s_(s), index_(s.functions.size() * 2 + 64, Hash{&s}, Equal{&s}) {
    for (size_t i = 0; i < s.functions.size(); ++i)
      if (index_.find(view(&s, i + 1)) == index_.end())
        index_.insert(i + 1);  // the first of equals
  }
  // Indexes function `id` (already in the table, e.g. copied from the input) for later interns;
  // an equal entry indexed before it stays the one interns return.
  void add_existing(uint64_t id) {
    if (index_.find(view(&s_, id)) == index_.end()) index_.insert(id);
  }
  uint64_t intern(std::string_view name, std::string_view system_name, std::string_view file,
                  uint32_t line) {
    View v{name, system_name, file, line};
    auto it = index_.find(v);
    if (it != index_.end()) return *it;
    s_.functions.push_back(
        {std::string(name), std::string(system_name), std::string(file), line, {}});
    index_.insert(s_.functions.size());
    return s_.functions.size();
  }

 private:
  struct View {
    std::string_view name, system_name, file;
    uint32_t line;
    bool operator==(const View&) const = default;
  };
  static View view(const model::Session* s, uint64_t id) {
    const auto& f = s->functions[id - 1];
    return {f.name, f.system_name, f.file_name, f.start_line};
  }
  struct Hash {
    using is_transparent = void;
    const model::Session* s;
    size_t operator()(const View& v) const {
      std::hash<std::string_view> h;
      size_t x = h(v.name);
      x = x * 31 + h(v.system_name);
      x = x * 31 + h(v.file);
      return x * 31 + v.line;
    }
    size_t operator()(uint64_t id) const { return (*this)(view(s, id)); }
  };
  struct Equal {
    using is_transparent = void;
    const model::Session* s;
    bool operator()(uint64_t a, uint64_t b) const { return a == b; }
    bool operator()(const View& a, uint64_t b) const { return a == view(s, b); }
    bool operator()(uint64_t a, const View& b) const { return view(s, a) == b; }
  };
  model::Session& s_;
  std::unordered_set<uint64_t, Hash, Equal> index_;
};

// slots: function id per Frame::function_slot of the job's resolver (0 = not interned yet).
inline void apply_frames(FunctionTable& functions, std::vector<uint64_t>& slots,
                         model::Location& loc, const std::vector<Frame>& frames) {
  loc.lines.clear();
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    model::Line line;
    uint64_t* cached = nullptr;
    if (f.function_slot != 0) {
      if (slots.size() <= f.function_slot) slots.resize(f.function_slot + 1, 0);
      cached = &slots[f.function_slot];
    }
    line.function_id = cached != nullptr && *cached != 0
                           ? *cached
                           : functions.intern(f.name, f.system_name, f.decl_file, f.decl_line);
    if (cached != nullptr) *cached = line.function_id;
    line.line = f.line;
    line.column = f.column;
    line.inlined = i > 0;
    loc.lines.push_back(line);
  }
  loc.status = model::SymbolStatus::resolved;
}

inline void apply_name(FunctionTable& functions, model::Location& loc, const std::string& name) {
  loc.lines.assign(1, model::Line{functions.intern(name, {}, {}, 0), 0, 0, false});
  loc.status = model::SymbolStatus::resolved;
}

}  // namespace gp::symbolize
