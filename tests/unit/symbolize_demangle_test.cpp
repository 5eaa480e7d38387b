#include <gtest/gtest.h>

#include "gp/symbolize/demangle.h"

namespace gp::test::symbolize {
namespace {

using gp::symbolize::demangle;
using gp::symbolize::DemangleMode;

struct Case {
  const char* mangled;
  const char* full;
  const char* templates;
  const char* simplified;
};

const Case kCases[] = {
    {"_ZN2ns5StackIiE4pushERKi", "ns::Stack<int>::push(int const&)", "ns::Stack<int>::push",
     "ns::Stack::push"},
    {"_ZN2ns10accumulateIlEET_RKSt6vectorIS1_SaIS1_EES1_",
     "long ns::accumulate<long>(std::vector<long, std::allocator<long> > const&, long)",
     "ns::accumulate<long>", "ns::accumulate"},
    {"_ZN12_GLOBAL__N_111hidden_workEm", "(anonymous namespace)::hidden_work(unsigned long)",
     "(anonymous namespace)::hidden_work", "(anonymous namespace)::hidden_work"},
    {"_ZNKSt8functionIFviEEclEi", "std::function<void (int)>::operator()(int) const",
     "std::function<void (int)>::operator()", "std::function::operator()"},
    {"_ZN2nsltERKNS_1AES2_", "ns::operator<(ns::A const&, ns::A const&)", "ns::operator<",
     "ns::operator<"},
    {"_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const",
     "main::{lambda(int)#1}::operator()", "main::{lambda(int)#1}::operator()"},
};

TEST(Demangle, FullTemplatesAndSimplifiedStyles) {
  for (const auto& c : kCases) {
    EXPECT_EQ(demangle(c.mangled, DemangleMode::full), c.full);
    EXPECT_EQ(demangle(c.mangled, DemangleMode::templates), c.templates) << c.full;
    EXPECT_EQ(demangle(c.mangled, DemangleMode::simplified), c.simplified) << c.full;
    EXPECT_EQ(demangle(c.mangled, DemangleMode::none), c.mangled);
  }
}

TEST(Demangle, RustLegacyLosesHashAndEscapes) {
  EXPECT_EQ(demangle("_ZN4core3fmt5Write9write_fmt17h0123456789abcdefE", DemangleMode::full),
            "core::fmt::Write::write_fmt");
  EXPECT_EQ(demangle("_ZN58_$LT$alloc..string..String$u20$as$u20$core..fmt..Write$GT$9write_"
                     "str17h1234567890abcdefE",
                     DemangleMode::full),
            "<alloc::string::String as core::fmt::Write>::write_str");
}

TEST(Demangle, RustV0Names) {
  EXPECT_EQ(demangle("_RNvCs1234_7mycrate3foo", DemangleMode::full), "mycrate::foo");
  EXPECT_EQ(demangle("_RNvMNtCs8ZhvmNL0aWb_4core3fmtNtB2_9Formatter3pad", DemangleMode::templates),
            "<core::fmt::Formatter>::pad");
  EXPECT_EQ(demangle("_RNvCs1234_7mycrate3foo@plt", DemangleMode::simplified), "mycrate::foo@plt");
}

TEST(Demangle, LeavesPlainAndUnknownNamesAlone) {
  EXPECT_EQ(demangle("fp_leaf", DemangleMode::full), "fp_leaf");
  EXPECT_EQ(demangle("main.work", DemangleMode::simplified), "main.work");
  EXPECT_EQ(demangle("_Zgarbage", DemangleMode::full), "_Zgarbage");
  EXPECT_EQ(demangle("_Rgarbage", DemangleMode::full), "_Rgarbage");
}

TEST(Demangle, ParsesModeNames) {
  DemangleMode m = DemangleMode::full;
  EXPECT_TRUE(gp::symbolize::parse_demangle_mode("simplified", &m));
  EXPECT_EQ(m, DemangleMode::simplified);
  EXPECT_FALSE(gp::symbolize::parse_demangle_mode("fancy", &m));
}

}  // namespace
}  // namespace gp::test::symbolize
