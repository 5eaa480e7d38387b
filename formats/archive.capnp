@0xead0a0d1c1eacf43;
# The gp archive: the one contract between gp's tools. formats/README.md is its normative prose
# (framing, id rules, evolution). Fields are only ever added; ordinals only grow.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("gp::schema");

using Pid = Int32;
using BuildId = Data;
using Path = Data;
# Paths and names are bytes as the kernel gave them (not necessarily UTF-8).

const archiveMagic :UInt64 = 0x3176686372617067;
# The bytes "gparchv1" read as a little-endian integer; the first field of every Header.

const formatMajor :UInt16 = 1;
# Readers reject a Header whose formatMajor is greater than theirs.

const formatMinor :UInt16 = 2;
# Bumped when fields are added; readers accept any minor.

struct Message {
  # One self-delimiting capnp message of the stream. A session is
  # header, chunk*, trailer; sessions follow one another.
  union {
    header @0 :Header;
    chunk @1 :Chunk;
    trailer @2 :Trailer;
  }
}

enum SourceKind {
  unknown @0;
  system @1;     # gp-record: whole-system or pid-filtered sampling of native stacks
  runtime @2;    # gp-runtime: language profilers' symbolic stacks
  imported @3;   # gp-import: perf script text
  folded @4;     # read back from .col / folded text
  merged @5;     # gp-merge output
}

struct Header {
  magic @0 :UInt64;
  # Must equal archiveMagic.
  formatMajor @1 :UInt16;
  formatMinor @2 :UInt16;
  producer @3 :Text;
  # Tool name, e.g. "gp-record".
  producerVersion @4 :Text;
  argv @5 :List(Data);
  # The producer's command line (tokens that look like secrets are redacted by the producer).
  source @6 :SourceKind;
  sessionId @7 :Text;
  # Random, unique per session (UUID text).

  host @8 :HostInfo;
  startTimeNs @9 :Int64;
  # Wall clock (CLOCK_REALTIME) at session start, nanoseconds since the Unix epoch.
  monotonicStartNs @10 :Int64;
  # CLOCK_MONOTONIC at session start, so monotonic stamps can be turned into wall time.
  sampling @11 :Sampling;
  symbolized @12 :Bool;
  # True once gp-symbolize has run over this session (a no-op marker, not a promise of full names).
  metadataJson @13 :Text;
  # Free-form JSON object of extra run metadata (e.g. gProfiler's `metadata` for .col headers).
}

struct HostInfo {
  hostname @0 :Text;
  bootId @1 :Text;
  # /proc/sys/kernel/random/boot_id
  kernelRelease @2 :Text;
  # uname -r
  kernelVersion @3 :Text;
  # uname -v
  machine @4 :Text;
  # uname -m, e.g. "x86_64"
  kernelBuildId @5 :BuildId;
  # From /sys/kernel/notes; empty when unknown.
  cpuCount @6 :UInt32;
  osRelease @7 :Text;
  # PRETTY_NAME from os-release, when known.
}

struct Sampling {
  event @0 :Text;
  # "cpu-clock", "cycles", "task-clock", ...; gProfiler's "cpu-time" is written as "cpu-clock".
  frequencyHz @1 :UInt32;
  # 0 when sampling by period.
  period @2 :UInt64;
  # Events per sample when sampling by period; 0 in frequency mode.
  mode @3 :Text;
  # Unwinding mode: "fp", "dwarf", "runtime", "" when unknown.
  durationNs @4 :Int64;
  # Requested session length; the trailer has the real one.
}

struct Chunk {
  # New table entries since the previous chunk of the same session, then samples.
  # Table ids are implicit: the n-th entry of a table in a session (counting across chunks,
  # from 1) has id n. 0 means "none". A reference may only name an entry already defined
  # earlier in the session or earlier in the same chunk's lists (tables are read in field order).
  processes @0 :List(Process);
  threads @1 :List(Thread);
  mappings @2 :List(Mapping);
  functions @3 :List(Function);
  locations @4 :List(Location);
  stacks @5 :List(Stack);
  samples @6 :List(Sample);
  kernelSymbols @7 :List(KernelSymbol);
  jitMaps @8 :List(JitMap);
  stackCopies @9 :List(StackCopy);
  counters @10 :List(Counter);
  # Counters are cumulative for the session: a later value for the same name replaces an earlier one.
  locationUpdates @11 :List(LocationUpdate);
  # Symbolization results for already defined locations (gp-symbolize may emit them in place
  # of rewriting locations).
}

struct Process {
  pid @0 :Pid;
  # Pid in the recorder's pid namespace. Re-snapshots of a pid (exec, dlopen) append a new
  # Process entry; the newest entry for a pid wins for metadata.
  ppid @1 :Pid;
  nsPid @2 :Pid;
  # Pid inside the process's own pid namespace (containers); equal to pid when not namespaced.
  comm @3 :Data;
  # Main thread's comm (at most 15 bytes in Linux).
  exe @4 :Path;
  cmdline @5 :List(Data);
  startTimeNs @6 :Int64;
  # Process start, wall clock nanoseconds since the Unix epoch; 0 when unknown.
  uid @7 :UInt32;
  cgroup @8 :Data;
  containerId @9 :Text;
  containerName @10 :Text;
  # Empty when not in a container.
  appid @11 :Text;
  # gProfiler application identifier, e.g. "python: app.py (/srv/app.py)"; empty when none.
  appMetadataJson @12 :Text;
  # gProfiler per-application metadata as a JSON object text; empty when none.
  exited @13 :Bool;
  # The process was gone when the snapshot was attempted (metadata may be partial).
  runtime @14 :Text;
  # Detected runtime: "java", "python", "node", ... ; empty for native.
  errorFrame @15 :Text;
  # gProfiler's "[Profiling error: ...]" / "[Profiling skipped: ...]" text when a runtime
  # profiler failed or skipped this process; empty otherwise.
}

struct Thread {
  tid @0 :Int32;
  pid @1 :Pid;
  comm @2 :Data;
}

enum MappingKind {
  user @0;       # file-backed executable mapping of a process
  kernel @1;     # the kernel image ([kernel.kallsyms])
  module @2;     # a kernel module
  vdso @3;
  anonymous @4;  # anonymous executable memory (JIT code)
  jitMap @5;     # covered by a perf map (/tmp/perf-PID.map)
}

struct Mapping {
  pid @0 :Pid;
  # Owner process; 0 for kernel and module mappings.
  start @1 :UInt64;
  end @2 :UInt64;
  # [start, end) in the process's virtual address space.
  fileOffset @3 :UInt64;
  path @4 :Path;
  # As in /proc/PID/maps (inside the process's mount namespace), or "[vdso]", "[kernel.kallsyms]",
  # "[module]" names for kernel modules.
  buildId @5 :BuildId;
  # GNU build-id note bytes; empty when unknown.
  dev @6 :UInt64;
  inode @7 :UInt64;
  kind @8 :MappingKind;
}

enum FrameKind {
  unknown @0;
  native @1;      # user-space native code (C, C++, Rust, ...)
  kernel @2;
  java @3;
  python @4;
  ruby @5;
  php @6;
  dotnet @7;
  node @8;        # JavaScript (V8)
  go @9;
  jit @10;        # JIT code named by a perf map, runtime unknown
  pythonNative @11;  # native frame reported by a Python profiler (gProfiler's _[pn])
  pseudo @12;     # not code: error/skip frames, truncation markers
  interpreted @13;
  inlined @14;    # only used on Lines: a function inlined into its caller
}

enum SymbolStatus {
  unsymbolized @0;  # nothing tried yet
  resolved @1;
  noFile @2;        # binary/debug file not found
  buildIdMismatch @3;
  noSymbol @4;      # file found, address not covered by any symbol
  unmapped @5;      # address in no known mapping
  symbolic @6;      # born with a name (runtime profiler, import); nothing to resolve
}

struct Function {
  name @0 :Data;
  # Display name (demangled as the producer chose). For Python "func", Java "pkg/Cls.m(I)V", ...
  systemName @1 :Data;
  # Mangled/linkage name when different from name; empty otherwise.
  fileName @2 :Data;
  startLine @3 :UInt32;
  # First line of the function; 0 when unknown.
  package @4 :Data;
  # Python: the installed package the file belongs to, as gProfiler shows it after the line
  # ("requests==2.31.0", "standard-library==3.11.2"); empty when unknown or not asked for.
  # Since 1.2: archives written before it read as empty (unknown).
}

struct Line {
  functionId @0 :UInt64;
  # Must be > 0.
  line @1 :UInt32;
  column @2 :UInt32;
  inlined @3 :Bool;
  # True for every line but the outermost one of an inline chain.
}

struct Location {
  mappingId @0 :UInt64;
  # 0 when the address is in no known mapping or the frame was born symbolic.
  address @1 :UInt64;
  # Raw virtual address as sampled (kernel or process address space). 0 for symbolic frames.
  fileOffset @2 :UInt64;
  # Normalized address: offset in the mapped file (address - start + fileOffset), so the frame
  # can be resolved against the file anywhere.
  kind @3 :FrameKind;
  lines @4 :List(Line);
  # Empty when unsymbolized. Outermost first: the last line is the innermost inlined function.
  status @5 :SymbolStatus;
  isReturnAddress @6 :Bool;
  # True for caller frames whose address points after the call (symbolizers use pc-1).
}

struct LocationUpdate {
  locationId @0 :UInt64;
  lines @1 :List(Line);
  status @2 :SymbolStatus;
  kind @3 :FrameKind;
}

enum StackEnd {
  unknown @0;    # the producer cannot tell (frame-pointer walks, imports, runtime profilers)
  complete @1;   # the user stack reached the outermost frame (unwind info said: no caller)
  truncated @2;  # the user walk was cut: depth limit, unreadable memory, no rule for a frame
}

struct Stack {
  locationIds @0 :List(UInt64);
  # Leaf first (as perf prints and pprof stores). Kernel frames, when present, come before
  # user frames.
  end @1 :StackEnd;
  # How the user part of the stack ended. Stacks with the same locations and a different end
  # are different stacks (different ids). Archives written before this field read as unknown.
}

struct Sample {
  pid @0 :Pid;
  tid @1 :Int32;
  stackId @2 :UInt64;
  # Must be > 0.
  count @3 :UInt64;
  # Number of samples with this (pid, tid, stack) in this chunk; > 0.
  cpu @4 :Int32 = -1;
  # -1 when samples of several CPUs were aggregated.
  weight @5 :UInt64;
  # Event weight summed over the samples: the period the kernel recorded with each (nanoseconds
  # of cpu-clock, page faults, cycles, ...); 0 when unknown. Tools weigh stacks by it (as perf
  # report does) unless asked to count samples.
  comm @6 :Data;
  # The process's name (its main thread's comm) when these samples were taken; empty when the
  # producer did not record it, and then the newest Process entry names them. A process that
  # exec'd has samples under its old and its new name; (pid, tid, stack, comm) is the key.
  # Since 1.2: archives written before it read as empty (the newest Process entry names them).
}

struct KernelSymbol {
  address @0 :UInt64;
  name @1 :Data;
  module @2 :Data;
  # Empty for the kernel image itself.
  type @3 :UInt8;
  # kallsyms type letter ('t', 'T', ...).
}

struct JitMap {
  pid @0 :Pid;
  path @1 :Path;
  entries @2 :List(JitEntry);
  # A copy of the perf map's lines that were readable, in file order.
}

struct JitEntry {
  start @0 :UInt64;
  size @1 :UInt64;
  name @2 :Data;
}

struct StackCopy {
  # A window of user stack for off-host DWARF unwinding.
  pid @0 :Pid;
  tid @1 :Int32;
  registers @2 :List(UInt64);
  # In the kernel's perf_regs order for the host's machine.
  stack @3 :Data;
  # Bytes from the stack pointer upwards.
  kernelStackId @4 :UInt64;
  count @5 :UInt64;
}

struct Counter {
  name @0 :Text;
  # e.g. "samples.lost", "stacks.collisions", "maps.full", "symbolize.no-file"
  value @1 :Int64;
}

struct Trailer {
  cleanClose @0 :Bool;
  # False or missing trailer: the session was cut (killed recorder, full disk).
  endTimeNs @1 :Int64;
  # Wall clock at session end, nanoseconds since the Unix epoch.
  chunkCount @2 :UInt64;
  sampleCount @3 :UInt64;
  # Sum of Sample.count over the session.
  counters @4 :List(Counter);
  # Final values of the session's counters.
}
