#pragma once
// The in-memory form of one archive session (formats/archive.capnp, formats/README.md).
// Every tool reads and writes through these plain structs; only libcore/src/archive knows capnp.
//
// Ids are 1-based positions in the session's tables (0 = none), exactly as in the archive, so
// `session.location(id)` is a vector index. Byte strings (paths, comm, names) are std::string
// holding raw bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gp::model {

enum class SourceKind : uint8_t { unknown, system, runtime, imported, folded, merged };

enum class FrameKind : uint8_t {
  unknown,
  native,
  kernel,
  java,
  python,
  ruby,
  php,
  dotnet,
  node,
  go,
  jit,
  python_native,
  pseudo,
  interpreted,
  inlined,
};
inline constexpr int kFrameKindCount = 15;

enum class SymbolStatus : uint8_t {
  unsymbolized,
  resolved,
  no_file,
  build_id_mismatch,
  no_symbol,
  unmapped,
  symbolic,
};

enum class MappingKind : uint8_t { user, kernel, module, vdso, anonymous, jit_map };

struct HostInfo {
  std::string hostname;
  std::string boot_id;
  std::string kernel_release;
  std::string kernel_version;
  std::string machine;
  std::string kernel_build_id;  // raw note bytes
  uint32_t cpu_count = 0;
  std::string os_release;
};

struct Sampling {
  std::string event;
  uint32_t frequency_hz = 0;
  uint64_t period = 0;
  std::string mode;
  int64_t duration_ns = 0;
};

struct Header {
  uint16_t format_major = 0;
  uint16_t format_minor = 0;
  std::string producer;
  std::string producer_version;
  std::vector<std::string> argv;
  SourceKind source = SourceKind::unknown;
  std::string session_id;
  HostInfo host;
  int64_t start_time_ns = 0;  // CLOCK_REALTIME, ns since the epoch
  int64_t monotonic_start_ns = 0;
  Sampling sampling;
  bool symbolized = false;
  std::string metadata_json;  // JSON object text or empty
};

struct Process {
  int32_t pid = 0;
  int32_t ppid = 0;
  int32_t ns_pid = 0;
  std::string comm;
  std::string exe;
  std::vector<std::string> cmdline;
  int64_t start_time_ns = 0;
  uint32_t uid = 0;
  std::string cgroup;
  std::string container_id;
  std::string container_name;
  std::string appid;
  std::string app_metadata_json;
  bool exited = false;
  std::string runtime;
  std::string error_frame;
};

struct Thread {
  int32_t tid = 0;
  int32_t pid = 0;
  std::string comm;
};

struct Mapping {
  int32_t pid = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;
  std::string path;
  std::string build_id;  // raw bytes
  uint64_t dev = 0;
  uint64_t inode = 0;
  MappingKind kind = MappingKind::user;
  bool operator==(const Mapping&) const = default;
};

struct Function {
  std::string name;
  std::string system_name;
  std::string file_name;
  uint32_t start_line = 0;
  std::string package;  // Python: "name==version" of the file's package; "" when unknown
};

struct Line {
  uint64_t function_id = 0;
  uint32_t line = 0;
  uint32_t column = 0;
  bool inlined = false;
};

struct Location {
  uint64_t mapping_id = 0;
  uint64_t address = 0;
  uint64_t file_offset = 0;
  FrameKind kind = FrameKind::unknown;
  std::vector<Line> lines;  // outermost first; empty when unsymbolized
  SymbolStatus status = SymbolStatus::unsymbolized;
  bool is_return_address = false;
};

struct LocationUpdate {
  uint64_t location_id = 0;
  std::vector<Line> lines;
  SymbolStatus status = SymbolStatus::unsymbolized;
  FrameKind kind = FrameKind::unknown;
};

// How a stack's user part ended: a walk with unwind tables knows whether it reached the
// outermost frame; a frame-pointer walk (and every producer without that knowledge) cannot tell.
enum class StackEnd : uint8_t { unknown = 0, complete = 1, truncated = 2 };

struct Stack {
  std::vector<uint64_t> location_ids;  // leaf first
  StackEnd end = StackEnd::unknown;
};

struct Sample {
  int32_t pid = 0;
  int32_t tid = 0;
  uint64_t stack_id = 0;
  uint64_t count = 0;
  int32_t cpu = -1;
  uint64_t weight = 0;
  std::string comm;  // the process's name when sampled; empty: the newest Process entry's
};

struct KernelSymbol {
  uint64_t address = 0;
  std::string name;
  std::string module;  // empty for the kernel image
  char type = 't';
};

struct JitEntry {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;
};

struct JitMap {
  int32_t pid = 0;
  std::string path;
  std::vector<JitEntry> entries;
};

struct StackCopy {
  int32_t pid = 0;
  int32_t tid = 0;
  std::vector<uint64_t> registers;
  std::string stack;
  uint64_t kernel_stack_id = 0;
  uint64_t count = 0;
};

struct Counter {
  std::string name;
  int64_t value = 0;
};

struct Trailer {
  bool clean_close = false;
  int64_t end_time_ns = 0;
  uint64_t chunk_count = 0;
  uint64_t sample_count = 0;
  std::vector<Counter> counters;
};

// One session: a header, tables that only grow, samples, and (when it closed cleanly) a trailer.
struct Session {
  Header header;
  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<Mapping> mappings;
  std::vector<Function> functions;
  std::vector<Location> locations;
  std::vector<Stack> stacks;
  std::vector<Sample> samples;
  std::vector<KernelSymbol> kernel_symbols;
  std::vector<JitMap> jit_maps;
  std::vector<StackCopy> stack_copies;
  std::vector<Counter> counters;                 // latest value per name, in first-seen order
  std::vector<LocationUpdate> location_updates;  // pending (writer side only)
  std::optional<Trailer> trailer;

  // Set by the reader when the session has no trailer or broke off in a corrupt message.
  bool truncated = false;

  const Function& function(uint64_t id) const { return functions[id - 1]; }
  const Location& location(uint64_t id) const { return locations[id - 1]; }
  const Mapping& mapping(uint64_t id) const { return mappings[id - 1]; }
  const Stack& stack(uint64_t id) const { return stacks[id - 1]; }
  Location& location(uint64_t id) { return locations[id - 1]; }

  // Sets (or replaces) a named counter.
  void set_counter(const std::string& name, int64_t value);
  // Returns a counter's value, 0 when absent.
  int64_t counter(const std::string& name) const;
  // Sum of sample counts.
  uint64_t total_samples() const;
  // The newest Process entry for pid, or nullptr.
  const Process* find_process(int32_t pid) const;
};

// How many entries each table of a session held before a chunk: the ids of the chunk's first
// entries are these plus one (formats/README.md §4.1). Also the id base of a SessionBuilder whose
// earlier entries were written and dropped (gp-record).
struct TableCounts {
  uint64_t processes = 0, threads = 0, mappings = 0, functions = 0, locations = 0, stacks = 0,
           kernel_symbols = 0, jit_maps = 0;
  bool operator==(const TableCounts&) const = default;
  // The counts after a chunk holding `entries`.
  TableCounts plus(const Session& entries) const;
};

// Every session of one archive stream, in stream order.
struct Archive {
  std::vector<Session> sessions;
  bool truncated = false;  // some session was cut or corrupt: output is partial (exit 3)
  std::string problem;     // why, for the warning line; empty when not truncated
};

// Marks a header as a session starting now: a random session id (UUID text) and the
// wall-clock and monotonic start times, so producers stamp sessions the same way.
void start_session_now(Header& header);

const char* to_string(FrameKind kind);
const char* to_string(SymbolStatus status);
const char* to_string(MappingKind kind);
const char* to_string(SourceKind kind);

}  // namespace gp::model
