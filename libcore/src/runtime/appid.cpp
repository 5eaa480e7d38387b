// Application identifiers from command lines (reference/gprofiler.md §6).
#include "gp/runtime/appid.h"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>

#include <fstream>
#include <regex>

#include "root_path.h"

namespace gp::runtime {
namespace {

using Args = std::vector<std::string>;

std::string base(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool is_option(const std::string& s) { return !s.empty() && s.front() == '-'; }

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const std::string* arg(const Args& a, size_t i) { return i < a.size() ? &a[i] : nullptr; }

bool is_python_bin(const std::string& s) {
  static const std::regex re("^python([23](\\.[0-9]{1,2})?)?$");
  return std::regex_match(base(s), re);
}

// gProfiler's _get_cli_arg_by_name: the argument after `name`, or with `equals` "name=value".
std::optional<std::string> option_value(const Args& a, std::string_view name, bool equals = false) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == name) return i + 1 < a.size() ? std::optional(a[i + 1]) : std::nullopt;
  }
  if (equals) {
    for (const auto& s : a) {
      if (s.size() > name.size() && s.compare(0, name.size(), name) == 0 && s[name.size()] == '=') {
        return s.substr(name.size() + 1);
      }
    }
  }
  return std::nullopt;
}

bool is_python_m(const Args& a, std::string_view module) {
  return a.size() >= 3 && is_python_bin(a[0]) && a[1] == "-m" && a[2] == module;
}

std::string wsgi_name(const std::string& word, const std::string& spec, const AppContext& c) {
  std::string file = spec.substr(0, spec.find(':'));
  return word + ": " + spec + " (" + module_path(file, c) + ")";
}

std::optional<std::string> gunicorn_title(const Args& a, const AppContext& c) {
  static const std::regex re("^gunicorn: (master|worker) \\[([^\\]]*)\\]$");
  int non_empty = 0;
  for (const auto& s : a) non_empty += s.empty() ? 0 : 1;
  std::smatch m;
  if (non_empty != 1 || a.empty() || !std::regex_match(a[0], m, re)) return std::nullopt;
  return wsgi_name("gunicorn", m[2].str(), c);
}

// gunicorn / uvicorn: the first argument with ':' whose previous argument is not an option
// (uvicorn: or is --factory, which takes no value).
std::optional<std::string> asgi_server(const Args& a, const std::string& word,
                                       const AppContext& c) {
  const std::string* a0 = arg(a, 0);
  const std::string* a1 = arg(a, 1);
  if (!((a0 && base(*a0) == word) || (a1 && base(*a1) == word))) return std::nullopt;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i].find(':') == std::string::npos || is_option(a[i])) continue;
    const std::string& prev = a[i - 1];
    if (!is_option(prev) || (word == "uvicorn" && prev == "--factory")) {
      return wsgi_name(word, a[i], c);
    }
  }
  return word + ": unknown app name (unknown app name)";
}

std::optional<std::string> ini_module(const std::string& ini, const AppContext& c) {
  std::ifstream in(appid_detail::host_path(file_path(ini, c), c.root));
  std::string line;
  bool in_uwsgi = false;
  while (std::getline(in, line)) {
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#' || line[first] == ';') continue;
    line = line.substr(first);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.front() == '[') {
      in_uwsgi = line == "[uwsgi]";
      continue;
    }
    auto eq = line.find_first_of("=:");
    if (!in_uwsgi || eq == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", eq - 1) + 1);
    if (key != "module") continue;
    auto v = line.find_first_not_of(" \t", eq + 1);
    return v == std::string::npos ? std::string() : line.substr(v);
  }
  return std::nullopt;
}

std::optional<std::string> uwsgi_ini(const Args& a) {
  for (std::string_view name : {"--ini", "--ini-paste", "--ini-paste-logged"}) {
    if (auto v = option_value(a, name, true)) return v;
  }
  std::optional<std::string> bare;
  int count = 0;
  for (size_t i = 1; i < a.size(); ++i) {
    if (!is_option(a[i]) && ends_with(a[i], ".ini")) {
      bare = a[i];
      ++count;
    }
  }
  return count == 1 ? bare : std::nullopt;
}

std::optional<std::string> uwsgi(const Args& a, const AppContext& c) {
  if (a.empty() || base(a[0]) != "uwsgi") return std::nullopt;
  auto wsgi = option_value(a, "-w");
  if (!wsgi) wsgi = option_value(a, "--wsgi-file", true);
  if (wsgi) return "uwsgi: " + *wsgi + " (" + module_path(*wsgi, c) + ")";
  auto ini = uwsgi_ini(a);
  if (!ini) return std::string("uwsgi: ini file / wsgi module not found");
  auto module = ini_module(*ini, c);
  if (module && !module->empty()) return "uwsgi: " + *ini + " (" + module_path(*module, c) + ")";
  return "uwsgi: " + *ini;
}

std::optional<std::string> celery(const Args& a, const AppContext& c) {
  const std::string* a0 = arg(a, 0);
  const std::string* a1 = arg(a, 1);
  if (!((a0 && base(*a0) == "celery") || (a1 && base(*a1) == "celery") ||
        is_python_m(a, "celery"))) {
    return std::nullopt;
  }
  auto app = option_value(a, "-A");
  if (!app) app = option_value(a, "--app", true);
  if (!app) {
    for (const auto& s : a) {
      if (s.size() > 2 && s.compare(0, 2, "-A") == 0) app = s.substr(2);
    }
  }
  if (app) return "celery: " + *app + " (" + module_path(*app, c) + ")";
  auto queues = option_value(a, "-Q");
  if (!queues) queues = option_value(a, "--queues", true);
  if (queues) return "celery queue: " + *queues + " (" + c.cwd + ")";
  return std::nullopt;
}

std::optional<std::string> python_script(const Args& a, const AppContext& c) {
  if (a.empty() || !is_python_bin(a[0])) return std::nullopt;
  if (auto m = option_value(a, "-m")) return "python: -m " + *m;
  if (a.size() > 1 && ends_with(a[1], ".py"))
    return "python: " + a[1] + " (" + module_path(a[1], c) + ")";
  return std::nullopt;
}

std::optional<std::string> python_app(const Args& a, const AppContext& c) {
  if (auto id = gunicorn_title(a, c)) return id;
  if (auto id = asgi_server(a, "gunicorn", c)) return id;
  if (auto id = asgi_server(a, "uvicorn", c)) return id;
  if (auto id = uwsgi(a, c)) return id;
  if (auto id = celery(a, c)) return id;
  if (is_python_m(a, "pyspark.daemon")) return std::string("pyspark");
  return python_script(a, c);
}

// Node and Ruby: the first script argument, skipping what --require / -r loads.
std::optional<std::string> script_app(const Args& a, const AppContext& c, const char* word,
                                      std::string_view ext, bool node) {
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& s = a[i];
    if (s == "-r" || (node && s == "--require")) {
      ++i;
      continue;
    }
    if ((node && s.rfind("--require=", 0) == 0) || (!node && s.rfind("-r", 0) == 0)) continue;
    if (ends_with(s, ext)) return std::string(word) + ": " + s + " (" + file_path(s, c) + ")";
  }
  return std::nullopt;
}

// JVM options that take the next argument as their value.
bool java_option_with_value(const std::string& s) {
  static const char* kWithValue[] = {"-cp",
                                     "-classpath",
                                     "--class-path",
                                     "-p",
                                     "--module-path",
                                     "--upgrade-module-path",
                                     "--add-modules",
                                     "--limit-modules",
                                     "--add-exports",
                                     "--add-opens",
                                     "--add-reads",
                                     "--patch-module",
                                     "--enable-native-access"};
  for (const char* o : kWithValue) {
    if (s == o) return true;
  }
  return false;
}

// " (<options>)": the JVM options (jcmd's jvm_args) that match one of the filters.
std::string matching_jvm_args(const std::vector<std::string>& options,
                              const std::vector<std::regex>& filters) {
  std::string out;
  for (const std::string& o : options) {
    bool match = std::any_of(filters.begin(), filters.end(),
                             [&](const std::regex& f) { return std::regex_search(o, f); });
    if (match) out += (out.empty() ? "" : " ") + o;
  }
  return out.empty() ? out : " (" + out + ")";
}

// The first token of the JVM's java_command (what `jcmd VM.command_line` prints): the jar of
// -jar, the module/class of -m, or the main class; with filters, the matching JVM options.
std::optional<std::string> java_app(const Args& a, const std::vector<std::regex>& filters) {
  std::vector<std::string> options;  // jvm_args: the options before the application
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string& s = a[i];
    if (s == "-jar" || s == "-m" || s == "--module") {
      if (i + 1 >= a.size()) return std::nullopt;
      return "java: " + a[i + 1] + matching_jvm_args(options, filters);
    }
    if (s.rfind("--module=", 0) == 0)
      return "java: " + s.substr(9) + matching_jvm_args(options, filters);
    if (java_option_with_value(s)) {  // the class path is not among jcmd's jvm_args
      ++i;
      continue;
    }
    if (s.empty() || s.front() == '@') continue;
    if (s.front() == '-') {
      options.push_back(s);
      continue;
    }
    return "java: " + s + matching_jvm_args(options, filters);
  }
  return std::nullopt;
}

}  // namespace

std::string file_path(const std::string& file, const AppContext& c) {
  std::string joined = !file.empty() && file.front() == '/' ? file : c.cwd + "/" + file;
  return appid_detail::resolve_in_root(joined, c.root);
}

std::string module_path(const std::string& module, const AppContext& c) {
  if (module == "unknown app name") return module;
  std::string file = module;
  if (!ends_with(file, ".py")) {
    for (char& ch : file) {
      if (ch == '.') ch = '/';
    }
    file += ".py";
  }
  return file_path(file, c);
}

namespace {

// gProfiler's _JavaSparkApplicationIdentifier: for a Spark executor, spark.app.name from the
// properties file Spark writes in its working directory. Its parser: every line not starting
// with '#' is KEY=VALUE up to a '#' (a line without '=' fails the identifier: no part).
std::optional<std::string> spark_app(const Args& a, const AppContext& c) {
  if (std::none_of(a.begin(), a.end(), [](const std::string& s) {
        return s.find("org.apache.spark.executor") != std::string::npos;
      }))
    return std::nullopt;
  std::ifstream in(file_path("__spark_conf__/__spark_conf__.properties", c));
  if (!in) return "app name not found";
  std::optional<std::string> name;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('#', 0) == 0) continue;
    line = line.substr(0, line.find('#'));
    size_t eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    if (line.substr(0, eq) == "spark.app.name") name = line.substr(eq + 1);
  }
  return name ? "spark: " + *name : std::string("app name not found");
}

}  // namespace

std::optional<std::string> app_id(Runtime runtime, const std::vector<std::string>& cmdline,
                                  const AppContext& context) {
  if (cmdline.empty()) return std::nullopt;
  switch (runtime) {
    case Runtime::python:
      return python_app(cmdline, context);
    case Runtime::java: {
      auto java = java_app(cmdline, context.java_args_filters);
      auto spark = context.java_spark_app_name ? spark_app(cmdline, context) : std::nullopt;
      if (!spark) return java;
      return java ? *java + ", " + *spark : *spark;  // gProfiler's aggregate_all
    }
    case Runtime::node:
      return script_app(cmdline, context, "nodejs", ".js", true);
    case Runtime::ruby:
      return script_app(cmdline, context, "ruby", ".rb", false);
    case Runtime::php:
    case Runtime::dotnet:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> app_id(const Target& t, const std::vector<std::regex>& java_args_filters,
                                  bool java_spark_app_name) {
  std::string proc_dir = t.root.substr(0, t.root.rfind('/'));  // "/proc/PID"
  char buf[4096];
  ssize_t n = ::readlink((proc_dir + "/cwd").c_str(), buf, sizeof buf);
  AppContext c{n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("/"), t.root,
               java_args_filters, java_spark_app_name};
  return app_id(t.runtime, t.cmdline, c);
}

}  // namespace gp::runtime
