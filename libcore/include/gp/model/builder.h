#pragma once
// SessionBuilder: interning front over a Session for producers (gp-import, gp-runtime, .col
// reader, gp-record). Equal functions, locations and stacks get one id; samples with the same
// (pid, tid, stack) are summed. The Session stays a plain struct the writer can stream.
//
// A producer that records for hours (gp-record) does not keep what it wrote: take_entries()
// moves the new entries out for Writer::write_delta, and ids go on after them. To forget what
// was interned (exited processes' frames), it replaces the builder with a new one whose base is
// the old one's created(): equal entries made after that get new ids, which readers accept.

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gp/model/session.h"
#include "gp/model/string_table.h"

namespace gp::model {

class SessionBuilder {
 public:
  // Ids start after `base`: entries of this session written and dropped before.
  explicit SessionBuilder(Session& session, TableCounts base = {}) : s_(session), base_(base) {}

  Session& session() { return s_; }

  uint64_t function(std::string_view name, std::string_view file_name = {}, uint32_t start_line = 0,
                    std::string_view system_name = {}, std::string_view package = {});
  // A frame born with a name (runtime profilers, imports, .col): one line, status symbolic.
  uint64_t symbolic_location(FrameKind kind, uint64_t function_id, uint32_t line = 0,
                             uint64_t mapping_id = 0);
  // A raw address to resolve later; file_offset is computed from the mapping when given.
  uint64_t address_location(uint64_t mapping_id, uint64_t address, FrameKind kind,
                            bool is_return_address);
  // One frame of address_locations().
  struct AddressFrame {
    uint64_t mapping_id = 0;
    uint64_t address = 0;
    FrameKind kind = FrameKind::unknown;
    bool is_return_address = false;
  };
  // address_location() for each frame of a call chain, in order, ids appended to `ids`: the
  // table's memory for all of them is asked for before the first is read, so the cache misses of
  // a chain's lookups (most of an importer's time on large recordings) overlap. `inserted`, when
  // given, gets one flag per frame: whether its location is new.
  void address_locations(std::span<const AddressFrame> frames, std::vector<uint64_t>& ids,
                         std::vector<uint8_t>* inserted = nullptr);
  // Mappings are deduplicated on (pid, start, end, offset, path, build-id).
  uint64_t mapping(const Mapping& m);
  // Stacks are equal when their locations and their end are: the same frames cut and complete
  // get two ids.
  uint64_t stack(const std::vector<uint64_t>& leaf_first_location_ids,
                 StackEnd end = StackEnd::unknown);
  // Samples are summed per (pid, tid, stack, cpu, comm).
  void add_sample(int32_t pid, int32_t tid, uint64_t stack_id, uint64_t count, uint64_t weight = 0,
                  int32_t cpu = -1, std::string_view comm = {});
  // Appends a Process entry unless the newest entry for that pid is identical.
  void process(const Process& p);
  // Appends a Thread entry the first time (tid, comm) is seen.
  void thread(int32_t tid, int32_t pid, std::string_view comm);

  // Call after the writer emitted (and the caller cleared) session.samples.
  void forget_samples() { sample_index_.clear(); }

  // Moves every list of the session (entries made since the last call, samples, and any
  // kernel symbols or JIT maps added to it) into `out`, for Writer::write_delta; returns the
  // entry counts they follow (the delta's base). Interned ids stay valid.
  TableCounts take_entries(Session& out);
  // Entries made so far, taken or not: the base for a builder that replaces this one.
  TableCounts created() const { return base_.plus(s_); }

 private:
  // Keys are built in key_ (reused by every call) and looked up as string_views: a hit
  // allocates nothing.
  using Table = StringTable<uint64_t>;
  // The id stored under key_, or next_id (then stored) when key_ is new; `inserted` tells which.
  uint64_t intern(Table& table, uint64_t next_id, bool& inserted);
  // address_location() of a key made by address_key() whose hash_bytes() is h.
  uint64_t intern_address(std::string_view key, uint64_t h, const AddressFrame& f,
                          bool& inserted);

  Session& s_;
  TableCounts base_;  // entries taken out of s_ (and those before this builder)
  std::string key_;   // scratch key, reused by every call
  Table functions_;
  Table locations_;
  Table mappings_;
  Table stacks_;
  Table sample_index_;
  std::unordered_map<uint64_t, uint64_t> mapping_shift_;  // mapping id -> file_offset - start
  std::unordered_map<int32_t, Process> newest_process_;
  Table threads_;
};

}  // namespace gp::model
