// gp-profile's PerfSpect run and the summary it reads back (see hw_metrics.h).
#include "gp/profile/hw_metrics.h"

#include <sys/utsname.h>

#include <filesystem>
#include <fstream>

#include "gp/fold/gzip.h"
#include "gp/profile/child.h"
#include "gp/util/base64.h"

namespace gp::profile {

Command perfspect_command(const std::string& perfspect, unsigned duration_s,
                          const std::string& output_dir, bool debug) {
  Command c{perfspect, {"metrics", "--duration", std::to_string(duration_s), "--output", output_dir}};
  if (debug) c.args.push_back("--debug");
  return c;
}

std::string host_name() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.nodename) : std::string();
}

HwMetrics read_hw_metrics(const std::string& output_dir, const std::string& host) {
  HwMetrics out;
  const std::string stem = output_dir + "/" + host + "_metrics_summary";
  if (std::filesystem::is_regular_file(stem + ".csv")) {
    std::ifstream csv(stem + ".csv");
    // gProfiler's reading: the header line skipped, then column 0 → column 1 of each line,
    // split at every comma (PerfSpect's rows: metric,mean,min,max,stddev).
    out.data = json::Value::object();
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      size_t first = line.find(',');
      if (first == std::string::npos) continue;
      size_t second = line.find(',', first + 1);
      out.data.set(line.substr(0, first),
                   json::Value::from_string(line.substr(
                       first + 1, second == std::string::npos ? second : second - first - 1)));
    }
  }
  if (std::filesystem::is_regular_file(stem + ".html")) {
    std::string page = read_text(stem + ".html");
    // Python's gzip.compress: level 9.
    if (auto packed = fold::gzip(page, 9)) out.html = json::Value::from_string(util::base64(*packed));
  }
  return out;
}

}  // namespace gp::profile
