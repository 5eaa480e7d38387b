// Output names, headers and end-of-session captures for gp-record.
#include "session_io.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "gp/proc/perf_map.h"
#include "gp/util/version.h"

namespace gp::record_tool {

namespace {

std::string local_timestamp() {
  char buf[32];
  time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &local);
  return buf;
}

}  // namespace

std::string expand_output_name(const std::string& pattern, const std::string& host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[i + 1];
      if (c == 'h') {
        out += host;
        ++i;
        continue;
      }
      if (c == 't') {
        out += local_timestamp();
        ++i;
        continue;
      }
      if (c == '%') {
        out += '%';
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

std::string session_file_name(const std::string& dir, const std::string& host) {
  std::string base = dir + "/gp-" + (host.empty() ? "host" : host) + "-" + local_timestamp();
  std::string name = base + ".gpa";
  // Two sessions within one second (short -d): add a counter rather than overwrite.
  for (int n = 1; access(name.c_str(), F_OK) == 0; ++n)
    name = base + "-" + std::to_string(n) + ".gpa";
  return name;
}

void update_last_link(const std::string& dir, const std::string& file) {
  std::string link = dir + "/last_profile.gpa";
  std::string tmp = link + ".tmp";
  std::string target = file.substr(file.find_last_of('/') + 1);
  unlink(tmp.c_str());
  if (symlink(target.c_str(), tmp.c_str()) == 0 && rename(tmp.c_str(), link.c_str()) != 0)
    unlink(tmp.c_str());
}

model::Header make_header(const RecordArgs& args, const std::vector<std::string>& argv,
                          const model::HostInfo& host, const char* sampler, double duration_s) {
  model::Header h;
  h.producer = "gp-record";
  h.producer_version = kVersion;
  h.argv = argv;
  h.source = model::SourceKind::system;
  model::start_session_now(h);
  h.host = host;
  h.sampling.event = args.event;
  if (args.period > 0) h.sampling.period = args.period;
  else h.sampling.frequency_hz = args.frequency;
  h.sampling.mode = "fp";
  h.sampling.duration_ns = static_cast<int64_t>(duration_s * 1e9);
  h.metadata_json = std::string("{\"sampler\":\"") + sampler + "\"}";
  return h;
}

void HostCaptures::copy_perf_maps(model::Session& session,
                                  const record::SessionAssembler& assembler,
                                  const std::set<int32_t>& pids, CaptureNotes& notes) {
  for (int32_t pid : pids) {
    const record::TrackedProcess* p = assembler.tracked(pid);
    if (pid <= 0 || p == nullptr) continue;
    auto map = perf_maps_.copy_new(pid, assembler.ns_pid(pid), p->meta.start_time_ns);
    if (!map)
      notes.details.push_back("perf map of pid " + std::to_string(pid) +
                              " not copied: " + map.error().message);
    else if (*map) session.jit_maps.push_back(std::move(**map));
  }
}

CaptureNotes HostCaptures::capture(model::Session& session,
                                   const record::SessionAssembler& assembler) {
  CaptureNotes notes;
  const auto& addresses = assembler.kernel_addresses();
  if (!addresses.empty() && !kallsyms_ && !kallsyms_failed_) {
    auto table = proc::KallsymsTable::load();
    if (table) {
      kallsyms_ = std::move(*table);
    } else {
      kallsyms_failed_ = true;
      notes.warnings.push_back("kernel frames will stay unsymbolized: " + table.error().message);
    }
  }
  if (kallsyms_ && !addresses.empty()) {
    auto symbols = kallsyms_->covering(std::vector<uint64_t>(addresses.begin(), addresses.end()));
    session.kernel_symbols.insert(session.kernel_symbols.end(), symbols.begin(), symbols.end());
  }
  copy_perf_maps(session, assembler, assembler.sampled_pids(), notes);
  return notes;
}

}  // namespace gp::record_tool
