#pragma once
// gp-record's body: open a sampler, record sessions, write the archive.

#include <string>
#include <vector>

#include "cli.h"

namespace gp::record_tool {

// Returns the exit status (0 ok, 1 failure, 2 usage). argv is stored in session headers.
int run(const RecordArgs& args, const std::vector<std::string>& argv);

}  // namespace gp::record_tool
