// phpspy's default output → stacks of one process (spy_output.h).
#include <charconv>
#include <unordered_map>

#include "runtime/spies/spy_output.h"
#include "runtime/spies/text_lines.h"

namespace gp::runtime::spies {
namespace {

bool parse_int(std::string_view s, long long& v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// One block being read: frames leaf first (phpspy's depth order) and its "# pid".
struct Block {
  std::vector<std::string_view> frames;
  long long pid = -1;
  bool comments = false;
  std::string bad;  // why the block is unusable, empty when fine
  size_t first_line = 0;
};

void read_line(Block& b, std::string_view line) {
  if (!b.bad.empty()) return;
  if (line.front() == '#') {
    b.comments = true;
    constexpr std::string_view kPid = "# pid = ";
    if (line.starts_with(kPid) && !parse_int(line.substr(kPid.size()), b.pid)) {
      b.bad = "bad pid line '" + std::string(line) + "'";
    }
    return;
  }
  size_t space = line.find(' ');
  long long depth = -1;
  if (space == std::string_view::npos || !parse_int(line.substr(0, space), depth)) {
    b.bad = "not a frame line '" + std::string(line) + "'";
  } else if (depth != static_cast<long long>(b.frames.size())) {
    b.bad = "frame depth " + std::to_string(depth) + " where " + std::to_string(b.frames.size()) +
            " was expected";
  } else if (space + 1 >= line.size()) {
    b.bad = "empty frame";
  } else {
    b.frames.push_back(line.substr(space + 1));
  }
}

class Collector {
 public:
  Collector(PhpspyOutput& out, pid_t pid) : out_(out), pid_(pid) {}

  void finish(const Block& b) {
    std::string at = "block at line " + std::to_string(b.first_line) + ": ";
    if (!b.bad.empty()) return out_.problem(at + b.bad);
    if (b.frames.empty()) return out_.problem(at + "no frames");
    if (b.pid < 0) {
      ++out_.without_pid;
    } else if (b.pid != pid_) {
      ++out_.other_pids;
      return;
    }
    key_.clear();
    for (std::string_view f : b.frames) (key_ += f) += '\n';
    auto [it, inserted] = index_.try_emplace(key_, out_.stacks.size());
    if (!inserted) {
      ++out_.stacks[it->second].count;
      return;
    }
    Stack& st = out_.stacks.emplace_back();
    st.count = 1;
    for (auto f = b.frames.rbegin(); f != b.frames.rend(); ++f)
      st.frames.push_back(parse_phpspy_frame(*f));
  }

 private:
  PhpspyOutput& out_;
  pid_t pid_;
  std::string key_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace

Frame parse_phpspy_frame(std::string_view text) {
  Frame f;
  f.kind = model::FrameKind::php;
  f.name = std::string(text);
  // "[CLASS::]FUNC FILE:LINE": PHP names hold no spaces, so the first space ends the name; the
  // file may hold spaces and colons, so the last ':' starts the line (-1 for internals).
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return f;
  std::string_view where = text.substr(space + 1);
  size_t colon = where.rfind(':');
  long long line = 0;
  if (colon != std::string_view::npos && parse_int(where.substr(colon + 1), line)) {
    where = where.substr(0, colon);
  } else {
    line = 0;
  }
  if (where != "<internal>") f.file = std::string(where);
  f.line = line > 0 && line <= UINT32_MAX ? static_cast<uint32_t>(line) : 0;
  return f;
}

PhpspyOutput parse_phpspy(std::string_view text, pid_t pid) {
  PhpspyOutput out;
  Collector collector(out, pid);
  Block block;
  bool open = false;
  size_t number = 0;
  for_each_line(text, [&](std::string_view line) {
    ++number;
    if (line.empty()) {
      if (open) collector.finish(block);
      open = false;
      return;
    }
    if (!open) {
      block = Block{};
      block.first_line = number;
      open = true;
    }
    read_line(block, line);
  });
  // Every block ends with an empty line; one that does not was cut when phpspy stopped.
  if (open) out.problem("block at line " + std::to_string(block.first_line) + ": cut short");
  return out;
}

}  // namespace gp::runtime::spies
