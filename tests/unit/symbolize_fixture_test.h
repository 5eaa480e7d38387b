#pragma once
// Helpers shared by the symbolize tests: fixture paths, temporary directories, running the
// binutils that derive fixture variants, and building sessions whose mappings look like those
// of a loaded program.

#include <cstdint>
#include <string>
#include <vector>

#include "gp/model/builder.h"
#include "gp/model/session.h"

namespace gp::test::symbolize {

std::string fixture(const std::string& name);  // <build>/tests/fixtures/symbolize/<name>
std::string source(const std::string& name);   // tests/fixtures/src/<name>

// A fresh directory under $TMPDIR, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs a shell command; returns its exit status (stdout/stderr go to *out when given).
int sh(const std::string& command, std::string* out = nullptr);
void copy_file(const std::string& from, const std::string& to);

struct Symbol {
  uint64_t address = 0;  // link-time
  uint64_t size = 0;
};
// The symbol named exactly `name` (mangled) in path's .symtab, via nm; address 0 when absent.
Symbol symbol(const std::string& path, const std::string& name);
// 1-based line of the first line of source file `file` containing `marker`; 0 when absent.
uint32_t line_of(const std::string& file, const std::string& marker);

// Puts debug_file into store as .build-id/xx/rest.debug (or rest when as_binary).
void add_to_store(const std::string& store, const std::string& debug_file, bool as_binary = false);

// Adds the executable PT_LOAD segments of `path` as mappings of `pid` loaded at `base` (0 for
// ET_EXEC), as /proc/PID/maps would show them; `recorded_path` is the path written.
struct Loaded {
  std::vector<uint64_t> mapping_ids;
  uint64_t base = 0;
  uint64_t address(uint64_t link_address) const { return base + link_address; }
};
Loaded load(model::SessionBuilder& b, const std::string& path, uint64_t base, int32_t pid = 100,
            const std::string& recorded_path = "");
// The mapping id of `loaded` containing runtime address addr (0 when none).
uint64_t mapping_for(const model::Session& s, const Loaded& loaded, uint64_t addr);
// Adds an address location in the loaded file.
uint64_t add_location(model::SessionBuilder& b, const Loaded& loaded, uint64_t link_address,
                      bool is_return);

// Function names of a location's lines, outermost first.
std::vector<std::string> names(const model::Session& s, uint64_t location_id);

}  // namespace gp::test::symbolize
