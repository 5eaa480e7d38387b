// StoreRuleSource: the rule the BPF walker would find, read from the store's arrays, for the
// tables of this very process (libc, the test binary, the vDSO), and none where it finds none.
#include <gtest/gtest.h>
#include <unistd.h>

#include "gp/proc/process.h"
#include "gp/unwind/store_rules.h"
#include "unwind_memory.h"

namespace gp::test::unwind {
namespace {

using gp::unwind::StoreRuleSource;

TEST(StoreRuleSource, FindsTheRuleTheBpfWalkerFindsInThisProcess) {
  gp::unwind::StoreLimits limits{1u << 21, 1u << 16, 64};
  ArrayMemory mem(limits);
  gp::unwind::TableStore store(mem, limits);
  gp::unwind::ProcessTables tables(store, gp::unwind::open_mapped_file,
                                   gp::unwind::own_vdso_image());
  proc::SnapshotOptions options;
  proc::BuildIdCache cache;
  auto maps = proc::executable_mappings(getpid(), options, &cache);
  ASSERT_TRUE(maps) << maps.error().message;
  bool changed = false;
  auto entries = tables.update(getpid(), *maps, &changed);
  ASSERT_FALSE(entries.empty());
  StoreRuleSource rules({mem.rules, mem.rows, mem.pages, mem.slots}, entries);
  uint64_t checked = 0;
  for (const auto& e : entries) {
    const uint64_t step = std::max<uint64_t>(1, (e.end - e.start) / 20000) | 1;
    for (uint64_t a = e.start; a < e.end; a += step) {
      const auto* want = mem.rule_at(entries, a);
      const auto got = rules.rule_at(a);
      ASSERT_EQ(got.has_value(), want != nullptr) << std::hex << a;
      if (want) {
        ASSERT_EQ(got->bits(), want->bits()) << std::hex << a;
      }
      ++checked;
    }
    EXPECT_FALSE(rules.rule_at(e.end) && mem.rule_at(entries, e.end) == nullptr);
  }
  EXPECT_GT(checked, 10000u);
  EXPECT_FALSE(rules.rule_at(0x1000));  // below every mapping
  // A slot past the array (a stale entry) gives no rule rather than a read out of bounds.
  std::vector<gp::unwind::MappingTable> stale{entries.front()};
  stale[0].slot = 1000;
  EXPECT_FALSE(
      StoreRuleSource({mem.rules, mem.rows, mem.pages, mem.slots}, stale).rule_at(stale[0].start));
}

}  // namespace
}  // namespace gp::test::unwind
