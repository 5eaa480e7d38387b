#include "module_opener.h"

#include <algorithm>

namespace gp::symbolize {

void ModuleGrouper::add(uint64_t location_id, uint64_t mapping_id, const model::Mapping& mapping) {
  size_t& ref_index = ref_of_mapping_[mapping_id];
  if (ref_index == SIZE_MAX) {
    std::string key = mapping.build_id.empty() ? "p" + mapping.path : "b" + mapping.build_id;
    auto [it, inserted] = index_.try_emplace(key, refs_.size());
    if (inserted) refs_.push_back({mapping.build_id, {}, {}});
    ref_index = it->second;
    auto& paths = refs_[ref_index].paths;
    if (std::find(paths.begin(), paths.end(), mapping.path) == paths.end())
      paths.push_back(mapping.path);
  }
  refs_[ref_index].location_ids.push_back(location_id);
}

std::unique_ptr<ModuleResolver> open_module(const DebugInfoFinder& finder,
                                            const std::vector<std::string>& paths,
                                            const std::string& build_id,
                                            const ResolverOptions& options, ModuleReport& report,
                                            model::SymbolStatus* miss) {
  report.path = paths.empty() ? std::string() : paths.front();
  report.build_id = build_id;
  for (const auto& path : paths) {
    report.files = finder.find(path, build_id);
    if (report.files.status == FindStatus::found) break;
  }
  if (paths.empty()) report.files = finder.find("", build_id);
  switch (report.files.status) {
    case FindStatus::no_file:
      *miss = model::SymbolStatus::no_file;
      return nullptr;
    case FindStatus::build_id_mismatch:
      *miss = model::SymbolStatus::build_id_mismatch;
      return nullptr;
    case FindStatus::found:
      break;
  }
  auto resolver = ModuleResolver::open(report.files, options);
  if (!resolver) {
    report.error = resolver.error().message;
    *miss = model::SymbolStatus::no_file;
    return nullptr;
  }
  return std::move(*resolver);
}

}  // namespace gp::symbolize
