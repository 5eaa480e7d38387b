// Which DWARF call-frame forms binaries use, and which of them gp's table builder follows: for
// each file, per form (gp::unwind::CfiForm), the share of its FDEs whose program uses the form
// and, of those FDEs, the share with a row gp cannot follow (`unsupported`: the walk ends
// [truncated] there) and with a `reg` row (a CFA in another register: followed in the sampled
// frame only). Forms no FDE uses are left out.
//   cfi_forms_survey FILE...

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "gp/unwind/table.h"

namespace {

double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

bool survey(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::perror(path);
    return false;
  }
  auto stats = gp::unwind::survey_cfi(fd);
  ::close(fd);
  if (!stats) {
    std::fprintf(stderr, "cfi_forms_survey: error: '%s': %s\n", path,
                 stats.error().message.c_str());
    return false;
  }
  const gp::unwind::TableStats& s = *stats;
  std::printf("%s: %llu FDEs; %.2f%% with an unsupported row, %.2f%% with a reg row\n", path,
              static_cast<unsigned long long>(s.fdes),
              percent(s.fdes_with_unsupported_rows, s.fdes), percent(s.fdes_register, s.fdes));
  std::printf("  %-18s %8s %8s %14s %10s\n", "form", "fdes", "share%", "unsupported%", "reg%");
  for (size_t i = 0; i < gp::unwind::kCfiForms; ++i) {
    if (s.form_fdes[i] == 0) continue;
    std::printf("  %-18s %8llu %8.2f %14.2f %10.2f\n",
                gp::unwind::cfi_form_name(static_cast<gp::unwind::CfiForm>(i)),
                static_cast<unsigned long long>(s.form_fdes[i]), percent(s.form_fdes[i], s.fdes),
                percent(s.form_fdes_unsupported[i], s.form_fdes[i]),
                percent(s.form_fdes_register[i], s.form_fdes[i]));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cfi_forms_survey FILE...\n");
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    if (!survey(argv[i])) status = 1;
  }
  return status;
}
