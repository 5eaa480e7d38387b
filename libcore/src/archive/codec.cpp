#include "codec.h"

#include <capnp/any.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace gp::archive::codec {
namespace {

kj::ArrayPtr<const kj::byte> bytes(const std::string& s) {
  return kj::arrayPtr(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}
std::string str(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
}
// Text ends at its first NUL: the writer sets Text from C strings (which stop there), so
// reading further would make read -> write -> read change the data (found by archive_fuzz).
std::string str(capnp::Text::Reader t) {
  return std::string(t.cStr(), ::strnlen(t.cStr(), t.size()));
}

// Unknown enumerants (from a newer writer) read as the first value ("unknown"/default).
template <typename E>
E enum_in_range(uint16_t raw, int count) {
  return raw < count ? static_cast<E>(raw) : static_cast<E>(0);
}

void fill_lines(capnp::List<schema::Line>::Builder b, const std::vector<model::Line>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    b[i].setFunctionId(lines[i].function_id);
    b[i].setLine(lines[i].line);
    b[i].setColumn(lines[i].column);
    b[i].setInlined(lines[i].inlined);
  }
}

Result<std::vector<model::Line>> read_lines(capnp::List<schema::Line>::Reader r,
                                            uint64_t functions) {
  std::vector<model::Line> out;
  out.reserve(r.size());
  for (auto l : r) {
    if (l.getFunctionId() == 0 || l.getFunctionId() > functions)
      return make_error("line refers to function " + std::to_string(l.getFunctionId()) + " of " +
                        std::to_string(functions));
    out.push_back({l.getFunctionId(), l.getLine(), l.getColumn(), l.getInlined()});
  }
  return out;
}

void fill_counters(capnp::List<schema::Counter>::Builder b, const std::vector<model::Counter>& cs) {
  for (size_t i = 0; i < cs.size(); ++i) {
    b[i].setName(cs[i].name);
    b[i].setValue(cs[i].value);
  }
}

template <typename List, typename F>
void fill_range(List list, const size_t (&range)[2], F&& fill) {
  for (size_t i = range[0]; i < range[1]; ++i) fill(list[i - range[0]], i);
}

constexpr size_t count(const size_t (&range)[2]) { return range[1] - range[0]; }

// Room for n more entries, growing geometrically: a session arrives in many chunks, and an exact
// reserve per chunk would move the whole table every time. n comes from the message: bounded
// so that a list that fails validation half-way cannot make a big allocation by itself.
template <typename T>
void make_room(std::vector<T>& v, size_t n) {
  n = std::min<size_t>(n, 1 << 20);
  if (v.capacity() - v.size() >= n) return;
  v.reserve(std::max(v.size() + n, v.capacity() * 2));
}

// Bytes one element of a list takes in the message.
size_t element_bytes(capnp::AnyList::Reader list) {
  switch (list.getElementSize()) {
    case capnp::ElementSize::VOID:
    case capnp::ElementSize::BIT:
      return 0;
    case capnp::ElementSize::BYTE:
      return 1;
    case capnp::ElementSize::TWO_BYTES:
      return 2;
    case capnp::ElementSize::FOUR_BYTES:
      return 4;
    case capnp::ElementSize::EIGHT_BYTES:
    case capnp::ElementSize::POINTER:
      return 8;
    case capnp::ElementSize::INLINE_COMPOSITE: {  // every element has the list's struct size
      auto first = list.as<capnp::List<capnp::AnyStruct>>()[0];
      return first.getDataSection().size() + 8 * first.getPointerSection().size();
    }
  }
  return 0;
}

// A list is materialised only when the message can honestly hold it (formats/README.md §6):
// at most `max` entries, each taking at least `min_bytes` of the message. Every writer gives a
// struct or pointer element at least a word; a list of zero-size (or bit/byte-sized) elements
// costs nothing in the message but a model entry each, which is how a 135 KB file made 5.85 GB.
template <typename List>
Status check_list(List list, size_t max, const char* what, size_t min_bytes = 8) {
  const size_t n = list.size();
  if (n == 0) return ok_status();
  if (n > max)
    return make_error(std::string(what) + " list has " + std::to_string(n) + " entries (limit " +
                      std::to_string(max) + ")");
  if (element_bytes(capnp::AnyList::Reader(list)) < min_bytes)
    return make_error(std::string(what) + " list has " + std::to_string(n) +
                      " entries smaller than any writer makes them");
  return ok_status();
}

// The top-level lists of a chunk, before any of them is applied: a chunk over a limit is
// refused whole (never applied in part).
Status check_chunk_lists(schema::Chunk::Reader r, const ReaderLimits& lim) {
  const size_t max = lim.max_list_entries;
  for (Status st :
       {check_list(r.getProcesses(), max, "process"), check_list(r.getThreads(), max, "thread"),
        check_list(r.getMappings(), max, "mapping"), check_list(r.getFunctions(), max, "function"),
        check_list(r.getLocations(), max, "location"),
        check_list(r.getLocationUpdates(), max, "location update"),
        check_list(r.getStacks(), max, "stack"), check_list(r.getSamples(), max, "sample"),
        check_list(r.getKernelSymbols(), max, "kernel symbol"),
        check_list(r.getJitMaps(), max, "JIT map"),
        check_list(r.getStackCopies(), max, "stack copy"),
        check_list(r.getCounters(), max, "counter")})
    if (!st) return st;
  return ok_status();
}

}  // namespace

void fill_header(schema::Header::Builder b, const model::Header& h) {
  b.setMagic(schema::ARCHIVE_MAGIC);
  b.setFormatMajor(schema::FORMAT_MAJOR);
  b.setFormatMinor(schema::FORMAT_MINOR);
  b.setProducer(h.producer);
  b.setProducerVersion(h.producer_version);
  auto argv = b.initArgv(h.argv.size());
  for (size_t i = 0; i < h.argv.size(); ++i) argv.set(i, bytes(h.argv[i]));
  b.setSource(static_cast<schema::SourceKind>(h.source));
  b.setSessionId(h.session_id);
  auto host = b.initHost();
  host.setHostname(h.host.hostname);
  host.setBootId(h.host.boot_id);
  host.setKernelRelease(h.host.kernel_release);
  host.setKernelVersion(h.host.kernel_version);
  host.setMachine(h.host.machine);
  host.setKernelBuildId(bytes(h.host.kernel_build_id));
  host.setCpuCount(h.host.cpu_count);
  host.setOsRelease(h.host.os_release);
  b.setStartTimeNs(h.start_time_ns);
  b.setMonotonicStartNs(h.monotonic_start_ns);
  auto smp = b.initSampling();
  smp.setEvent(h.sampling.event);
  smp.setFrequencyHz(h.sampling.frequency_hz);
  smp.setPeriod(h.sampling.period);
  smp.setMode(h.sampling.mode);
  smp.setDurationNs(h.sampling.duration_ns);
  b.setSymbolized(h.symbolized);
  b.setMetadataJson(h.metadata_json);
}

Result<model::Header> read_header(schema::Header::Reader r) {
  if (r.getMagic() != schema::ARCHIVE_MAGIC) return make_error("not a gp archive (bad magic)");
  model::Header h;
  h.format_major = r.getFormatMajor();
  h.format_minor = r.getFormatMinor();
  if (h.format_major > schema::FORMAT_MAJOR)
    return make_error("archive format " + std::to_string(h.format_major) + "." +
                      std::to_string(h.format_minor) + " is newer than this gp reads (" +
                      std::to_string(schema::FORMAT_MAJOR) + ".x): upgrade gp to read it");
  h.producer = str(r.getProducer());
  h.producer_version = str(r.getProducerVersion());
  if (auto st = check_list(r.getArgv(), ReaderLimits{}.max_list_entries, "argv"); !st)
    return st.error();
  for (auto a : r.getArgv()) h.argv.push_back(str(a));
  h.source = enum_in_range<model::SourceKind>(static_cast<uint16_t>(r.getSource()), 6);
  h.session_id = str(r.getSessionId());
  auto host = r.getHost();
  h.host.hostname = str(host.getHostname());
  h.host.boot_id = str(host.getBootId());
  h.host.kernel_release = str(host.getKernelRelease());
  h.host.kernel_version = str(host.getKernelVersion());
  h.host.machine = str(host.getMachine());
  h.host.kernel_build_id = str(host.getKernelBuildId());
  h.host.cpu_count = host.getCpuCount();
  h.host.os_release = str(host.getOsRelease());
  h.start_time_ns = r.getStartTimeNs();
  h.monotonic_start_ns = r.getMonotonicStartNs();
  auto smp = r.getSampling();
  h.sampling.event = str(smp.getEvent());
  h.sampling.frequency_hz = smp.getFrequencyHz();
  h.sampling.period = smp.getPeriod();
  h.sampling.mode = str(smp.getMode());
  h.sampling.duration_ns = smp.getDurationNs();
  h.symbolized = r.getSymbolized();
  h.metadata_json = str(r.getMetadataJson());
  return h;
}

void fill_chunk(schema::Chunk::Builder b, const model::Session& s, const ChunkRanges& r) {
  if (count(r.processes)) {
    fill_range(b.initProcesses(count(r.processes)), r.processes, [&](auto p, size_t i) {
      const auto& m = s.processes[i];
      p.setPid(m.pid);
      p.setPpid(m.ppid);
      p.setNsPid(m.ns_pid);
      p.setComm(bytes(m.comm));
      p.setExe(bytes(m.exe));
      auto cl = p.initCmdline(m.cmdline.size());
      for (size_t k = 0; k < m.cmdline.size(); ++k) cl.set(k, bytes(m.cmdline[k]));
      p.setStartTimeNs(m.start_time_ns);
      p.setUid(m.uid);
      p.setCgroup(bytes(m.cgroup));
      p.setContainerId(m.container_id);
      p.setContainerName(m.container_name);
      p.setAppid(m.appid);
      p.setAppMetadataJson(m.app_metadata_json);
      p.setExited(m.exited);
      p.setRuntime(m.runtime);
      p.setErrorFrame(m.error_frame);
    });
  }
  if (count(r.threads)) {
    fill_range(b.initThreads(count(r.threads)), r.threads, [&](auto t, size_t i) {
      t.setTid(s.threads[i].tid);
      t.setPid(s.threads[i].pid);
      t.setComm(bytes(s.threads[i].comm));
    });
  }
  if (count(r.mappings)) {
    fill_range(b.initMappings(count(r.mappings)), r.mappings, [&](auto m, size_t i) {
      const auto& v = s.mappings[i];
      m.setPid(v.pid);
      m.setStart(v.start);
      m.setEnd(v.end);
      m.setFileOffset(v.file_offset);
      m.setPath(bytes(v.path));
      m.setBuildId(bytes(v.build_id));
      m.setDev(v.dev);
      m.setInode(v.inode);
      m.setKind(static_cast<schema::MappingKind>(v.kind));
    });
  }
  if (count(r.functions)) {
    fill_range(b.initFunctions(count(r.functions)), r.functions, [&](auto f, size_t i) {
      const auto& v = s.functions[i];
      f.setName(bytes(v.name));
      f.setSystemName(bytes(v.system_name));
      f.setFileName(bytes(v.file_name));
      f.setStartLine(v.start_line);
      if (!v.package.empty()) f.setPackage(bytes(v.package));
    });
  }
  if (count(r.locations)) {
    fill_range(b.initLocations(count(r.locations)), r.locations, [&](auto l, size_t i) {
      const auto& v = s.locations[i];
      l.setMappingId(v.mapping_id);
      l.setAddress(v.address);
      l.setFileOffset(v.file_offset);
      l.setKind(static_cast<schema::FrameKind>(v.kind));
      if (!v.lines.empty()) fill_lines(l.initLines(v.lines.size()), v.lines);
      l.setStatus(static_cast<schema::SymbolStatus>(v.status));
      l.setIsReturnAddress(v.is_return_address);
    });
  }
  if (count(r.stacks)) {
    fill_range(b.initStacks(count(r.stacks)), r.stacks, [&](auto st, size_t i) {
      const auto& ids = s.stacks[i].location_ids;
      auto list = st.initLocationIds(ids.size());
      for (size_t k = 0; k < ids.size(); ++k) list.set(k, ids[k]);
      st.setEnd(static_cast<schema::StackEnd>(s.stacks[i].end));
    });
  }
  if (count(r.samples)) {
    fill_range(b.initSamples(count(r.samples)), r.samples, [&](auto sm, size_t i) {
      const auto& v = s.samples[i];
      sm.setPid(v.pid);
      sm.setTid(v.tid);
      sm.setStackId(v.stack_id);
      sm.setCount(v.count);
      sm.setCpu(v.cpu);
      sm.setWeight(v.weight);
      if (!v.comm.empty()) sm.setComm(bytes(v.comm));
    });
  }
  if (count(r.kernel_symbols)) {
    fill_range(b.initKernelSymbols(count(r.kernel_symbols)), r.kernel_symbols,
               [&](auto k, size_t i) {
                 const auto& v = s.kernel_symbols[i];
                 k.setAddress(v.address);
                 k.setName(bytes(v.name));
                 k.setModule(bytes(v.module));
                 k.setType(static_cast<uint8_t>(v.type));
               });
  }
  if (count(r.jit_maps)) {
    fill_range(b.initJitMaps(count(r.jit_maps)), r.jit_maps, [&](auto j, size_t i) {
      const auto& v = s.jit_maps[i];
      j.setPid(v.pid);
      j.setPath(bytes(v.path));
      auto es = j.initEntries(v.entries.size());
      for (size_t k = 0; k < v.entries.size(); ++k) {
        es[k].setStart(v.entries[k].start);
        es[k].setSize(v.entries[k].size);
        es[k].setName(bytes(v.entries[k].name));
      }
    });
  }
  if (count(r.stack_copies)) {
    fill_range(b.initStackCopies(count(r.stack_copies)), r.stack_copies, [&](auto c, size_t i) {
      const auto& v = s.stack_copies[i];
      c.setPid(v.pid);
      c.setTid(v.tid);
      auto regs = c.initRegisters(v.registers.size());
      for (size_t k = 0; k < v.registers.size(); ++k) regs.set(k, v.registers[k]);
      c.setStack(bytes(v.stack));
      c.setKernelStackId(v.kernel_stack_id);
      c.setCount(v.count);
    });
  }
  if (count(r.location_updates)) {
    fill_range(b.initLocationUpdates(count(r.location_updates)), r.location_updates,
               [&](auto u, size_t i) {
                 const auto& v = s.location_updates[i];
                 u.setLocationId(v.location_id);
                 if (!v.lines.empty()) fill_lines(u.initLines(v.lines.size()), v.lines);
                 u.setStatus(static_cast<schema::SymbolStatus>(v.status));
                 u.setKind(static_cast<schema::FrameKind>(v.kind));
               });
  }
  if (r.with_counters && !s.counters.empty())
    fill_counters(b.initCounters(s.counters.size()), s.counters);
}

Status apply_chunk(schema::Chunk::Reader r, model::Session& s, const TableCounts& base,
                   bool apply_updates, const ReaderLimits& limits) {
  if (auto st = check_chunk_lists(r, limits); !st) return st;
  const size_t max = limits.max_list_entries;
  for (auto p : r.getProcesses()) {
    if (auto st = check_list(p.getCmdline(), max, "command line"); !st) return st;
    model::Process m;
    m.pid = p.getPid();
    m.ppid = p.getPpid();
    m.ns_pid = p.getNsPid();
    m.comm = str(p.getComm());
    m.exe = str(p.getExe());
    for (auto a : p.getCmdline()) m.cmdline.push_back(str(a));
    m.start_time_ns = p.getStartTimeNs();
    m.uid = p.getUid();
    m.cgroup = str(p.getCgroup());
    m.container_id = str(p.getContainerId());
    m.container_name = str(p.getContainerName());
    m.appid = str(p.getAppid());
    m.app_metadata_json = str(p.getAppMetadataJson());
    m.exited = p.getExited();
    m.runtime = str(p.getRuntime());
    m.error_frame = str(p.getErrorFrame());
    s.processes.push_back(std::move(m));
  }
  for (auto t : r.getThreads()) s.threads.push_back({t.getTid(), t.getPid(), str(t.getComm())});
  for (auto m : r.getMappings()) {
    model::Mapping v;
    v.pid = m.getPid();
    v.start = m.getStart();
    v.end = m.getEnd();
    if (v.end < v.start) return make_error("mapping ends before it starts");
    v.file_offset = m.getFileOffset();
    v.path = str(m.getPath());
    v.build_id = str(m.getBuildId());
    v.dev = m.getDev();
    v.inode = m.getInode();
    v.kind = enum_in_range<model::MappingKind>(static_cast<uint16_t>(m.getKind()), 6);
    s.mappings.push_back(std::move(v));
  }
  make_room(s.functions, r.getFunctions().size());
  for (auto f : r.getFunctions())
    s.functions.push_back({str(f.getName()), str(f.getSystemName()), str(f.getFileName()),
                           f.getStartLine(), str(f.getPackage())});
  make_room(s.locations, r.getLocations().size());
  for (auto l : r.getLocations()) {
    model::Location v;
    v.mapping_id = l.getMappingId();
    if (v.mapping_id > base.mappings + s.mappings.size())
      return make_error("location refers to mapping " + std::to_string(v.mapping_id) + " of " +
                        std::to_string(base.mappings + s.mappings.size()));
    v.address = l.getAddress();
    v.file_offset = l.getFileOffset();
    v.kind =
        enum_in_range<model::FrameKind>(static_cast<uint16_t>(l.getKind()), model::kFrameKindCount);
    if (auto st = check_list(l.getLines(), max, "line"); !st) return st;
    auto lines = read_lines(l.getLines(), base.functions + s.functions.size());
    if (!lines) return lines.error();
    v.lines = std::move(*lines);
    v.status = enum_in_range<model::SymbolStatus>(static_cast<uint16_t>(l.getStatus()), 7);
    v.is_return_address = l.getIsReturnAddress();
    s.locations.push_back(std::move(v));
  }
  const uint64_t locations = base.locations + s.locations.size();
  for (auto u : r.getLocationUpdates()) {
    model::LocationUpdate v;
    v.location_id = u.getLocationId();
    if (v.location_id == 0 || v.location_id > locations)
      return make_error("location update refers to location " + std::to_string(v.location_id) +
                        " of " + std::to_string(locations));
    if (auto st = check_list(u.getLines(), max, "line"); !st) return st;
    auto lines = read_lines(u.getLines(), base.functions + s.functions.size());
    if (!lines) return lines.error();
    v.lines = std::move(*lines);
    v.status = enum_in_range<model::SymbolStatus>(static_cast<uint16_t>(u.getStatus()), 7);
    v.kind =
        enum_in_range<model::FrameKind>(static_cast<uint16_t>(u.getKind()), model::kFrameKindCount);
    if (!apply_updates || v.location_id <= base.locations) {  // not a location `s` holds
      s.location_updates.push_back(std::move(v));
      continue;
    }
    auto& loc = s.location(v.location_id);
    loc.lines = std::move(v.lines);
    loc.status = v.status;
    loc.kind = v.kind;
  }
  make_room(s.stacks, r.getStacks().size());
  for (auto st : r.getStacks()) {
    model::Stack v;
    auto ids = st.getLocationIds();
    // A stack deeper than any unwinder makes is refused: 1M frames in a 33 KB file made a 1 GB
    // folded line.
    if (auto ok = check_list(ids, limits.max_stack_frames, "stack frame", 4); !ok) return ok;
    v.location_ids.reserve(ids.size());
    for (uint64_t id : ids) {
      if (id == 0 || id > locations)
        return make_error("stack refers to location " + std::to_string(id) + " of " +
                          std::to_string(locations));
      v.location_ids.push_back(id);
    }
    v.end = enum_in_range<model::StackEnd>(static_cast<uint16_t>(st.getEnd()), 3);
    s.stacks.push_back(std::move(v));
  }
  make_room(s.samples, r.getSamples().size());
  for (auto sm : r.getSamples()) {
    if (sm.getStackId() == 0 || sm.getStackId() > base.stacks + s.stacks.size())
      return make_error("sample refers to stack " + std::to_string(sm.getStackId()) + " of " +
                        std::to_string(base.stacks + s.stacks.size()));
    s.samples.push_back({sm.getPid(), sm.getTid(), sm.getStackId(), sm.getCount(), sm.getCpu(),
                         sm.getWeight(), str(sm.getComm())});
  }
  for (auto k : r.getKernelSymbols())
    s.kernel_symbols.push_back(
        {k.getAddress(), str(k.getName()), str(k.getModule()), static_cast<char>(k.getType())});
  for (auto j : r.getJitMaps()) {
    model::JitMap v;
    v.pid = j.getPid();
    v.path = str(j.getPath());
    if (auto st = check_list(j.getEntries(), limits.max_jit_entries, "JIT map entry"); !st)
      return st;
    for (auto e : j.getEntries())
      v.entries.push_back({e.getStart(), e.getSize(), str(e.getName())});
    s.jit_maps.push_back(std::move(v));
  }
  for (auto c : r.getStackCopies()) {
    model::StackCopy v;
    v.pid = c.getPid();
    v.tid = c.getTid();
    if (auto st = check_list(c.getRegisters(), max, "register"); !st) return st;
    for (uint64_t reg : c.getRegisters()) v.registers.push_back(reg);
    v.stack = str(c.getStack());
    v.kernel_stack_id = c.getKernelStackId();
    if (v.kernel_stack_id > base.stacks + s.stacks.size())
      return make_error("stack copy refers to a missing kernel stack");
    v.count = c.getCount();
    s.stack_copies.push_back(std::move(v));
  }
  for (auto c : r.getCounters()) s.set_counter(str(c.getName()), c.getValue());
  return ok_status();
}

void fill_trailer(schema::Trailer::Builder b, const model::Trailer& t) {
  b.setCleanClose(t.clean_close);
  b.setEndTimeNs(t.end_time_ns);
  b.setChunkCount(t.chunk_count);
  b.setSampleCount(t.sample_count);
  fill_counters(b.initCounters(t.counters.size()), t.counters);
}

model::Trailer read_trailer(schema::Trailer::Reader r) {
  model::Trailer t;
  // Counters beyond the limit are dropped: the trailer only repeats the chunks' final values.
  if (!check_list(r.getCounters(), ReaderLimits{}.max_list_entries, "counter")) return t;
  t.clean_close = r.getCleanClose();
  t.end_time_ns = r.getEndTimeNs();
  t.chunk_count = r.getChunkCount();
  t.sample_count = r.getSampleCount();
  for (auto c : r.getCounters()) t.counters.push_back({str(c.getName()), c.getValue()});
  return t;
}

}  // namespace gp::archive::codec
