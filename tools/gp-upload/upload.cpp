// gp-upload's per-file loop: spooled files first, then the inputs; each to every target.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "gp/upload/url.h"
#include "targets.h"

namespace gp::upload_tool {
namespace {

using namespace gp::upload;

struct Item {
  std::string name;        // for messages
  std::string content;     // the .col text (the input file itself is never written)
  std::string spool_path;  // set when the item came from the spool
};

bool read_input(const std::string& path, std::string& out) {
  if (path == "-") {
    out.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return !std::cin.bad();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

int usage(const std::string& message) {
  gp::cli::error(message);
  gp::cli::hint("Try 'gp-upload --help'");
  return gp::cli::kExitUsage;
}

struct Times {
  std::optional<int64_t> start, end;
};

bool parse_times(const UploadArgs& a, Times& t, std::string& bad) {
  for (auto [text, out, name] : {std::tuple{&a.start_time, &t.start, "--start-time"},
                                 std::tuple{&a.end_time, &t.end, "--end-time"}}) {
    if (text->empty()) continue;
    *out = parse_iso(*text);
    if (!*out) {
      bad = std::string("invalid ") + name + " '" + *text + "': expected YYYY-MM-DDTHH:MM:SS";
      return false;
    }
  }
  return true;
}

class Uploader {
 public:
  Uploader(const UploadArgs& a, const Times& t) : args_(a), times_(t), host_(collect_host_facts()) {
    delivery_.retry = {a.retries, a.retry_delay, 30};
    delivery_.timeout = a.timeout;
    delivery_.verify = !a.no_verify;
    delivery_.ca_file = a.ca_file;
    delivery_.secret = a.token;
    delivery_.curlify = a.curlify_requests;
    if (!a.spool.empty()) spool_ = std::make_unique<Spool>(a.spool);
  }

  int run(const std::vector<std::string>& inputs);
  int health_check_only();

 private:
  bool upload(const Item& item);
  SendResult studio_send(const ColText& col, bool own_times);
  void keep(const Item& item, const ColText* col);
  std::string gpid_path() const;

  const UploadArgs& args_;
  Times times_;
  HostFacts host_;
  Delivery delivery_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<StudioTarget> studio_;
  std::optional<SendResult> studio_health_;
  std::unique_ptr<PyroscopeTarget> pyroscope_;
  bool deferring_ = false;  // a transient failure happened: the rest waits in the spool
};

std::string Uploader::gpid_path() const {
  if (!args_.gpid_file.empty()) return args_.gpid_file;
  return spool_ ? spool_->gpid_path() : std::string();
}

// gProfiler's start-up check and its two messages (main.py, around ProfilerAPIClient).
int Uploader::health_check_only() {
  StudioTarget studio(args_, delivery_, host_, "");
  SendResult r = studio.check_health();
  if (r.outcome == Outcome::sent) {
    gp::cli::info(1, "The connection to the server was successfully established (service '" +
                         args_.service_name + "')");
    return gp::cli::kExitOk;
  }
  if (r.outcome == Outcome::permanent) {
    gp::cli::error("Server error: " + r.why);
  } else {
    const char* proxy = std::getenv("HTTPS_PROXY");
    if (proxy == nullptr) proxy = std::getenv("https_proxy");
    std::string shown =
        proxy != nullptr ? "'" + redact(hide_userinfo(proxy), args_.token) + "'" : "none";
    gp::cli::error(
        "Failed to connect to server. It might be blocked by your security rules / firewall, or "
        "you might require a proxy to access it from your environment? Proxy used: " +
        shown + ". Error: " + r.why);
  }
  return gp::cli::kExitFailure;
}

// A copy of the item in the spool, its header holding the times it is uploaded with, so that
// a later run sends it with its own span.
void Uploader::keep(const Item& item, const ColText* col) {
  std::string content = item.content;
  if (col != nullptr && col->header) {
    json::Value header = *col->header;
    StudioTimes t = studio_times(header, host_.now, times_.start, times_.end);
    header.set("start_time", json::Value::from_string(iso_utc(t.start)));
    header.set("end_time", json::Value::from_string(iso_utc(t.end)));
    content = profile_text(header, col->stacks);
  }
  auto kept = spool_->keep(item.name, content);
  if (!kept) {
    gp::cli::warning(kept.error().message);
    return;
  }
  gp::cli::info(0, "kept a copy of '" + item.name + "' in '" + *kept + "' for the next run");
  if (args_.spool_max_bytes > 0) {
    size_t dropped = spool_->trim(args_.spool_max_bytes);
    if (dropped > 0)
      gp::cli::warning("spool '" + spool_->dir() + "' is over " +
                       std::to_string(args_.spool_max_bytes) + " bytes: dropped the " +
                       std::to_string(dropped) + " oldest profile(s), which are lost");
  }
}

SendResult Uploader::studio_send(const ColText& col, bool own_times) {
  if (args_.no_health_check && !studio_health_) studio_health_ = SendResult{};
  if (!studio_health_) {
    studio_health_ = studio_->check_health();
    if (studio_health_->outcome != Outcome::sent)
      gp::cli::error("Studio health check failed '" +
                     redact(hide_userinfo(args_.server_host), args_.token) +
                     "': " + studio_health_->why);
  }
  // A transient health failure is retried with the next file; a 4xx one is final.
  if (studio_health_->outcome == Outcome::transient) {
    SendResult r = *studio_health_;
    studio_health_.reset();
    return r;
  }
  if (studio_health_->outcome == Outcome::permanent) return *studio_health_;
  // A spooled profile is sent with the times written in its header.
  if (own_times) return studio_->send(col, std::nullopt, std::nullopt);
  return studio_->send(col, times_.start, times_.end);
}

// Sends one item to every target; spools it on a transient failure. True when all got it.
bool Uploader::upload(const Item& item) {
  auto col = split_col(item.content);
  if (!col) {
    gp::cli::error("cannot upload '" + item.name + "': " + col.error().message);
    return false;
  }
  if (deferring_) {
    // The server failed a moment ago: keep the order, try again next run.
    if (item.spool_path.empty() && spool_) keep(item, &*col);
    return false;
  }
  bool transient = false, failed = false;
  auto report = [&](const char* target, const SendResult& r) {
    if (r.outcome == Outcome::sent) {
      gp::cli::info(1, "uploaded '" + item.name + "' to " + target);
      return;
    }
    failed = true;
    transient |= r.outcome == Outcome::transient;
    gp::cli::error("cannot upload '" + item.name + "' to " + target + ": " + r.why);
  };
  if (studio_) report("the Studio", studio_send(*col, !item.spool_path.empty()));
  if (pyroscope_) {
    json::Value header = col->header ? *col->header : minimal_header();
    header.set("metadata",
               header.find("metadata") ? *header.find("metadata") : json::Value::object());
    bool own = !item.spool_path.empty();
    StudioTimes t = studio_times(header, host_.now, own ? std::nullopt : times_.start,
                                 own ? std::nullopt : times_.end);
    report("Pyroscope", pyroscope_->send(*col, t));
  }
  if (!failed) {
    if (!item.spool_path.empty()) (void)spool_->remove(item.spool_path);
    return true;
  }
  if (transient && spool_) {
    deferring_ = true;
    if (item.spool_path.empty()) keep(item, &*col);
  }
  return false;
}

int Uploader::run(const std::vector<std::string>& inputs) {
  if (!args_.token.empty())
    studio_ = std::make_unique<StudioTarget>(args_, delivery_, host_, gpid_path());
  if (!args_.pyroscope.empty()) pyroscope_ = std::make_unique<PyroscopeTarget>(args_, delivery_);
  std::vector<Item> items;
  size_t total = 0, failed = 0;
  if (spool_) {
    if (auto st = spool_->init(); !st) {
      gp::cli::error(st.error().message);
      return gp::cli::kExitFailure;
    }
    std::vector<std::string> refused;
    const std::vector<std::string> pending = spool_->pending(&refused);
    for (const std::string& why : refused) gp::cli::warning("skipped spool entry " + why);
    for (const std::string& p : pending) {
      Item it{p, {}, p};
      if (read_input(p, it.content)) items.push_back(std::move(it));
    }
  }
  for (const std::string& path : inputs) {
    Item it{path == "-" ? "<stdin>" : path, {}, {}};
    if (!read_input(path, it.content)) {
      gp::cli::error("cannot read '" + it.name + "': " + std::strerror(errno));
      ++total, ++failed;
      continue;
    }
    items.push_back(std::move(it));
  }
  for (const Item& it : items) {
    ++total;
    if (!upload(it)) ++failed;
  }
  if (failed == 0) return gp::cli::kExitOk;
  return failed == total ? gp::cli::kExitFailure : gp::cli::kExitPartial;
}

}  // namespace

int run(const UploadArgs& typed) {
  UploadArgs args = typed;
  if (args.token.empty() && args.token_file.empty()) {
    const char* env = std::getenv("GPROFILER_TOKEN");  // gProfiler's variable
    if (env != nullptr) args.token = env;
  }
  if (!args.token_file.empty()) {
    std::ifstream in(args.token_file);
    std::getline(in, args.token);
    while (!args.token.empty() && (args.token.back() == '\r' || args.token.back() == ' '))
      args.token.pop_back();
    if (args.token.empty()) return usage("no token in '" + args.token_file + "'");
  }
  if (args.health_check_only) {
    if (args.token.empty() || args.service_name.empty())
      return usage("--health-check needs --token and --service-name");
    Uploader up(args, Times{});
    return up.health_check_only();
  }
  if (args.token.empty() && args.pyroscope.empty())
    return usage(
        "no upload target: give --token and --service-name (Studio) and/or --pyroscope URL");
  if (!args.token.empty() && args.service_name.empty())
    return usage("--token needs --service-name");
  Times times;
  std::string bad;
  if (!parse_times(args, times, bad)) return usage(bad);
  if (std::count(args.inputs.begin(), args.inputs.end(), "-") > 1)
    return usage("standard input ('-') given more than once");
  Uploader up(args, times);
  return up.run(args.inputs);  // `args` outlives `up`: both end here
}

}  // namespace gp::upload_tool
