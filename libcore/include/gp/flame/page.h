#pragma once
// The self-contained flamegraph page: template.html (compiled into libcore) filled with the
// title, the settings and the tree's JSON. The page needs no network: the script, the style
// and the data are all inline, and the frames are drawn on one canvas.

#include <cstdint>
#include <ostream>
#include <string>

#include "gp/flame/tree.h"

namespace gp::flame {

struct PageOptions {
  std::string title = "Flame Graph";
  std::string subtitle;
  bool inverted = false;     // icicle: root at the top (gProfiler's layout)
  uint32_t colour_seed = 0;  // varies the shades; 0 = pure hash of the name
  std::string generated;     // shown in the footer when not empty (e.g. a UTC time)
  std::string source;        // the input's name, shown in the footer
  std::string base_source;   // differential pages: the base's name
};

// Writes the whole page. Output depends only on `tree` and `options`.
void write_page(std::ostream& out, const FlameTree& tree, const PageOptions& options);

// The HTML template (for tests).
std::string_view page_template();

}  // namespace gp::flame
