// Field numbers are those of github.com/google/pprof proto/profile.proto.
#include "fold/pprof_tables.h"

#include <algorithm>

#include "util/utf8.h"

namespace gp::fold::pprof {

namespace {

// Mapping fields.
constexpr uint32_t kMappingId = 1, kMemoryStart = 2, kMemoryLimit = 3, kFileOffset = 4,
                   kFilename = 5, kBuildId = 6, kHasFunctions = 7, kHasFilenames = 8,
                   kHasLineNumbers = 9, kHasInlineFrames = 10;
// Location, Line and Function fields.
constexpr uint32_t kLocationId = 1, kLocationMapping = 2, kLocationAddress = 3, kLocationLine = 4;
constexpr uint32_t kLineFunction = 1, kLineNumber = 2;
constexpr uint32_t kFunctionId = 1, kFunctionName = 2, kSystemName = 3, kFunctionFile = 4,
                   kStartLine = 5;
// Profile fields written here.
constexpr uint32_t kProfileMapping = 3, kProfileLocation = 4, kProfileFunction = 5,
                   kProfileString = 6;

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// How well a mapping fits pprof's idea of the profile's main binary (see Tables::write).
int main_binary_rank(const model::Mapping& m) {
  if (m.kind != model::MappingKind::user || m.path.empty() || m.path[0] == '[') return 0;
  std::string_view base = m.path;
  base.remove_prefix(std::min(base.size(), base.rfind('/') + 1));
  bool library = base.ends_with(".so") || base.find(".so.") != std::string_view::npos;
  return library ? 1 : 2;
}

// Interns `key`: returns its id, adding (id = size + 1) when new.
template <typename Map>
std::pair<uint64_t, bool> intern(Map& ids, std::string key, size_t next_index) {
  auto [it, inserted] = ids.try_emplace(std::move(key), next_index + 1);
  return {it->second, inserted};
}

}  // namespace

uint64_t Tables::string(std::string_view s) {
  auto it = string_ids_.find(std::string(s));
  if (it != string_ids_.end()) return it->second;
  uint64_t index = strings_.size();
  strings_.push_back(util::to_valid_utf8(s));
  string_ids_.emplace(std::string(s), index);
  return index;
}

Result<uint64_t> Tables::mapping(const model::Session& session, SessionIds& ids, uint64_t id) {
  if (id == 0 || id >= ids.mappings.size()) {
    return make_error("location refers to mapping " + std::to_string(id) + " of " +
                      std::to_string(session.mappings.size()));
  }
  if (ids.mappings[id] != 0) return ids.mappings[id];
  const model::Mapping& m = session.mapping(id);
  // The process id is left out on purpose: the same library mapped at the same place in
  // many processes is one pprof mapping.
  MappingEntry entry{m.start, m.end, m.file_offset, string(m.path), string(hex(m.build_id))};
  entry.main_rank = main_binary_rank(m);
  std::string key = std::to_string(entry.start) + '/' + std::to_string(entry.limit) + '/' +
                    std::to_string(entry.file_offset) + '/' + std::to_string(entry.filename) + '/' +
                    std::to_string(entry.build_id);
  auto [pprof_id, inserted] = intern(mapping_ids_, std::move(key), mappings_.size());
  if (inserted) mappings_.push_back(entry);
  ids.mappings[id] = pprof_id;
  return pprof_id;
}

Result<uint64_t> Tables::function(const model::Session& session, SessionIds& ids, uint64_t id) {
  if (id == 0 || id >= ids.functions.size()) {
    return make_error("line refers to function " + std::to_string(id) + " of " +
                      std::to_string(session.functions.size()));
  }
  if (ids.functions[id] != 0) return ids.functions[id];
  const model::Function& f = session.function(id);
  proto::ProtoWriter body;
  body.varint_field(kFunctionName, string(f.name));
  // Only a real linkage name goes in system_name. pprof "demangles" every function whose
  // system_name equals its name, and takes a name with <>[] or :: for simplified C++: it cuts
  // what stands between <> and () — "<module>" came out blank, "f([LFoo;)V" as "fV".
  if (!f.system_name.empty() && f.system_name != f.name)
    body.varint_field(kSystemName, string(f.system_name));
  if (!f.file_name.empty()) body.varint_field(kFunctionFile, string(f.file_name));
  if (f.start_line != 0) body.varint_field(kStartLine, f.start_line);
  auto [pprof_id, inserted] = intern(function_ids_, body.bytes(), functions_.size());
  if (inserted) {
    proto::ProtoWriter message;
    message.varint_field(kFunctionId, pprof_id);
    message.append_encoded(body.bytes());
    functions_.push_back(message.bytes());
  }
  ids.functions[id] = pprof_id;
  return pprof_id;
}

uint64_t Tables::pseudo_location(std::string_view name) {
  proto::ProtoWriter fbody;
  fbody.varint_field(kFunctionName, string(name));  // no system_name: see function()
  auto [function_id, new_function] = intern(function_ids_, fbody.bytes(), functions_.size());
  if (new_function) {
    proto::ProtoWriter message;
    message.varint_field(kFunctionId, function_id);
    message.append_encoded(fbody.bytes());
    functions_.push_back(message.bytes());
  }
  proto::ProtoWriter line, body;
  line.varint_field(kLineFunction, function_id);
  body.message_field(kLocationLine, line);
  auto [location_id, new_location] = intern(location_ids_, body.bytes(), locations_.size());
  if (new_location) {
    proto::ProtoWriter message;
    message.varint_field(kLocationId, location_id);
    message.append_encoded(body.bytes());
    locations_.push_back(message.bytes());
  }
  return location_id;
}

Result<uint64_t> Tables::location(const model::Session& session, SessionIds& ids, uint64_t id) {
  if (id == 0 || id >= ids.locations.size()) {
    return make_error("stack refers to location " + std::to_string(id) + " of " +
                      std::to_string(session.locations.size()));
  }
  if (ids.locations[id] != 0) return ids.locations[id];
  const model::Location& loc = session.location(id);
  proto::ProtoWriter body;
  uint64_t mapping_id = 0;
  if (loc.mapping_id != 0) {
    auto m = mapping(session, ids, loc.mapping_id);
    if (!m) return m.error();
    mapping_id = *m;
    body.varint_field(kLocationMapping, mapping_id);
  }
  if (loc.address != 0) body.varint_field(kLocationAddress, loc.address);
  // Archive lines are outermost first; pprof's Line[0] is the innermost inlined function.
  for (auto line = loc.lines.rbegin(); line != loc.lines.rend(); ++line) {
    auto f = function(session, ids, line->function_id);
    if (!f) return f.error();
    proto::ProtoWriter l;
    l.varint_field(kLineFunction, *f);
    if (line->line != 0) l.varint_field(kLineNumber, line->line);
    body.message_field(kLocationLine, l);
  }
  auto [pprof_id, inserted] = intern(location_ids_, body.bytes(), locations_.size());
  if (inserted) {
    proto::ProtoWriter message;
    message.varint_field(kLocationId, pprof_id);
    message.append_encoded(body.bytes());
    locations_.push_back(message.bytes());
    if (mapping_id != 0) note_symbolization(mapping_id, loc, session);
  }
  ids.locations[id] = pprof_id;
  return pprof_id;
}

// pprof's own symbolizer skips mappings that claim has_functions, so a mapping claims it only
// when every location written for it is symbolized: unresolved addresses stay resolvable by
// `pprof` with the binaries at hand.
void Tables::note_symbolization(uint64_t mapping_id, const model::Location& loc,
                                const model::Session& session) {
  MappingEntry& m = mappings_[mapping_id - 1];
  if (loc.lines.empty()) m.unsymbolized = true;
  for (const model::Line& line : loc.lines) {
    if (line.line == 0) m.missing_line = true;
    if (session.function(line.function_id).file_name.empty()) m.missing_file = true;
  }
}

void Tables::write_mapping(proto::ProtoWriter& profile, size_t index) const {
  const MappingEntry& e = mappings_[index];
  proto::ProtoWriter m;
  m.varint_field(kMappingId, index + 1);
  m.varint_field(kMemoryStart, e.start);
  m.varint_field(kMemoryLimit, e.limit);
  m.varint_field(kFileOffset, e.file_offset);
  m.varint_field(kFilename, e.filename);
  if (e.build_id != 0) m.varint_field(kBuildId, e.build_id);
  bool functions = !e.unsymbolized;
  m.bool_field(kHasFunctions, functions);
  m.bool_field(kHasFilenames, functions && !e.missing_file);
  m.bool_field(kHasLineNumbers, functions && !e.missing_line);
  m.bool_field(kHasInlineFrames, functions && !e.missing_line);
  profile.message_field(kProfileMapping, m);
}

void Tables::write(proto::ProtoWriter& profile) const {
  // pprof takes the first mapping in the file (whatever its id) as the "main binary" it names
  // in reports: make that an executable (else a library) rather than the kernel.
  size_t first = 0;
  for (size_t i = 0; i < mappings_.size(); ++i) {
    if (mappings_[i].main_rank > mappings_[first].main_rank) first = i;
  }
  if (!mappings_.empty()) write_mapping(profile, first);
  for (size_t i = 0; i < mappings_.size(); ++i) {
    if (i != first) write_mapping(profile, i);
  }
  for (const std::string& l : locations_) profile.bytes_field(kProfileLocation, l);
  for (const std::string& f : functions_) profile.bytes_field(kProfileFunction, f);
  for (const std::string& s : strings_) profile.bytes_field(kProfileString, s);
}

}  // namespace gp::fold::pprof
