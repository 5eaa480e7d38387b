#pragma once
// Conversions between the capnp schema and model structs. Internal to libcore/src/archive.

#include "archive.capnp.h"
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
// Appends a chunk's entries to the session, checking every reference.
Status apply_chunk(schema::Chunk::Reader r, model::Session& s);
model::Trailer read_trailer(schema::Trailer::Reader r);

}  // namespace gp::archive::codec
