#include "gp/cli/tool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "gp/cli/progress.h"
#include "gp/util/escape.h"
#include "gp/util/version.h"

namespace gp::cli {
namespace {

std::string g_program = "gp";
int g_verbosity = 0;
bool g_quiet = false;
bool g_color = false;

std::map<const CLI::Option*, ValueHint>& hint_table() {
  static std::map<const CLI::Option*, ValueHint> table;
  return table;
}
std::map<const CLI::Option*, std::vector<std::string>>& choice_table() {
  static std::map<const CLI::Option*, std::vector<std::string>> table;
  return table;
}

void emit(std::string_view severity, const char* colour, std::string_view message) {
  std::string line = g_program + ": ";
  if (g_color) line += colour;
  line += severity;
  if (g_color) line += "\033[0m";
  line += ": ";
  line += util::escape_for_terminal(message);
  line += '\n';
  std::fflush(stdout);
  clear_progress();
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

// CLI11 messages start with a capital and say "The following argument was not expected";
// gp's usage errors follow coreutils: lowercase, and "unknown option '--foo'".
std::string usage_message(const CLI::Error& e) {
  std::string msg = e.what();
  if (msg.rfind("The following argument", 0) == 0) {  // CLI::ExtrasError
    auto colon = msg.find(": ");
    std::string extra = colon == std::string::npos ? msg : msg.substr(colon + 2);
    auto space = extra.find(' ');
    if (space != std::string::npos) extra = extra.substr(0, space);
    if (!extra.empty() && extra[0] == '-') return "unknown option '" + extra + "'";
    return "unexpected argument '" + extra + "'";
  }
  if (!msg.empty()) msg[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(msg[0])));
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '.')) msg.pop_back();
  return msg;
}

// CLI11 2.1 appends "Needs: --x" and "Excludes: --y" to the option column, where they run
// into the description ("--with-pid Excludes: --with-tid folded, ..."). gp says it in the
// description instead: "... (not with --with-tid)".
class Formatter : public CLI::Formatter {
 public:
  // A flag that also takes a value ("--python-frames{on}": --python-frames or
  // --python-frames=auto) is shown under its name alone; its option text says the value.
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    for (size_t open; (open = name.find('{')) != std::string::npos;) {
      size_t close = name.find('}', open);
      name.erase(open, close == std::string::npos ? std::string::npos : close - open + 1);
    }
    return name;
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out;
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_type_size() == 0) return out;
    if (!opt->get_type_name().empty()) out += " " + get_label(opt->get_type_name());
    if (!opt->get_default_str().empty()) out += "=" + opt->get_default_str();
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
    else if (opt->get_expected_min() > 1) out += " x " + std::to_string(opt->get_expected());
    if (opt->get_required()) out += " " + get_label("REQUIRED");
    return out;
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    auto names = [](const auto& options) {
      std::string list;
      for (const CLI::Option* o : options) list += (list.empty() ? "" : ", ") + o->get_name();
      return list;
    };
    if (!opt->get_needs().empty()) desc += " (needs " + names(opt->get_needs()) + ")";
    if (!opt->get_excludes().empty()) desc += " (not with " + names(opt->get_excludes()) + ")";
    return desc;
  }
};

}  // namespace

void init_tool(std::string_view program) {
  g_program = std::string(program);
  ::signal(SIGPIPE, SIG_IGN);
  std::ios::sync_with_stdio(false);
  g_color = is_terminal(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
}

const std::string& program() { return g_program; }

void error(std::string_view message) { emit("error", "\033[1;31m", message); }
void warning(std::string_view message) {
  if (!g_quiet) emit("warning", "\033[1;33m", message);
}
void hint(std::string_view message) {
  if (!g_quiet) emit("hint", "\033[1;36m", message);
}
void tell_unsymbolized(std::string_view input) {
  std::string name(input);
  warning("most frames of '" + name + "' have no names: it was never symbolized");
  std::string in = name == "<stdin>" ? "-" : name;
  hint("name them first: 'gp-symbolize " + in + " -o named.gpa', then use named.gpa");
}

void info(int level, std::string_view message) {
  if (g_quiet || g_verbosity < level) return;
  std::string line = g_program + ": " + util::escape_for_terminal(message) + "\n";
  std::fflush(stdout);
  clear_progress();
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

void set_verbosity(const CommonArgs& args) {
  g_verbosity = args.verbose;
  g_quiet = args.quiet;
  if (args.color == "always") g_color = true;
  if (args.color == "never") g_color = false;
}
int verbosity() { return g_verbosity; }
bool quiet() { return g_quiet; }

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

std::unique_ptr<CLI::App> make_app(std::string_view program, std::string_view description,
                                   std::string_view examples) {
  auto app = std::make_unique<CLI::App>(std::string(description), std::string(program));
  app->footer("\nEXAMPLES\n" + std::string(examples) +
              "\nExit status: 0 ok, 1 failure, 2 usage error, 3 partial output.\nSee " +
              std::string(program) + "(1) and gp(7).");
  app->set_version_flag("--version", std::string(program) + " (gp) " + kVersion);
  app->formatter(std::make_shared<Formatter>());
  app->get_formatter()->column_width(34);
  return app;
}

void add_common_options(CLI::App& app, CommonArgs& args) {
  app.add_flag("-v,--verbose", args.verbose,
               "More diagnostics on stderr (repeat: -vv debug, -vvv trace)");
  app.add_flag("-q,--quiet", args.quiet, "Only errors on stderr");
  choices(app.add_option("--color", args.color, "Colour diagnostics: auto, always, never")
              ->capture_default_str(),
          {"auto", "always", "never"});
  static std::string shell;
  auto* gen = app.add_option("--generate-completion", shell, "Print a shell completion script")
                  ->group("");  // hidden
  choices(gen, {"bash", "zsh", "fish"});
}

CLI::Option* hint_value(CLI::Option* opt, ValueHint hint) {
  hint_table()[opt] = hint;
  return opt;
}

CLI::Option* choices(CLI::Option* opt, const std::vector<std::string>& values, bool check) {
  choice_table()[opt] = values;
  if (check) opt->check(CLI::IsMember(values));
  return opt;
}

namespace {
CLI::Validator number_check(bool zero_allowed, const char* name) {
  return CLI::Validator(
      [zero_allowed](std::string& in) -> std::string {
        char* end = nullptr;
        double v = std::strtod(in.c_str(), &end);
        bool number = !in.empty() && end != nullptr && *end == '\0' && std::isfinite(v);
        if (number && (zero_allowed ? v >= 0 : v > 0)) return "";
        return "'" + in + "' is not a number " +
               (zero_allowed ? "of 0 or more" : "greater than 0") +
               (number ? "" : " (give a plain number, without a unit)");
      },
      name);
}
}  // namespace

CLI::Validator positive_number() { return number_check(false, "POSITIVE"); }
CLI::Validator non_negative_number() { return number_check(true, "NONNEGATIVE"); }

ValueHint value_hint(const CLI::Option* opt) {
  auto it = hint_table().find(opt);
  return it == hint_table().end() ? ValueHint::none : it->second;
}

const std::vector<std::string>* value_choices(const CLI::Option* opt) {
  auto it = choice_table().find(opt);
  return it == choice_table().end() ? nullptr : &it->second;
}

bool finish_text_output(std::ostream& out, std::string_view name) {
  out.flush();
  if (out.good()) return true;
  int err = errno;
  if (err == EPIPE) return true;
  error("cannot write '" + std::string(name) + "': " + (err ? ::strerror(err) : "write failed"));
  return false;
}

int run(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    error(usage_message(e));
    std::string tryline = "Try '" + g_program + " --help' for more information.\n";
    (void)!::write(STDERR_FILENO, tryline.data(), tryline.size());
    return kExitUsage;
  }
  if (auto* gen = app.get_option_no_throw("--generate-completion"); gen && gen->count() > 0) {
    write_completion(app, gen->as<std::string>(), std::cout);
    return finish_text_output(std::cout, "<stdout>") ? kExitOk : kExitFailure;
  }
  int status;
  try {
    status = body();
  } catch (const std::bad_alloc&) {
    error("out of memory");
    return kExitFailure;
  } catch (const std::exception& e) {
    error(e.what());
    return kExitFailure;
  }
  std::cout.flush();
  if (!std::cout.good() && errno != EPIPE) {
    error(std::string("cannot write '<stdout>': ") + ::strerror(errno));
    return kExitFailure;
  }
  if (std::fflush(stdout) != 0 && errno != EPIPE) {
    error(std::string("cannot write '<stdout>': ") + ::strerror(errno));
    return kExitFailure;
  }
  return status;
}

}  // namespace gp::cli
