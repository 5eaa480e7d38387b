#pragma once
// StreamSymbolizer: symbolize_session for a session read chunk by chunk
// (archive::Reader::next_event) and written chunk by chunk (archive::Writer::write_delta), so
// memory does not grow with the session's samples or stacks — only with what naming needs: its
// mappings, functions, kernel symbols, JIT maps and 24 bytes per location.
//
// Every chunk passes through at once, its locations as they came (unmapped ones marked). The
// frames to name wait for the end of the session: then each binary is found, opened, looked up
// in one batch and closed (`jobs` binaries at a time), and the kernel and JIT frames are named
// from the session's kallsyms subset and perf maps (which recorders write last); the names go out
// as location updates (formats/README.md §4.3) in chunks after the session's own. Naming a chunk's
// frames in that chunk would keep every binary open for the whole session (on a 1M-sample
// recording: 187 MiB instead of 100) or reopen them per chunk (14x the CPU).
//
// Read back, the result is the session symbolize_session gives (the same names, statuses, kinds
// and counters; function ids may differ). The input's own location updates are followed, as the
// reader would apply them. An update is written only where a frame changes, so a session that is
// already symbolized comes out unchanged, byte for byte; the output does not depend on `jobs`.

#include <functional>
#include <memory>
#include <vector>

#include "gp/archive/reader.h"
#include "gp/model/session.h"
#include "gp/symbolize/symbolizer.h"

namespace gp::symbolize {

// Where StreamSymbolizer::end_session puts the chunks it makes (e.g. Writer::write_delta).
using ChunkSink = std::function<Status(archive::ChunkDelta&)>;

class StreamSymbolizer {
 public:
  explicit StreamSymbolizer(SymbolizeOptions options);
  ~StreamSymbolizer();
  StreamSymbolizer(const StreamSymbolizer&) = delete;
  StreamSymbolizer& operator=(const StreamSymbolizer&) = delete;

  // A session starts: marks its header symbolized and forgets the previous session.
  void begin_session(model::Header& header);
  // Turns one input chunk into its output chunk, in place: function ids renumbered for the
  // output (names interned here get the next ids), user frames named, unmapped ones marked, and
  // `base` set to the output's running totals (what Writer::write_delta expects).
  void symbolize_chunk(archive::ChunkDelta& chunk);
  // The session ends (also when it was cut): its frames are named, binary by binary (`jobs` at a
  // time) and then kernel and JIT frames, as location updates. They go to `sink` as deltas that
  // follow the chunks symbolize_chunk returned (new functions, updates, and last the changed
  // `symbolize.*` counters); nothing when nothing changed. Returns the first Error of `sink`.
  Status end_session(const ChunkSink& sink);
  // The session's counters, latest value per name in first-seen order (for the trailer).
  const std::vector<model::Counter>& counters() const;
  // What this session's run did; valid after end_session.
  SymbolizeReport take_report();

  struct State;

 private:
  SymbolizeOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace gp::symbolize
