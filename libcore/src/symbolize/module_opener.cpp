#include "module_opener.h"

namespace gp::symbolize {

std::unique_ptr<ModuleResolver> open_module(const DebugInfoFinder& finder, const std::vector<std::string>& paths,
                                            const std::string& build_id, const ResolverOptions& options,
                                            ModuleReport& report, model::SymbolStatus* miss) {
  report.path = paths.empty() ? std::string() : paths.front();
  report.build_id = build_id;
  for (const auto& path : paths) {
    report.files = finder.find(path, build_id);
    if (report.files.status == FindStatus::found) break;
  }
  if (paths.empty()) report.files = finder.find("", build_id);
  switch (report.files.status) {
    case FindStatus::no_file: *miss = model::SymbolStatus::no_file; return nullptr;
    case FindStatus::build_id_mismatch: *miss = model::SymbolStatus::build_id_mismatch; return nullptr;
    case FindStatus::found: break;
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
