// The parts of CPython's evaluation loop past its symbol (see python_eval_parts.h).
#include "record/python_eval_parts.h"

#include <algorithm>
#include <cstring>

#include "unwind/cfi_entries.h"

namespace gp::record {
namespace {

int32_t rel32(std::span<const uint8_t> code, size_t at) {
  int32_t v = 0;
  std::memcpy(&v, code.data() + at, sizeof(v));
  return v;
}

std::span<const uint8_t> bytes_of(const symbolize::ElfFile::Section& s) {
  return {reinterpret_cast<const uint8_t*>(s.data.data()), s.data.size()};
}

}  // namespace

std::vector<AddressRange> jumped_to_parts(std::span<const uint8_t> code, uint64_t start,
                                          std::span<const AddressRange> fdes) {
  const uint64_t end = start + code.size();
  std::vector<AddressRange> parts;
  // Every position is tried as an instruction: a misread jump must land in a large FDE of a
  // function without a symbol to count, and then only adds a range a frame must also be in.
  for (size_t i = 0; i + 5 <= code.size(); ++i) {
    uint64_t target = 0;
    if (code[i] == 0xe9) {  // jmp rel32
      target = start + i + 5 + static_cast<int64_t>(rel32(code, i + 1));
    } else if (code[i] == 0x0f && i + 6 <= code.size() && (code[i + 1] & 0xf0) == 0x80) {
      target = start + i + 6 + static_cast<int64_t>(rel32(code, i + 2));  // jcc rel32
    } else {
      continue;
    }
    if (target >= start && target < end) continue;
    auto after = std::upper_bound(fdes.begin(), fdes.end(), target,
                                  [](uint64_t t, const AddressRange& r) { return t < r.start; });
    if (after == fdes.begin()) continue;
    const AddressRange& part = *(after - 1);
    if (target >= part.end || part.end - part.start < kMinEvalPart) continue;
    if (part.start < end && part.end > start) continue;  // the function itself
    if (std::none_of(parts.begin(), parts.end(),
                     [&](const AddressRange& p) { return p.start == part.start; }))
      parts.push_back(part);
  }
  return parts;
}

std::vector<AddressRange> eval_loop_parts(const symbolize::ElfFile& file, uint64_t start,
                                          uint64_t end) {
  auto text = file.section(".text");
  auto eh_frame = file.section(".eh_frame");
  if (!text || !eh_frame || start < text->address || end <= start ||
      end - text->address > text->data.size())
    return {};
  unwind::SectionContext context;
  context.section = unwind::CfiSection{bytes_of(*eh_frame), eh_frame->address};
  context.text_base = text->address;
  if (auto got = file.section(".got")) context.data_base = got->address;
  unwind::CfiEntries entries;
  entries.max_fdes = 1u << 20;
  unwind::parse_cfi_section(context, entries);
  std::vector<AddressRange> fdes;
  fdes.reserve(entries.fdes.size());
  for (const unwind::Fde& f : entries.fdes) fdes.push_back({f.start, f.end});
  std::sort(fdes.begin(), fdes.end(),
            [](const AddressRange& a, const AddressRange& b) { return a.start < b.start; });
  return jumped_to_parts(bytes_of(*text).subspan(start - text->address, end - start), start, fdes);
}

}  // namespace gp::record
