// Options from the environment and config files, configargparse's way (see env_config.h).
#include "gp/cli/env_config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "gp/util/json.h"

namespace gp::cli {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// "[a, b]" or the JSON array ["a", 2]: its elements as text.
std::vector<std::string> list_elements(const std::string& value) {
  std::vector<std::string> out;
  if (auto parsed = json::parse(value); parsed && parsed->is_array()) {
    for (const json::Value& v : parsed->items)
      out.push_back(v.is_string() || v.is_number() ? v.text : json::dump(v));
    return out;
  }
  std::string inner = value.substr(1, value.size() - 2);
  std::stringstream ss(inner);
  for (std::string part; std::getline(ss, part, ',');) out.push_back(trim(part));
  if (!inner.empty() && inner.back() == ',') out.push_back("");
  return out;
}

bool is_list_text(const std::string& v) {
  return v.size() >= 2 && v.front() == '[' && v.back() == ']';
}

bool is_flag(const CLI::Option& o) {
  return o.get_type_size_max() == 0 || o.get_expected_max() == 0;
}
bool takes_many(const CLI::Option& o) {
  return o.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll && !is_flag(o);
}

std::vector<std::string> spellings(const CLI::Option& o) {
  std::vector<std::string> out;
  for (const auto& l : o.get_lnames()) out.push_back("--" + l);
  for (const auto& s : o.get_snames()) out.push_back("-" + s);
  return out;
}

// configargparse's test: an argument equal to one of the option's spellings, or "--name=...".
bool on_command_line(const std::vector<std::string>& args, const CLI::Option& o) {
  auto names = spellings(o);
  for (const std::string& a : args) {
    if (a == "--") break;
    std::string name = a.size() > 1 && a[0] == '-' ? a.substr(0, a.find('=')) : a;
    if (std::find(names.begin(), names.end(), name) != names.end()) return true;
  }
  return false;
}

bool settable(const CLI::Option& o) {
  if (o.get_lnames().empty() || o.get_group().empty()) return false;  // positional or hidden
  const std::string& first = o.get_lnames().front();
  return first != "help" && first != "help-all" && first != "version";
}

// The arguments one setting stands for; `where` names it in errors ("GPROFILER_X",
// "config file 'f' line 3: 'x'").
Result<std::vector<std::string>> to_arguments(const CLI::Option& o,
                                              const std::vector<std::string>& values, bool list,
                                              const std::string& where) {
  const std::string key = "--" + o.get_lnames().front();
  std::vector<std::string> args;
  if (is_flag(o)) {
    std::string v = lower(values.empty() ? "" : values.front());
    if (list || !(v == "true" || v == "yes" || v == "1" || v == "false" || v == "no" || v == "0"))
      return make_error("unexpected value for " + where + ": '" +
                        (values.empty() ? "" : values.front()) +
                        "'. Expecting 'true', 'false', 'yes', 'no', '1' or '0'");
    if (v == "true" || v == "yes" || v == "1") args.push_back(key);
    return args;
  }
  if (list && !takes_many(o))
    return make_error(where + " can't be set to a list: " + key + " takes one value");
  for (const std::string& v : values) args.push_back(key + "=" + v);
  return args;
}

const CLI::Option* find_config_key(const CLI::App& app, const std::string& key) {
  std::string bare = key.rfind("--", 0) == 0 ? key.substr(2) : key;
  for (const CLI::Option* o : app.get_options()) {
    if (!settable(*o)) continue;
    const auto& l = o->get_lnames();
    if (std::find(l.begin(), l.end(), bare) != l.end()) return o;
  }
  return nullptr;
}

Result<std::string> read_file(const std::string& path, bool must_exist, bool& exists) {
  struct stat st {};
  exists = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (!exists) {
    if (!must_exist) return std::string();
    return make_error("config file not found: '" + path + "'");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof())
    return make_error("cannot read config file '" + path + "': " + ::strerror(errno));
  return ss.str();
}

// The files --config names on the command line, in order.
std::vector<std::string> user_config_files(const std::vector<std::string>& args,
                                           const std::string& option) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == option && i + 1 < args.size()) out.push_back(args[++i]);
    else if (args[i].rfind(option + "=", 0) == 0) out.push_back(args[i].substr(option.size() + 1));
  }
  return out;
}

}  // namespace

Result<std::vector<ConfigItem>> parse_config_text(std::string_view text, std::string_view name) {
  // key, then optionally a separator (':', '=' or blanks) and a value that may be quoted, then
  // optionally a comment that starts with a blank and '#' or ';'.
  static const std::regex line_re(
      R"(^([^:=;#\s]+)\s*(?:([:=\s])\s*(['"]?)(.+?)?\3)?\s*(?:\s[;#]\s*(.*?)\s*)?$)");
  std::vector<ConfigItem> items;
  std::istringstream in{std::string(text)};
  int number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';' || line[0] == '[' ||
        line.rfind("---", 0) == 0)
      continue;
    std::smatch m;
    if (!std::regex_match(line, m, line_re))
      return make_error("unexpected line " + std::to_string(number) + " in " + std::string(name) +
                        ": " + line);
    ConfigItem item;
    item.key = m[1];
    item.line = number;
    std::string value;
    if (m[4].matched) value = m[4];
    else if (m[2].matched && m[2] != " ") value = "";
    else value = "true";
    if (is_list_text(value)) {
      item.list = true;
      item.values = list_elements(value);
    } else {
      item.values = {value};
    }
    // A later line for the same key replaces the earlier one.
    auto same = std::find_if(items.begin(), items.end(),
                             [&](const ConfigItem& i) { return i.key == item.key; });
    if (same != items.end()) *same = std::move(item);
    else items.push_back(std::move(item));
  }
  return items;
}

std::string env_name(const CLI::Option& opt, std::string_view prefix) {
  if (!settable(opt)) return {};
  std::string name = std::string(prefix) + opt.get_lnames().front();
  for (char& c : name)
    c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

Result<std::vector<std::string>> expand_env_and_config(const CLI::App& app,
                                                       const std::vector<std::string>& args,
                                                       const OptionSources& sources) {
  auto getenv = sources.getenv ? sources.getenv : [](const std::string& n) -> const char* {
    return std::getenv(n.c_str());
  };
  std::vector<std::string> env_args;
  for (const CLI::Option* o : app.get_options()) {
    std::string var = env_name(*o, sources.env_prefix);
    if (var.empty() ||
        (!sources.config_option.empty() && "--" + o->get_lnames().front() == sources.config_option))
      continue;
    const char* value = getenv(var);
    if (value == nullptr || on_command_line(args, *o)) continue;
    std::string v = value;
    bool list = takes_many(*o) && is_list_text(v);
    auto converted =
        to_arguments(*o, list ? list_elements(v) : std::vector<std::string>{v}, list, var);
    if (!converted) return converted.error();
    env_args.insert(env_args.end(), converted->begin(), converted->end());
  }
  std::vector<std::string> given = env_args;
  given.insert(given.end(), args.begin(), args.end());
  if (sources.config_option.empty()) return given;

  std::vector<std::pair<std::string, bool>> files;  // path, must exist
  for (const auto& f : sources.default_config_files) files.emplace_back(f, false);
  for (const auto& f : user_config_files(args, sources.config_option)) files.emplace_back(f, true);
  std::vector<std::string> config_args;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    bool exists = false;
    auto text = read_file(it->first, it->second, exists);
    if (!text) return text.error();
    if (!exists) continue;
    auto items = parse_config_text(*text, it->first);
    if (!items) return items.error();
    std::vector<std::string> from_file;
    for (const ConfigItem& item : *items) {
      std::string where = "config file '" + it->first + "' line " + std::to_string(item.line) +
                          ": '" + item.key + "'";
      const CLI::Option* o = find_config_key(app, item.key);
      if (o == nullptr) return make_error(where + ": unknown option");
      if (on_command_line(given, *o) || on_command_line(config_args, *o)) continue;
      auto converted = to_arguments(*o, item.values, item.list, where);
      if (!converted) return converted.error();
      from_file.insert(from_file.end(), converted->begin(), converted->end());
    }
    config_args.insert(config_args.begin(), from_file.begin(), from_file.end());
  }
  config_args.insert(config_args.end(), given.begin(), given.end());
  return config_args;
}

}  // namespace gp::cli
