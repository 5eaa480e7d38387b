// Shared pieces of the rbspy, phpspy and dotnet-trace adapters (spy_run.h).
#include "runtime/spies/spy_run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace gp::runtime::spies {

std::string ToolSearch::unavailable_reason(std::string_view tool) const {
  if (!path.empty()) return "";
  return std::string(tool) + " is not installed (not on " + searched + ")";
}

ToolSearch find_tool(std::string_view name, std::initializer_list<std::string_view> dirs) {
  ToolSearch s;
  s.searched = "PATH";
  s.path = find_program(name);
  const char* sep = ", nor in ";
  for (std::string_view dir : dirs) {
    (s.searched += sep) += dir;
    sep = ", ";
    if (!s.path.empty()) continue;
    std::string candidate = std::string(dir) + "/" + std::string(name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      s.path = candidate;
    }
  }
  return s;
}

int64_t whole_seconds(std::chrono::milliseconds duration) {
  // Rounded: the driver hands over the time left, a few milliseconds under the whole seconds.
  return std::max<int64_t>(1, (duration.count() + 500) / 1000);
}

std::string random_tag() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string tag(8, '0');
  uint64_t v = rng();
  for (char& c : tag) {
    c = kHex[v & 15];
    v >>= 4;
  }
  return tag;
}

std::optional<uint64_t> process_start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  // The comm (field 2) may hold spaces and parentheses: fields restart after the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3 && field == "Z") return std::nullopt;  // a zombie has exited
    if (i == 22) {
      uint64_t ticks = 0;
      auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), ticks);
      if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
      return ticks;
    }
  }
  return std::nullopt;
}

bool same_process_alive(pid_t pid, uint64_t start_time) {
  auto now = process_start_time(pid);
  return now && *now == start_time;
}

std::optional<std::string> read_output_file(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data(max_bytes, '\0');
  in.read(data.data(), static_cast<std::streamsize>(max_bytes));
  data.resize(static_cast<size_t>(in.gcount()));
  return data;
}

namespace {

std::string first_line(std::string_view text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return "";
  text = text.substr(start);
  std::string_view line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  constexpr size_t kMax = 200;  // one frame, not a page of backtrace
  return std::string(line.substr(0, kMax));
}

}  // namespace

std::string failure_reason(std::string_view tool, const RunResult& run, bool target_alive) {
  if (!target_alive) return "process went down during profiling";
  std::string reason(tool);
  if (run.timed_out) {
    reason += " timed out after " + std::to_string(run.elapsed.count() / 1000) + " s";
  } else {
    reason += " " + run.describe();
  }
  std::string why = first_line(run.err);
  if (why.empty()) why = first_line(run.out);
  if (!why.empty()) reason += ": " + why;
  return reason;
}

void report_problems(std::string_view tool, const SpyOutput& out, Profile& profile) {
  if (out.skipped == 0) return;
  profile.warnings.push_back(std::string(tool) + " output: skipped " + std::to_string(out.skipped) +
                             " malformed part" + (out.skipped == 1 ? "" : "s") +
                             " (first: " + out.first_problem + ")");
}

std::optional<std::string> run_spy(const SpyRun& run, const Target& target, std::stop_token stop,
                                   Profile& profile) {
  std::string tool(run.tool);
  auto started = process_start_time(target.pid);
  if (!started) {
    profile.error_frame = error_frame("process went down during profiling");
    return std::nullopt;
  }
  auto result = run_profiler(run.options, stop);
  auto text = read_output_file(run.output_path, run.max_output);
  std::error_code ignored;
  std::filesystem::remove(run.output_path, ignored);
  if (!result) {
    profile.error_frame = error_frame("cannot run " + tool + ": " + result.error().message);
    return std::nullopt;
  }
  if (!result->success() && !(result->stopped && text)) {
    bool alive = same_process_alive(target.pid, *started);
    profile.error_frame = error_frame(failure_reason(tool, *result, alive));
    return std::nullopt;
  }
  if (!text) {
    profile.warnings.push_back(tool + " wrote no output file '" + run.output_path + "'");
    return std::string();
  }
  return text;
}

}  // namespace gp::runtime::spies
