#pragma once
// The string, mapping, function and location tables of one pprof profile under construction.
// Archive entries are added on first use (per session, through SessionIds), equal entries from
// different sessions share one pprof id, and everything is written at the end, when the
// mapping flags (has_functions, ...) are known.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fold/protobuf_writer.h"
#include "gp/model/session.h"
#include "gp/util/result.h"

namespace gp::fold::pprof {

// pprof ids of one session's entries, indexed by archive id; 0 = not added yet.
struct SessionIds {
  explicit SessionIds(const model::Session& s)
      : mappings(s.mappings.size() + 1),
        functions(s.functions.size() + 1),
        locations(s.locations.size() + 1) {}
  std::vector<uint64_t> mappings;
  std::vector<uint64_t> functions;
  std::vector<uint64_t> locations;
};

class Tables {
 public:
  Tables() { string(""); }  // pprof requires string_table[0] == ""

  // Index of `s` (made valid UTF-8) in the string table.
  uint64_t string(std::string_view s);

  // pprof id of the archive location `id` of `session`, adding it (with its mapping and
  // functions) on first use. Fails when an id does not resolve.
  Result<uint64_t> location(const model::Session& session, SessionIds& ids, uint64_t id);

  // pprof id of a location with no mapping and one line naming `name` (a pseudo-frame such as
  // "[truncated]"), added on first use.
  uint64_t pseudo_location(std::string_view name);

  // Appends the mapping (3), location (4), function (5) and string_table (6) fields.
  void write(proto::ProtoWriter& profile) const;

 private:
  struct MappingEntry {
    uint64_t start = 0;
    uint64_t limit = 0;
    uint64_t file_offset = 0;
    uint64_t filename = 0;
    uint64_t build_id = 0;
    bool unsymbolized = false;  // some location of it has no lines
    bool missing_file = false;  // some line's function has no file name
    bool missing_line = false;  // some line has no line number
    int main_rank = 0;          // 2 executable, 1 shared library, 0 kernel/vdso/anon/JIT
  };

  Result<uint64_t> mapping(const model::Session& session, SessionIds& ids, uint64_t id);
  Result<uint64_t> function(const model::Session& session, SessionIds& ids, uint64_t id);
  void write_mapping(proto::ProtoWriter& profile, size_t index) const;
  void note_symbolization(uint64_t mapping_id, const model::Location& loc,
                          const model::Session& session);

  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint64_t> string_ids_;
  std::vector<MappingEntry> mappings_;
  std::unordered_map<std::string, uint64_t> mapping_ids_;
  std::vector<std::string> functions_;  // encoded Function messages, id = index + 1
  std::unordered_map<std::string, uint64_t> function_ids_;
  std::vector<std::string> locations_;  // encoded Location messages, id = index + 1
  std::unordered_map<std::string, uint64_t> location_ids_;
};

}  // namespace gp::fold::pprof
