#include "gp/symbolize/symbolizer.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "function_table.h"
#include "gp/symbolize/kernel_symbols.h"
#include "location_kind.h"
#include "module_opener.h"

namespace gp::symbolize {
namespace {

using model::FrameKind;
using model::Location;
using model::MappingKind;
using model::SymbolStatus;

// The per-binary work and its results, filled by a worker thread.
struct ModuleJob {
  ModuleRef ref;
  ModuleReport report;
  bool is_go = false;
  std::vector<std::vector<Frame>> results;      // distinct lookups' chains; empty = no symbol
  std::vector<uint32_t> result_of;              // parallel to ref.location_ids: index into results
  SymbolStatus miss = SymbolStatus::no_symbol;  // status of every empty result
};

// The module's lookups in address order (neighbours share CUs, line tables and cache lines),
// each distinct query once: processes mapping the same binary repeat the same addresses.
void resolve_batch(const model::Session& s, ModuleResolver& resolver, ModuleJob& job) {
  struct Query {
    uint64_t file_offset, mapping_offset;
    bool return_address;
    size_t index;  // into job.results
    auto key() const { return std::tie(file_offset, return_address, mapping_offset); }
  };
  std::vector<Query> queries;
  queries.reserve(job.ref.location_ids.size());
  job.result_of.assign(job.ref.location_ids.size(), 0);
  for (size_t i = 0; i < job.ref.location_ids.size(); ++i) {
    const Location& loc = s.location(job.ref.location_ids[i]);
    queries.push_back(
        {loc.file_offset, s.mapping(loc.mapping_id).file_offset, loc.is_return_address, i});
  }
  std::sort(queries.begin(), queries.end(),
            [](const Query& a, const Query& b) { return a.key() < b.key(); });
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    if (i == 0 || queries[i - 1].key() != q.key())
      job.results.push_back(resolver.resolve(q.file_offset, q.return_address, q.mapping_offset));
    job.result_of[q.index] = static_cast<uint32_t>(job.results.size() - 1);
  }
}

void run_job(const model::Session& s, const SymbolizeOptions& opt, const DebugInfoFinder& finder,
             ModuleJob& job) {
  job.report.frames = job.ref.location_ids.size();
  auto resolver =
      open_module(finder, job.ref.paths, job.ref.build_id, opt.resolver, job.report, &job.miss);
  if (!resolver) return;
  job.is_go = resolver->is_go();
  resolve_batch(s, *resolver, job);
}

void run_jobs(const model::Session& s, const SymbolizeOptions& opt, std::vector<ModuleJob>& jobs) {
  DebugInfoFinder finder(opt.finder);
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      run_job(s, opt, finder, jobs[i]);
      if (opt.on_binary_done) opt.on_binary_done(++done, jobs.size());
    }
  };
  unsigned n = std::max(1u, std::min<unsigned>(opt.jobs, static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

// Kernel and JIT frames: names from the archive's own tables.
void resolve_from_archive(model::Session& s, FunctionTable& functions, SymbolizeReport& report) {
  KernelSymbols kernel(s.kernel_symbols);
  JitSymbols jit(s.jit_maps);
  for (auto& loc : s.locations) {
    LocationClass c = classify(s, loc);
    if (c == LocationClass::kernel) {
      auto name = kernel.empty() ? std::nullopt : kernel.lookup(loc.address);
      if (name) apply_name(functions, loc, *name), ++report.newly_resolved;
      else loc.status = kernel.empty() ? SymbolStatus::no_file : SymbolStatus::no_symbol;
      loc.kind = FrameKind::kernel;
    } else if (c == LocationClass::jit) {
      int32_t pid = s.mapping(loc.mapping_id).pid;
      auto name = jit.lookup(pid, loc.address);
      if (name) apply_name(functions, loc, *name), ++report.newly_resolved;
      else loc.status = jit.has_pid(pid) ? SymbolStatus::no_symbol : SymbolStatus::no_file;
      if (loc.kind == FrameKind::unknown || loc.kind == FrameKind::native)
        loc.kind = FrameKind::jit;
    } else if (c == LocationClass::unmapped) {
      loc.status = SymbolStatus::unmapped;
    }
  }
}

void set_counters(model::Session& s, SymbolizeReport& report) {
  report.by_status = {};
  for (const auto& loc : s.locations)
    if (loc.status != SymbolStatus::symbolic) ++report.by_status[static_cast<size_t>(loc.status)];
  for (SymbolStatus st :
       {SymbolStatus::resolved, SymbolStatus::no_file, SymbolStatus::build_id_mismatch,
        SymbolStatus::no_symbol, SymbolStatus::unmapped})
    s.set_counter(std::string("symbolize.") + model::to_string(st),
                  static_cast<int64_t>(report.count(st)));
}

}  // namespace

uint64_t SymbolizeReport::misses() const {
  return count(SymbolStatus::no_file) + count(SymbolStatus::build_id_mismatch) +
         count(SymbolStatus::no_symbol) + count(SymbolStatus::unmapped) +
         count(SymbolStatus::unsymbolized);
}

std::vector<ModuleRef> modules_to_resolve(const model::Session& s, bool all) {
  ModuleGrouper grouper(s.mappings.size());
  for (size_t i = 0; i < s.locations.size(); ++i) {
    const Location& loc = s.locations[i];
    if (classify(s, loc, all) == LocationClass::user)
      grouper.add(i + 1, loc.mapping_id, s.mapping(loc.mapping_id));
  }
  return grouper.take();
}

SymbolizeReport symbolize_session(model::Session& s, const SymbolizeOptions& opt) {
  SymbolizeReport report;
  std::vector<ModuleJob> jobs;
  for (auto& ref : modules_to_resolve(s)) {
    jobs.emplace_back();
    jobs.back().ref = std::move(ref);
  }
  run_jobs(s, opt, jobs);

  FunctionTable functions(s);
  for (auto& job : jobs) {
    std::vector<uint64_t> slots;
    for (size_t i = 0; i < job.ref.location_ids.size(); ++i) {
      Location& loc = s.location(job.ref.location_ids[i]);
      if (job.result_of.empty() ||
          job.results[job.result_of[i]].empty()) {  // not looked up, or no symbol
        loc.status = job.miss;
        ++job.report.unresolved;
        continue;
      }
      apply_frames(functions, slots, loc, job.results[job.result_of[i]]);
      ++report.newly_resolved;
      if (job.is_go && (loc.kind == FrameKind::unknown || loc.kind == FrameKind::native))
        loc.kind = FrameKind::go;
      if (loc.kind == FrameKind::unknown) loc.kind = FrameKind::native;
    }
    job.results = {};
    job.result_of = {};
    report.modules.push_back(std::move(job.report));
  }
  resolve_from_archive(s, functions, report);
  s.header.symbolized = true;
  set_counters(s, report);
  return report;
}

}  // namespace gp::symbolize
