#pragma once
// Grouping a session's frames by binary, and finding and opening one binary's files, shared by the
// whole-session symbolizer and the streaming one. Files are found through each recorded path in
// turn (or the build-id alone when no path was recorded), through the DebugInfoFinder's documented
// order, then a ModuleResolver over what was found.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gp/model/session.h"
#include "gp/symbolize/debuginfo_finder.h"
#include "gp/symbolize/module_resolver.h"
#include "gp/symbolize/symbolizer.h"

namespace gp::symbolize {

// Collects location ids into one ModuleRef per binary (same build-id, or same path without one);
// each mapping is looked up once.
class ModuleGrouper {
 public:
  explicit ModuleGrouper(size_t mapping_count) : ref_of_mapping_(mapping_count + 1, SIZE_MAX) {}
  void add(uint64_t location_id, uint64_t mapping_id, const model::Mapping& mapping);
  std::vector<ModuleRef> take() { return std::move(refs_); }

 private:
  std::vector<ModuleRef> refs_;
  std::unordered_map<std::string, size_t> index_;  // "b" + build-id or "p" + path → refs_ index
  std::vector<size_t> ref_of_mapping_;             // by mapping id
};

// Fills report's path, build_id, files (and error when the files cannot be loaded). Returns the
// resolver, or nullptr with *miss set to the status every frame of the binary gets.
std::unique_ptr<ModuleResolver> open_module(const DebugInfoFinder& finder,
                                            const std::vector<std::string>& paths,
                                            const std::string& build_id,
                                            const ResolverOptions& options, ModuleReport& report,
                                            model::SymbolStatus* miss);

}  // namespace gp::symbolize
