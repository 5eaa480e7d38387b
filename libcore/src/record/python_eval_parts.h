#pragma once
// The parts of CPython's evaluation loop that its symbol does not cover. GCC splits a function's
// rarely run blocks into a part of its own (`_PyEval_EvalFrameDefault.cold`, in .text.unlikely
// or .text, with an FDE of its own and no dynamic symbol), and the exported function jumps to
// it. Debian's CPython 3.14 and 3.15 (built with profile-guided optimization) run nearly all of
// the loop in such a part: the exported symbol is a kilobyte of entry and exit code, and the
// loop's frames sit in the part. Found from the ELF file alone: the near jumps of the exported
// function that leave it, and the .eh_frame FDEs that hold their targets.

#include <cstdint>
#include <span>
#include <vector>

#include "gp/record/python_frames.h"
#include "gp/symbolize/elf_file.h"

namespace gp::record {

// Parts of at least this many bytes are kept: the loop's, not a small helper a jump reaches.
inline constexpr uint64_t kMinEvalPart = 4096;

// The function parts the code of [start, end) (link-time addresses in `code`, the bytes of the
// function) jumps to, as link-time ranges from `fdes` (sorted by start, not overlapping
// [start, end)), at least kMinEvalPart bytes each. Untrusted input: any bytes give a bounded
// answer.
std::vector<AddressRange> jumped_to_parts(std::span<const uint8_t> code, uint64_t start,
                                          std::span<const AddressRange> fdes);

// The parts of the function at link-time [start, end) in `file`, from its .text and .eh_frame.
// Empty when the file has neither, or the function is not in .text.
std::vector<AddressRange> eval_loop_parts(const symbolize::ElfFile& file, uint64_t start,
                                          uint64_t end);

}  // namespace gp::record
