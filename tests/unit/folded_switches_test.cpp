// write_folded (summed on interned ids) against the folded text of fold_stacks' stacks, under
// every combination of the folded switches, on the fold fixture and on a session of corner
// cases: an inlined frame inside a kernel location, names with ';' and a newline, frames that
// differ only in kind, an error frame that another process's stack starts with, stacks with
// no user or no kernel part.

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "fold_fixture.h"
#include "gp/fold/folded.h"
#include "gp/fold/stacks.h"

namespace gp::test::fold {
namespace {

using gp::fold::FoldedOptions;
using gp::fold::StackOptions;
using model::FrameKind;

// What gp-fold printed before folded output was summed on ids: one text per fold_stacks stack
// (bcc's "-" before the first kernel frame after a user one), then summed and sorted by text.
std::string reference(const model::Archive& a, const StackOptions& so, const FoldedOptions& fo) {
  std::map<std::string, uint64_t> lines;
  for (const gp::fold::FoldedStack& st : gp::fold::fold_stacks(a, so)) {
    std::string text;
    bool seen_user = false, delimited = false;
    for (const gp::fold::Frame& f : st.frames) {
      bool kernel = f.kind == FrameKind::kernel;
      if (fo.kernel_delimiter && kernel && seen_user && !delimited) {
        text += ";-";
        delimited = true;
      }
      if (!kernel && f.kind != FrameKind::pseudo) seen_user = true;
      if (!text.empty()) text += ';';
      for (char c : f.name) text += c == ';' ? '|' : (c == '\n' || c == '\r') ? ' ' : c;
      if (fo.annotate) text += gp::fold::kind_suffix(f.kind);
    }
    lines[text] += st.count;
  }
  std::string out;
  for (const auto& [text, count] : lines) out += text + " " + std::to_string(count) + "\n";
  return out;
}

std::string folded(const model::Archive& a, const StackOptions& so, const FoldedOptions& fo) {
  std::ostringstream out;
  gp::fold::write_folded(a, so, fo, out);
  return out.str();
}

model::Session corner_session() {
  model::Session s;
  model::SessionBuilder b(s);
  for (int32_t pid : {500, 600, 601}) {
    model::Process p;
    p.pid = pid;
    p.comm = "edge";
    if (pid == 600) p.error_frame = "E";
    b.process(p);
  }
  b.thread(501, 500, "edge-worker");
  model::Mapping k;
  k.pid = -1;
  k.start = 0xffffffff81000000;
  k.end = 0xffffffff82000000;
  k.path = "[kernel.kallsyms]";
  k.kind = model::MappingKind::kernel;
  uint64_t kern = b.mapping(k);
  uint64_t user = b.symbolic_location(FrameKind::native, b.function("run;semi\nline"));
  uint64_t k_leaf = b.symbolic_location(FrameKind::kernel, b.function("k_leaf"), 0, kern);
  uint64_t k_chain = b.address_location(kern, 0xffffffff81002000, FrameKind::kernel, false);
  s.location(k_chain).lines = {{b.function("k_outer"), 1, 0, false},
                               {b.function("k_inl"), 2, 0, true}};
  uint64_t java_same = b.symbolic_location(FrameKind::java, b.function("same"));
  uint64_t native_same = b.symbolic_location(FrameKind::native, b.function("same"));
  uint64_t f = b.symbolic_location(FrameKind::native, b.function("f"));
  uint64_t pseudo_e = b.symbolic_location(FrameKind::pseudo, b.function("E"));
  b.add_sample(500, 500, b.stack({k_leaf, k_chain, user}), 3);
  b.add_sample(500, 501, b.stack({k_leaf, k_chain, user}), 1);
  b.add_sample(500, 500, b.stack({k_chain}), 2);  // kernel only
  b.add_sample(500, 500, b.stack({user}), 4);     // user only
  b.add_sample(500, 500, b.stack({java_same}), 5);
  b.add_sample(500, 500, b.stack({native_same}), 6);
  b.add_sample(600, 600, b.stack({f}), 7);            // edge;E;f by its error frame
  b.add_sample(601, 601, b.stack({f, pseudo_e}), 8);  // edge;E;f by its stack
  b.add_sample(0, 0, b.stack({k_leaf}), 9);
  return s;
}

model::Archive archive() {
  model::Archive a = fold_fixture::archive();
  a.sessions.push_back(corner_session());
  return a;
}

TEST(FoldedSwitches, EveryCombinationPrintsWhatFoldStacksSpells) {
  model::Archive a = archive();
  int runs = 0;
  for (int proc = 0; proc < 4; ++proc) {
    for (int part = 0; part < 3; ++part) {
      for (int bits = 0; bits < 8; ++bits) {
        StackOptions so;
        so.process_frame = proc != 3;
        so.with_pid = proc == 1;
        so.with_tid = proc == 2;
        so.user_only = part == 1;
        so.kernel_only = part == 2;
        so.include_idle = (bits & 1) != 0;
        FoldedOptions fo;
        fo.annotate = (bits & 2) != 0;
        fo.kernel_delimiter = (bits & 4) != 0;
        EXPECT_EQ(folded(a, so, fo), reference(a, so, fo))
            << "proc " << proc << " part " << part << " bits " << bits;
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 96);
}

TEST(FoldedSwitches, CornerCasesSpellAsBccAndGprofiler) {
  model::Archive a;
  a.sessions.push_back(corner_session());
  FoldedOptions fo;
  fo.annotate = true;
  fo.kernel_delimiter = true;
  EXPECT_EQ(folded(a, {}, fo),
            "edge;E;f 15\n"
            "edge;k_outer_[k];k_inl_[i] 2\n"
            "edge;run|semi line 4\n"
            "edge;run|semi line;-;k_outer_[k];k_inl_[i];k_leaf_[k] 4\n"
            "edge;same 6\n"
            "edge;same_[j] 5\n"
            "swapper;k_leaf_[k] 9\n");
  StackOptions kernel;
  kernel.kernel_only = true;
  kernel.include_idle = false;
  EXPECT_EQ(folded(a, kernel, {}), "edge;k_outer;k_inl 2\nedge;k_outer;k_inl;k_leaf 4\n");
  // The frame kinds decide where "-" goes: an inlined frame counts as user code.
  EXPECT_EQ(folded(a, kernel, fo),
            "edge;k_outer_[k];k_inl_[i] 2\nedge;k_outer_[k];k_inl_[i];-;k_leaf_[k] 4\n");
  StackOptions user;
  user.user_only = true;
  user.with_pid = true;
  EXPECT_EQ(folded(a, user, {}),
            "edge-500;run|semi line 8\n"
            "edge-500;same 11\n"
            "edge-600;E;f 7\n"
            "edge-601;E;f 8\n");
}

TEST(FoldedSwitches, FoldStacksSumsStacksThatSpellTheSameFrames) {
  model::Archive a;
  a.sessions.push_back(corner_session());
  StackOptions so;
  so.include_idle = false;
  uint64_t ef = 0;
  for (const gp::fold::FoldedStack& st : gp::fold::fold_stacks(a, so)) {
    if (st.frames.size() == 3 && st.frames[1].name == "E" && st.frames[2].name == "f") {
      EXPECT_EQ(ef, 0u) << "edge;E;f listed twice";
      ef = st.count;
    }
  }
  EXPECT_EQ(ef, 15u);
}

}  // namespace
}  // namespace gp::test::fold
