#pragma once
// Line-number tables of CPython code objects, decoded to "which source line is this bytecode
// offset on". Three formats (CPython's Objects/lnotab_notes.txt of each version):
//  - 3.8/3.9 co_lnotab: (bytecode delta, signed line delta) byte pairs;
//  - 3.10 co_linetable: (bytecode delta, signed line delta) pairs, line delta -128 = no line;
//  - 3.11+ co_linetable: the location table (one entry per run of code units, with varints).
// Pure functions over bytes read from the target: no I/O, safe on garbage (bounded loops).

#include <cstdint>
#include <string_view>

namespace gp::runtime::python {

enum class LineTableFormat { lnotab, linetable310, locations311 };

// Format used by CPython 3.minor.
LineTableFormat line_table_format(int minor);

// The line of the instruction at `byte_offset` (offset into co_code in bytes; for 3.11+
// 2 * the code-unit index). Returns first_line when the table ends before the offset,
// and 0 when the instruction has no line (3.10+ "no line" entries).
uint32_t line_for_offset(LineTableFormat format, std::string_view table, uint32_t first_line,
                         uint32_t byte_offset);

}  // namespace gp::runtime::python
