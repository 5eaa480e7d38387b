#pragma once
// Conversions between the capnp schema and model structs. Internal to libcore/src/archive.

#include "archive.capnp.h"
#include "gp/archive/reader.h"
#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::archive::codec {

// Ranges of a session's tables that go into one chunk message: [begin, end) per list.
struct ChunkRanges {
  size_t processes[2]{}, threads[2]{}, mappings[2]{}, functions[2]{}, locations[2]{}, stacks[2]{},
      samples[2]{}, kernel_symbols[2]{}, jit_maps[2]{}, stack_copies[2]{}, location_updates[2]{};
  bool with_counters = false;
};

void fill_header(schema::Header::Builder b, const model::Header& h);
void fill_chunk(schema::Chunk::Builder b, const model::Session& s, const ChunkRanges& r);
void fill_trailer(schema::Trailer::Builder b, const model::Trailer& t);

Result<model::Header> read_header(schema::Header::Reader r);
// Appends a chunk's entries to the session, checking every reference. `base` counts the entries
// the session had before `s` (all zero when `s` is the whole session): a reference is valid up
// to base + what `s` holds. Location updates are applied to s's locations when apply_updates,
// else kept in s.location_updates (a delta: they may name locations `s` does not hold).
// Lists over `limits` (or with entries smaller than a writer makes them) refuse the chunk.
Status apply_chunk(schema::Chunk::Reader r, model::Session& s, const TableCounts& base = {},
                   bool apply_updates = true, const ReaderLimits& limits = {});
model::Trailer read_trailer(schema::Trailer::Reader r);

}  // namespace gp::archive::codec
