#include "gp/cli/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>

#include "gp/cli/tool.h"
#include "gp/util/escape.h"

namespace gp::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRedrawInterval = std::chrono::milliseconds(200);

struct ProgressState {
  std::mutex mutex;
  bool shown = false;
  bool clear_at_exit_registered = false;
  Clock::time_point last_draw{};
};

ProgressState& state() {
  static ProgressState s;
  return s;
}

}  // namespace

namespace {

void draw(std::string_view text, bool rate_limited) {
  // Checked on each call, not once: --quiet is parsed after the first diagnostics can appear.
  if (quiet() || !is_terminal(STDERR_FILENO)) return;
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto now = Clock::now();
  if (rate_limited && s.shown && now - s.last_draw < kRedrawInterval) return;
  if (!s.shown && !s.clear_at_exit_registered) {
    s.clear_at_exit_registered = true;
    std::atexit([] { clear_progress(); });  // a tool that ends without a message leaves no line
  }
  std::string line = "\r" + program() + ": " + util::escape_for_terminal(text) + "\033[K";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
  s.shown = true;
  s.last_draw = now;
}

}  // namespace

void show_progress(std::string_view text) { draw(text, true); }
void show_step(std::string_view text) { draw(text, false); }

void clear_progress() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.shown) return;
  (void)!::write(STDERR_FILENO, "\r\033[K", 4);
  s.shown = false;
}

}  // namespace gp::cli
