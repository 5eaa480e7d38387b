#pragma once
// A progress line on stderr for work that takes seconds ("gp-symbolize: 12 of 40 binaries"),
// redrawn in place. Shown only when stderr is a terminal and the tool is not --quiet (never in a
// pipe or a log), redrawn at most every 200 ms, and cleared before any diagnostic, so it never
// shares a line with one. Safe to call from worker threads.

#include <string_view>

namespace gp::cli {

// Redraws the line with `text` unless it was drawn less than 200 ms ago.
void show_progress(std::string_view text);
// Redraws the line with `text` at once: for a new step of work ("symbolizing"), which the rate
// limit must not hide behind the previous step's line.
void show_step(std::string_view text);
// Erases the line if it is shown (before a message, and when the work is done).
void clear_progress();

}  // namespace gp::cli
