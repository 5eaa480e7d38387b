#include "gp/symbolize/stream_symbolizer.h"

#include <algorithm>
#include <deque>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "function_table.h"
#include "gp/symbolize/kernel_symbols.h"
#include "location_kind.h"
#include "module_opener.h"

namespace gp::symbolize {
namespace {

using model::FrameKind;
using model::SymbolStatus;

// What is kept of every location of the session (24 bytes): enough to classify it and look it
// up at the end of the session, and its status for the counters.
struct LocState {
  uint64_t address = 0;
  uint64_t file_offset = 0;
  uint32_t mapping_id = 0;
  SymbolStatus status = SymbolStatus::unsymbolized;
  FrameKind kind = FrameKind::unknown;
  bool is_return_address = false;
  bool pending = false;  // named at the end of the session
};

// One binary of the session, and its frames to name at the end of the session.
// The work on one binary at the end of the session, filled by a worker thread.
struct Job {
  ModuleRef* module = nullptr;
  ModuleReport report;
  bool is_go = false;
  SymbolStatus miss = SymbolStatus::no_symbol;  // status of every frame without a name
  // The answers, compact (a binary's frames repeat a few thousand functions): distinct lookup r
  // has the chain frames[begin[r], begin[r + 1]), outermost first; empty = no symbol.
  struct CompactFrame {
    uint32_t function;  // index into functions
    uint32_t line, column;
  };
  std::vector<Frame> functions;  // name, system_name, decl_file, decl_line of each one
  std::vector<CompactFrame> frames;
  std::vector<uint32_t> begin{0};
  std::vector<uint32_t> result_of;                            // parallel to module->ids
  std::vector<uint32_t> function_of_slot;                     // Frame::function_slot -> index + 1
  std::unordered_map<std::string, uint32_t> function_of_key;  // frames without a slot

  void add_result(std::vector<Frame>&& chain);
};

void Job::add_result(std::vector<Frame>&& chain) {
  for (Frame& f : chain) {
    uint32_t* index = nullptr;
    if (f.function_slot != 0) {
      if (function_of_slot.size() <= f.function_slot)
        function_of_slot.resize(f.function_slot + 1, 0);
      index = &function_of_slot[f.function_slot];
    } else {
      std::string key =
          f.name + '\0' + f.system_name + '\0' + f.decl_file + '\0' + std::to_string(f.decl_line);
      index = &function_of_key.try_emplace(std::move(key), 0).first->second;
    }
    if (*index == 0) {
      functions.push_back({std::move(f.name),
                           std::move(f.system_name),
                           {},
                           0,
                           0,
                           std::move(f.decl_file),
                           f.decl_line,
                           0});
      *index = static_cast<uint32_t>(functions.size());
    }
    frames.push_back({*index - 1, f.line, f.column});
  }
  begin.push_back(static_cast<uint32_t>(frames.size()));
}

constexpr size_t kUpdatesPerFlush = 1 << 15;

bool same_lines(const std::vector<model::Line>& a, const std::vector<model::Line>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const model::Line& x, const model::Line& y) {
                      return x.function_id == y.function_id && x.line == y.line &&
                             x.column == y.column && x.inlined == y.inlined;
                    });
}

}  // namespace

struct StreamSymbolizer::State {
  explicit State(const FinderOptions& finder_options) : finder(finder_options), functions(tables) {}

  DebugInfoFinder finder;
  model::Session tables;    // mappings, output functions, kernel symbols, JIT maps, counters
  FunctionTable functions;  // over tables.functions
  std::vector<uint64_t> function_map;  // input function id - 1 -> output function id
  std::deque<LocState> locations;      // by location id - 1 (a deque: grows without copying)
  std::vector<uint64_t> pending;       // ids named at the end (LocState.pending says if still)
  std::unordered_map<uint64_t, std::vector<model::Line>> pending_lines;  // their lines, when any
  archive::TableCounts written;                                          // output totals
  SymbolizeReport report;
  const ChunkSink* sink = nullptr;             // end of session: where named frames go
  std::vector<model::LocationUpdate> updates;  // not yet given to sink
  Status sink_status = ok_status();

  void flush(std::vector<model::Counter> counters = {});

  model::Location current(uint64_t id) const;
  void emit(uint64_t id, model::Location& now);
  void take_tables(archive::ChunkDelta& chunk);
  void follow_location(uint64_t id, model::Location& loc);
  void follow_update(model::LocationUpdate& u);
  std::vector<ModuleRef> user_modules(std::vector<uint64_t>& others);
  void run_job(Job& job, const SymbolizeOptions& opt);
  void apply_job(Job& job);
  void name_users(std::vector<ModuleRef>& modules, const SymbolizeOptions& opt);
  void name_pending(const std::vector<uint64_t>& ids);
  std::vector<model::Counter> set_counters();
};

// A pending location as the output holds it so far.
model::Location StreamSymbolizer::State::current(uint64_t id) const {
  const LocState& st = locations[id - 1];
  model::Location loc;
  loc.mapping_id = st.mapping_id;
  loc.address = st.address;
  loc.file_offset = st.file_offset;
  loc.is_return_address = st.is_return_address;
  loc.kind = st.kind;
  loc.status = st.status;
  if (auto it = pending_lines.find(id); it != pending_lines.end()) loc.lines = it->second;
  return loc;
}

// Records a pending location's final state, with an update when it changed.
void StreamSymbolizer::State::emit(uint64_t id, model::Location& now) {
  LocState& st = locations[id - 1];
  st.pending = false;
  auto it = pending_lines.find(id);
  static const std::vector<model::Line> kNone;
  bool changed = now.status != st.status || now.kind != st.kind ||
                 !same_lines(now.lines, it != pending_lines.end() ? it->second : kNone);
  st.status = now.status;
  st.kind = now.kind;
  if (changed) updates.push_back({id, std::move(now.lines), now.status, now.kind});
}

// Copies what naming needs, renumbers the chunk's function references for the output.
void StreamSymbolizer::State::take_tables(archive::ChunkDelta& chunk) {
  auto& e = chunk.entries;
  for (auto& m : e.mappings) tables.mappings.push_back(m);
  for (auto& k : e.kernel_symbols) tables.kernel_symbols.push_back(k);
  for (auto& j : e.jit_maps) tables.jit_maps.push_back(j);
  for (auto& c : e.counters) tables.set_counter(c.name, c.value);
  for (auto& f : e.functions) {
    tables.functions.push_back(std::move(f));
    function_map.push_back(tables.functions.size());
    functions.add_existing(tables.functions.size());
  }
  e.functions.clear();
  auto renumber = [&](std::vector<model::Line>& lines) {
    for (auto& l : lines) l.function_id = function_map[l.function_id - 1];
  };
  for (auto& l : e.locations) renumber(l.lines);
  for (auto& u : e.location_updates) renumber(u.lines);
}

// Frames to name wait for the end of the session (user frames then need only their LocState,
// and kernel and JIT frames need tables recorders write last); unmapped ones are marked now.
void StreamSymbolizer::State::follow_location(uint64_t id, model::Location& loc) {
  LocState& st = locations[id - 1];
  if (st.pending) {
    st.pending = false;
    pending_lines.erase(id);
  }
  switch (classify(tables, loc)) {
    case LocationClass::done:
      break;
    case LocationClass::unmapped:
      loc.status = SymbolStatus::unmapped;
      break;
    case LocationClass::user:
    case LocationClass::kernel:
    case LocationClass::jit:
      st.pending = true;
      pending.push_back(id);
      if (!loc.lines.empty()) pending_lines[id] = loc.lines;
      break;
  }
  st.status = loc.status;
  st.kind = loc.kind;
}

// An input update gives a location new lines, status and kind: handled as the location it makes.
void StreamSymbolizer::State::follow_update(model::LocationUpdate& u) {
  model::Location loc = current(u.location_id);
  loc.kind = u.kind;
  loc.status = u.status;
  loc.lines = std::move(u.lines);
  follow_location(u.location_id, loc);
  u.lines = std::move(loc.lines);
  u.status = loc.status;
}

// The binaries of the pending user frames, in order of first use (grouped by build-id, else
// path); the other pending ids (kernel, JIT) go to `others`.
std::vector<ModuleRef> StreamSymbolizer::State::user_modules(std::vector<uint64_t>& others) {
  std::sort(pending.begin(), pending.end());
  pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
  ModuleGrouper grouper(tables.mappings.size());
  for (uint64_t id : pending) {
    const LocState& st = locations[id - 1];
    if (!st.pending) continue;
    if (classify(tables, current(id)) != LocationClass::user) {
      others.push_back(id);
      continue;
    }
    grouper.add(id, st.mapping_id, tables.mapping(st.mapping_id));
  }
  pending.clear();
  pending.shrink_to_fit();
  return grouper.take();
}

void StreamSymbolizer::State::run_job(Job& job, const SymbolizeOptions& opt) {
  const ModuleRef& mod = *job.module;
  job.report.frames = mod.location_ids.size();
  auto resolver = open_module(finder, mod.paths, mod.build_id, opt.resolver, job.report, &job.miss);
  if (!resolver) return;
  job.is_go = resolver->is_go();
  // Address order (neighbours share CUs and line tables), each distinct lookup once.
  struct Query {
    uint64_t file_offset, mapping_offset;
    bool return_address;
    size_t index;
    auto key() const { return std::tie(file_offset, return_address, mapping_offset); }
  };
  std::vector<Query> queries;
  queries.reserve(mod.location_ids.size());
  for (size_t i = 0; i < mod.location_ids.size(); ++i) {
    const LocState& st = locations[mod.location_ids[i] - 1];
    queries.push_back(
        {st.file_offset, tables.mapping(st.mapping_id).file_offset, st.is_return_address, i});
  }
  std::sort(queries.begin(), queries.end(),
            [](const Query& a, const Query& b) { return a.key() < b.key(); });
  job.result_of.assign(mod.location_ids.size(), 0);
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    if (i == 0 || queries[i - 1].key() != q.key())
      job.add_result(resolver->resolve(q.file_offset, q.return_address, q.mapping_offset));
    job.result_of[q.index] = static_cast<uint32_t>(job.begin.size() - 2);
  }
}

void StreamSymbolizer::State::apply_job(Job& job) {
  std::vector<uint64_t> function_ids(job.functions.size(), 0);  // interned on first use
  const auto& ids = job.module->location_ids;
  for (size_t i = 0; i < ids.size(); ++i) {
    model::Location loc = current(ids[i]);
    uint32_t from = 0, to = 0;
    if (!job.result_of.empty())
      from = job.begin[job.result_of[i]], to = job.begin[job.result_of[i] + 1];
    if (from == to) {  // not looked up, or no symbol
      loc.status = job.miss;
      ++job.report.unresolved;
    } else {
      loc.lines.clear();
      for (uint32_t k = from; k < to; ++k) {
        const auto& f = job.frames[k];
        uint64_t& id = function_ids[f.function];
        if (id == 0) {
          const Frame& fn = job.functions[f.function];
          id = functions.intern(fn.name, fn.system_name, fn.decl_file, fn.decl_line);
        }
        loc.lines.push_back({id, f.line, f.column, k > from});
      }
      loc.status = SymbolStatus::resolved;
      ++report.newly_resolved;
      if (job.is_go && (loc.kind == FrameKind::unknown || loc.kind == FrameKind::native))
        loc.kind = FrameKind::go;
      if (loc.kind == FrameKind::unknown) loc.kind = FrameKind::native;
    }
    emit(ids[i], loc);
    // Bounded output buffer; cut at fixed points, so the output does not depend on `jobs`.
    if (updates.size() >= kUpdatesPerFlush) flush();
  }
}

// User frames, binary by binary as symbolize_session does; `jobs` binaries at a time over
// threads, each closed (and its answers applied and freed) before the next wave.
void StreamSymbolizer::State::name_users(std::vector<ModuleRef>& modules,
                                         const SymbolizeOptions& opt) {
  size_t wave = std::max(1u, opt.jobs);
  for (size_t first = 0; first < modules.size(); first += wave) {
    std::vector<Job> jobs(std::min(wave, modules.size() - first));
    for (size_t i = 0; i < jobs.size(); ++i) jobs[i].module = &modules[first + i];
    std::vector<std::thread> threads;
    for (size_t i = 1; i < jobs.size(); ++i)
      threads.emplace_back([&, i] { run_job(jobs[i], opt); });
    run_job(jobs[0], opt);
    for (auto& t : threads) t.join();
    size_t done = first;
    for (auto& job : jobs) {
      apply_job(job);
      report.modules.push_back(std::move(job.report));
      job.module->location_ids = {};
      flush();  // per binary, not per wave: the output must not depend on `jobs`
      if (opt.on_binary_done) opt.on_binary_done(++done, modules.size());
    }
  }
}

// Kernel and JIT frames, named from the session's own tables; an update only where the frame
// changes (an already symbolized session gets none).
void StreamSymbolizer::State::name_pending(const std::vector<uint64_t>& ids) {
  KernelSymbols kernel(tables.kernel_symbols);
  JitSymbols jit(tables.jit_maps);
  for (uint64_t id : ids) {
    model::Location loc = current(id);
    std::optional<std::string> name;
    if (classify(tables, loc) == LocationClass::kernel) {
      name = kernel.empty() ? std::nullopt : kernel.lookup(loc.address);
      if (!name) loc.status = kernel.empty() ? SymbolStatus::no_file : SymbolStatus::no_symbol;
      loc.kind = FrameKind::kernel;
    } else {
      int32_t pid = tables.mapping(loc.mapping_id).pid;
      name = jit.lookup(pid, loc.address);
      if (!name) loc.status = jit.has_pid(pid) ? SymbolStatus::no_symbol : SymbolStatus::no_file;
      if (loc.kind == FrameKind::unknown || loc.kind == FrameKind::native)
        loc.kind = FrameKind::jit;
    }
    if (name) apply_name(functions, loc, *name), ++report.newly_resolved;
    emit(id, loc);
  }
  flush();
}

// Gives the names made so far to the sink: one more output chunk (or several, by the writer).
void StreamSymbolizer::State::flush(std::vector<model::Counter> counters) {
  if (updates.empty() && counters.empty() && tables.functions.size() == written.functions) return;
  archive::ChunkDelta d;
  d.base = written;
  d.entries.functions.assign(
      tables.functions.begin() + static_cast<std::ptrdiff_t>(written.functions),
      tables.functions.end());
  d.entries.location_updates = std::move(updates);
  d.entries.counters = std::move(counters);
  updates = {};
  written = written.plus(d.entries);
  if (sink_status) sink_status = (*sink)(d);
}

// The symbolize.<status> counters; returns those that changed (to be written).
std::vector<model::Counter> StreamSymbolizer::State::set_counters() {
  report.by_status = {};
  for (const auto& st : locations)
    if (st.status != SymbolStatus::symbolic) ++report.by_status[static_cast<size_t>(st.status)];
  std::vector<model::Counter> changed;
  for (SymbolStatus st :
       {SymbolStatus::resolved, SymbolStatus::no_file, SymbolStatus::build_id_mismatch,
        SymbolStatus::no_symbol, SymbolStatus::unmapped}) {
    std::string name = std::string("symbolize.") + model::to_string(st);
    auto value = static_cast<int64_t>(report.count(st));
    auto it = std::find_if(tables.counters.begin(), tables.counters.end(),
                           [&](const model::Counter& c) { return c.name == name; });
    if (it != tables.counters.end() && it->value == value) continue;
    tables.set_counter(name, value);
    changed.push_back({name, value});
  }
  return changed;
}

StreamSymbolizer::StreamSymbolizer(SymbolizeOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>(options_.finder)) {}

StreamSymbolizer::~StreamSymbolizer() = default;

void StreamSymbolizer::begin_session(model::Header& header) {
  state_ = std::make_unique<State>(options_.finder);
  header.symbolized = true;
}

void StreamSymbolizer::symbolize_chunk(archive::ChunkDelta& chunk) {
  State& s = *state_;
  archive::TableCounts out_base = chunk.base;
  out_base.functions = s.tables.functions.size();
  s.take_tables(chunk);
  auto& e = chunk.entries;
  for (size_t i = 0; i < e.locations.size(); ++i) {
    model::Location& loc = e.locations[i];
    s.locations.push_back({loc.address, loc.file_offset, static_cast<uint32_t>(loc.mapping_id),
                           loc.status, loc.kind, loc.is_return_address, false});
    s.follow_location(chunk.base.locations + i + 1, loc);
  }
  for (auto& u : e.location_updates) s.follow_update(u);
  // The output's functions of this chunk: the input's (nothing is interned before the end).
  e.functions.assign(s.tables.functions.begin() + static_cast<std::ptrdiff_t>(out_base.functions),
                     s.tables.functions.end());
  chunk.base = out_base;
  s.written = out_base.plus(e);
}

Status StreamSymbolizer::end_session(const ChunkSink& sink) {
  State& s = *state_;
  s.sink = &sink;
  std::vector<uint64_t> others;
  auto modules = s.user_modules(others);
  s.name_users(modules, options_);
  s.name_pending(others);
  s.pending_lines.clear();
  s.flush(s.set_counters());
  s.sink = nullptr;
  return s.sink_status;
}

const std::vector<model::Counter>& StreamSymbolizer::counters() const {
  return state_->tables.counters;
}

SymbolizeReport StreamSymbolizer::take_report() { return std::move(state_->report); }

}  // namespace gp::symbolize
