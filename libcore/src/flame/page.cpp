#include "gp/flame/page.h"

#include "gp/flame/json.h"

namespace gp::flame {
namespace {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string config_json(const PageOptions& options) {
  std::string json = "{\"title\":" + json_string(options.title);
  json += ",\"subtitle\":" + json_string(options.subtitle);
  json += ",\"inverted\":";
  json += options.inverted ? "true" : "false";
  json += ",\"seed\":" + std::to_string(options.colour_seed);
  json += ",\"generated\":" + json_string(options.generated);
  json += ",\"source\":" + json_string(options.source);
  json += ",\"baseSource\":" + json_string(options.base_source);
  json += "}";
  return json;
}

}  // namespace

// Placeholders are written `{{NAME}}`; the template holds each of them exactly once, in the
// order handled here, so the page is streamed out without building it in memory.
void write_page(std::ostream& out, const FlameTree& tree, const PageOptions& options) {
  const std::string_view page = page_template();
  size_t at = 0;
  auto copy_until = [&](std::string_view placeholder) {
    const size_t found = page.find(placeholder, at);
    const size_t stop = found == std::string_view::npos ? page.size() : found;
    out.write(page.data() + at, static_cast<std::streamsize>(stop - at));
    at = found == std::string_view::npos ? page.size() : found + placeholder.size();
  };
  copy_until("{{TITLE}}");
  out << html_escape(options.title);
  copy_until("{{CONFIG}}");
  out << config_json(options);
  copy_until("{{DATA}}");
  write_tree_json(out, tree);
  out.write(page.data() + at, static_cast<std::streamsize>(page.size() - at));
}

}  // namespace gp::flame
