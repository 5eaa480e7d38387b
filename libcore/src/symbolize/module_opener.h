#pragma once
// Finding and opening one binary's files, shared by the whole-session symbolizer and the streaming
// one: each recorded path in turn (or the build-id alone when no path was recorded), through the
// DebugInfoFinder's documented order, then a ModuleResolver over what was found.

#include <memory>
#include <string>
#include <vector>

#include "gp/model/session.h"
#include "gp/symbolize/debuginfo_finder.h"
#include "gp/symbolize/module_resolver.h"
#include "gp/symbolize/symbolizer.h"

namespace gp::symbolize {

// Fills report's path, build_id, files (and error when the files cannot be loaded). Returns the
// resolver, or nullptr with *miss set to the status every frame of the binary gets.
std::unique_ptr<ModuleResolver> open_module(const DebugInfoFinder& finder, const std::vector<std::string>& paths,
                                            const std::string& build_id, const ResolverOptions& options,
                                            ModuleReport& report, model::SymbolStatus* miss);

}  // namespace gp::symbolize
