// Symbolization of real processes: a live fixture whose /proc/PID/maps is snapshotted and whose
// binary is then deleted (off-host from a --debug-dir store only), and a perf recording whose
// names must match what perf itself prints for the same addresses.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "gp/symbolize/elf_file.h"
#include "gp/symbolize/symbolizer.h"
#include "symbolize_fixture_test.h"

namespace gp::test::symbolize {
namespace {

using model::SymbolStatus;

// Starts `path probe`; its stdout lines are "ADDR NAME RET"; stdin kept open until stop().
class ProbeProcess {
 public:
  explicit ProbeProcess(const std::string& path) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[1]);
      ::close(out[0]);
      ::execl(path.c_str(), path.c_str(), "probe", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    FILE* f = ::fdopen(out[0], "r");
    char line[256];
    while (lines_.size() < 2 && std::fgets(line, sizeof line, f) != nullptr) lines_.push_back(line);
    std::fclose(f);
  }
  ~ProbeProcess() { stop(); }
  void stop() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::vector<std::string> lines_;
};

// The executable file mappings of a live process, as a recorder snapshots them.
void snapshot_maps(model::SessionBuilder& b, pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream f(line);
    std::string range, perms, offset, dev, inode, path;
    f >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.find('x') == std::string::npos || path.empty() || path[0] != '/') continue;
    model::Mapping m;
    m.pid = pid;
    m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    m.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    m.file_offset = std::stoull(offset, nullptr, 16);
    m.path = path;
    m.inode = std::stoull(inode);
    auto elf = gp::symbolize::ElfFile::open("/proc/" + std::to_string(pid) + "/map_files/" + range);
    if (!elf) elf = gp::symbolize::ElfFile::open(path);
    if (elf) m.build_id = elf->build_id();
    b.mapping(m);
  }
}

uint64_t location_at(model::SessionBuilder& b, uint64_t address, bool is_return) {
  const auto& maps = b.session().mappings;
  for (size_t i = 0; i < maps.size(); ++i)
    if (address >= maps[i].start && address < maps[i].end)
      return b.address_location(i + 1, address, model::FrameKind::unknown, is_return);
  return b.address_location(0, address, model::FrameKind::unknown, is_return);
}

TEST(SymbolizeLive, DeletedBinaryOfARealProcessFromADebugDirStore) {
  TempDir dir;
  // The program runs from a copy that is gone by the time we symbolize; only its stripped
  // debug info travels, in a .build-id store.
  copy_file(fixture("sym_nofp"), dir / "app");
  ASSERT_EQ(sh("objcopy --only-keep-debug " + (dir / "app") + " " + (dir / "app.debug")), 0);
  add_to_store(dir / "store", dir / "app.debug");
  model::Session s;
  model::SessionBuilder b(s);
  std::vector<std::pair<uint64_t, std::string>> expected;
  {
    ProbeProcess p(dir / "app");
    ASSERT_EQ(p.lines().size(), 2u);
    snapshot_maps(b, p.pid());
    for (const auto& line : p.lines()) {
      std::istringstream f(line);
      std::string addr, name;
      int ret = 0;
      f >> addr >> name >> ret;
      expected.emplace_back(location_at(b, std::stoull(addr, nullptr, 16), ret != 0), name);
    }
  }
  ASSERT_EQ(sh("rm " + (dir / "app") + " " + (dir / "app.debug")), 0);
  gp::symbolize::SymbolizeOptions o;
  o.finder.debug_dirs = {dir / "store"};
  o.finder.use_recorded_path = false;
  o.finder.system_debug_root.clear();
  gp::symbolize::symbolize_session(s, o);
  for (const auto& [id, name] : expected) {
    EXPECT_EQ(s.location(id).status, SymbolStatus::resolved) << name;
    EXPECT_EQ(names(s, id), std::vector<std::string>{name});
  }
}

struct PerfSample {
  uint64_t ip;
  std::string sym, dso;
};

// `perf script --show-mmap-events -F pid,ip,sym,dso` into mappings and leaf samples.
std::vector<PerfSample> parse_perf_script(const std::string& text, model::SessionBuilder& b) {
  static const std::regex kMmap(
      R"((\d+) +PERF_RECORD_MMAP2 \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: r-xp (/\S+))");
  static const std::regex kSample(R"(^ *\d+ +([0-9a-f]+) (.*) \((.*)\)$)");
  std::vector<PerfSample> samples;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kMmap)) {
      model::Mapping map;
      map.pid = std::stoi(m[1]);
      map.start = std::stoull(m[2], nullptr, 16);
      map.end = map.start + std::stoull(m[3], nullptr, 16);
      map.file_offset = std::stoull(m[4], nullptr, 16);
      map.path = m[5];
      auto elf = gp::symbolize::ElfFile::open(map.path);
      if (elf) map.build_id = elf->build_id();
      b.mapping(map);
    } else if (line.find("PERF_RECORD") == std::string::npos &&
               std::regex_match(line, m, kSample)) {
      samples.push_back({std::stoull(m[1], nullptr, 16), m[2], m[3]});
    }
  }
  return samples;
}

void add_kallsyms(model::Session& s) {
  std::ifstream in("/proc/kallsyms");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string addr, type, name, module;
    f >> addr >> type >> name >> module;
    // Weak functions ('W', e.g. arch_vma_name) are code too, as gp-record keeps them.
    if (type != "t" && type != "T" && type != "w" && type != "W") continue;
    if (module.size() > 2) module = module.substr(1, module.size() - 2);
    s.kernel_symbols.push_back({std::stoull(addr, nullptr, 16), name, module, type[0]});
  }
}

TEST(SymbolizeLive, NamesMatchWhatPerfShowsForTheSameAddresses) {
  std::string version;
  if (sh("perf --version", &version) != 0) GTEST_SKIP() << "perf is not installed";
  TempDir dir;
  std::string out;
  if (sh("perf record -q -F 2000 -o " + (dir / "perf.data") + " -- " + fixture("sym_cpptempl") +
             " 2",
         &out) != 0)
    GTEST_SKIP() << "perf record refused (perf_event_paranoid?): " << out;
  ASSERT_EQ(sh("perf script -i " + (dir / "perf.data") +
                   " --show-mmap-events -F pid,ip,sym,dso 2>/dev/null",
               &out),
            0);

  model::Session s;
  model::SessionBuilder b(s);
  auto samples = parse_perf_script(out, b);
  add_kallsyms(s);
  bool kallsyms_visible = !s.kernel_symbols.empty() && s.kernel_symbols.front().address != 0;
  std::vector<uint64_t> ids;
  for (const auto& p : samples) {
    bool kernel = p.dso == "[kernel.kallsyms]";
    ids.push_back(kernel ? b.address_location(0, p.ip, model::FrameKind::kernel, false)
                         : location_at(b, p.ip, false));
  }
  gp::symbolize::SymbolizeOptions o;
  o.resolver.demangle = gp::symbolize::DemangleMode::templates;  // perf's default style
  gp::symbolize::symbolize_session(s, o);

  std::map<std::string, int> perf_top, our_top;
  size_t compared = 0, agreed = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& p = samples[i];
    // perf reads the vDSO out of the live process; an archive carries only its build-id, so it
    // resolves only from a store holding that image.
    if (p.sym == "[unknown]" || p.dso == "[vdso]" ||
        (p.dso == "[kernel.kallsyms]" && !kallsyms_visible))
      continue;
    auto ours = names(s, ids[i]);
    std::string name = ours.empty() ? "[unknown]" : ours.front();
    ++compared;
    if (name == p.sym) ++agreed;
    else
      ADD_FAILURE() << std::hex << p.ip << ": perf says '" << p.sym << "' (" << p.dso
                    << "), we say '" << name << "'";
    if (p.dso.find("sym_cpptempl") != std::string::npos) {
      ++perf_top[p.sym];
      ++our_top[name];
    }
  }
  EXPECT_GT(compared, 100u) << "too few samples to compare";
  EXPECT_EQ(agreed, compared);
  EXPECT_EQ(our_top, perf_top);
  EXPECT_GT(perf_top["ns::Stack<int>::push"], 0);
}

}  // namespace
}  // namespace gp::test::symbolize
