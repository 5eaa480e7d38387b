// symbolize_double_session IN OUT: writes the first session of IN twice over as ONE session
// (the second copy's entries get new ids after the first copy's), so OUT is a session with twice
// the samples, stacks and locations of IN — what a recording twice as long would be at worst.
// Used by tests/bench/symbolize_bench.sh to show that gp-symbolize's peak memory does not double
// (`cat a.gpa a.gpa` would make two sessions, which the streaming path handles one at a time).
#include <cstdio>

#include "gp/archive/reader.h"
#include "gp/archive/writer.h"

namespace {

using gp::archive::ReadEvent;
using gp::archive::TableCounts;

// Moves every reference of a chunk's entries past the first copy's tables.
void shift(gp::model::Session& e, const TableCounts& by) {
  auto lines = [&](std::vector<gp::model::Line>& ls) {
    for (auto& l : ls) l.function_id += by.functions;
  };
  for (auto& l : e.locations) {
    if (l.mapping_id != 0) l.mapping_id += by.mappings;
    lines(l.lines);
  }
  for (auto& u : e.location_updates) {
    u.location_id += by.locations;
    lines(u.lines);
  }
  for (auto& s : e.stacks)
    for (auto& id : s.location_ids) id += by.locations;
  for (auto& s : e.samples) s.stack_id += by.stacks;
  for (auto& c : e.stack_copies)
    if (c.kernel_stack_id != 0) c.kernel_stack_id += by.stacks;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "symbolize_double_session: error: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: symbolize_double_session IN OUT");
  auto out = gp::archive::OutputStream::open(argv[2], false);
  if (!out) return fail(out.error().message);
  gp::archive::Writer writer(**out);
  TableCounts first;  // the first copy's totals
  gp::model::Trailer trailer;
  for (int pass = 0; pass < 2; ++pass) {
    auto in = gp::archive::InputStream::open(argv[1]);
    if (!in) return fail(in.error().message);
    gp::archive::Reader reader(**in);
    for (bool done = false; !done;) {
      auto ev = reader.next_event();
      if (!ev) return fail(ev.error().message);
      switch (ev->kind) {
        case ReadEvent::Kind::header:
          if (pass == 0) {
            gp::model::Session head;
            head.header = ev->header;
            if (!writer.begin_session(head)) return fail("cannot write");
          }
          break;
        case ReadEvent::Kind::chunk:
          if (pass == 1) {
            shift(ev->chunk.entries, first);
            ev->chunk.base = writer.written();
          }
          if (!writer.write_delta(ev->chunk)) return fail("cannot write");
          break;
        case ReadEvent::Kind::end_of_session:
          trailer = ev->trailer.value_or(gp::model::Trailer{});
          if (pass == 0) first = writer.written();
          done = true;
          break;
        case ReadEvent::Kind::end_of_stream:
          done = true;
          break;
      }
    }
  }
  if (!writer.end_deltas(trailer, true)) return fail("cannot write");
  return (*out)->close() ? 0 : fail("cannot close");
}
