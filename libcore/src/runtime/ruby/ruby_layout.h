#pragma once
// Where CRuby keeps what gp's Ruby sampler reads: byte offsets of the fields of rb_vm_t, the
// main ractor's thread list, rb_thread_t, rb_execution_context_t, rb_control_frame_t,
// rb_iseq_t / rb_iseq_constant_body, method entries, RString and RArray, per Ruby version,
// for x86-64 (LP64).
//
// These are internal structs (vm_core.h, iseq.h, method.h, internal/*.h): they change between
// minor releases but not within one (a teeny release keeps the ABI of its series). Ruby 3.1 is
// the one table: derived from 3.1's vm_core.h and checked field by field against a live
// Debian 12 ruby 3.1.2 (the threads' tids, each frame's name and file:line against
// Thread#backtrace_locations; tests/unit/runtime_ruby_walker_test.cpp). Other versions have no
// table: the sampler skips them rather than guess.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gp::runtime::ruby {

struct RubyVersion {
  int major = 0, minor = 0, teeny = 0;
  std::string text() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(teeny);
  }
};

// "3.1.2" → {3, 1, 2}; nullopt unless three dot-separated numbers.
std::optional<RubyVersion> parse_ruby_version(std::string_view text);

struct RubyLayout {
  int major = 0, minor = 0;
  // rb_vm_t
  uint32_t vm_main_ractor = 0;  // vm->ractor.main_ractor
  // rb_ractor_t
  uint32_t ractor_threads_head = 0;  // threads.set: list_head of rb_thread_t.lt_node
  uint32_t ractor_running_ec = 0;    // threads.running_ec: the ec holding the GVL
  // rb_thread_t (lt_node is at offset 0: a list node address is its thread's)
  uint32_t thread_ec = 0;
  uint32_t thread_tid = 0;  // int, the kernel tid
  // rb_execution_context_t
  uint32_t ec_vm_stack = 0;
  uint32_t ec_vm_stack_size = 0;  // in VALUEs
  uint32_t ec_cfp = 0;
  // rb_control_frame_t (an array growing down from the end of the VM stack)
  uint32_t cfp_pc = 0;
  uint32_t cfp_iseq = 0;
  uint32_t cfp_ep = 0;
  uint32_t cfp_size = 0;
  // rb_iseq_t and its body
  uint32_t iseq_body = 0;
  uint32_t body_iseq_size = 0;         // unsigned int, in VALUEs
  uint32_t body_iseq_encoded = 0;      // VALUE*
  uint32_t body_pathobj = 0;           // String, or Array [path, realpath]
  uint32_t body_label = 0;             // String
  uint32_t body_first_lineno = 0;      // Fixnum
  uint32_t body_insns_body = 0;        // iseq_insn_info_entry*
  uint32_t body_insns_positions = 0;   // unsigned int*, NULL once the succinct table is built
  uint32_t body_insns_size = 0;        // unsigned int
  uint32_t body_insns_succ_table = 0;  // struct succ_index_table*
  uint32_t body_read_size = 0;         // bytes of the body to read to cover the fields above
  uint32_t insn_info_entry_size = 0;   // sizeof(struct iseq_insn_info_entry); line_no at 0
  // Environment (ep[...] slots, in VALUEs from ep)
  int32_t ep_me_cref = 0;  // VM_ENV_DATA_INDEX_ME_CREF
  int32_t ep_flags = 0;    // VM_ENV_DATA_INDEX_FLAGS
  uint64_t frame_magic_mask = 0;
  uint64_t frame_magic_cfunc = 0;
  // rb_method_entry_t / rb_method_definition_t
  uint32_t me_def = 0;
  uint32_t def_type_bits = 0;  // the first word's low bits hold the method type
  uint32_t def_original_id = 0;
  uint32_t method_type_cfunc = 0;
  // The global symbol table (rb_symbols_t ruby_global_symbols)
  uint32_t symbols_last_id = 0;  // rb_id_serial_t (uint32)
  uint32_t symbols_ids = 0;      // Array of Arrays of [string, symbol] pairs
  uint32_t id_entry_unit = 0;    // ID_ENTRY_UNIT: pairs per inner array
  uint32_t id_scope_shift = 0;   // RUBY_ID_SCOPE_SHIFT
  uint64_t last_op_id = 0;       // tLAST_OP_ID: IDs up to it are their own serial
  // IDs every Ruby of this version names the same ({id, name}): they confirm a symbol table
  // found without a symbol (find_global_symbols).
  std::vector<std::pair<uint64_t, std::string>> known_ids;
  // Objects
  uint64_t qnil = 0;
  uint32_t flags_type_mask = 0;  // T_MASK
  uint32_t type_string = 0, type_array = 0, type_imemo = 0;
  uint32_t imemo_shift = 0, imemo_mask = 0, imemo_ment = 0;
  uint64_t string_noembed = 0;  // RSTRING_NOEMBED
  uint32_t string_embed_len_shift = 0;
  uint64_t string_embed_len_mask = 0;  // after the shift
  uint32_t string_embed_data = 0;
  uint32_t string_heap_len = 0, string_heap_ptr = 0;
  uint64_t array_embed = 0;  // RARRAY_EMBED_FLAG
  uint32_t array_embed_len_shift = 0;
  uint64_t array_embed_len_mask = 0;
  uint32_t array_embed_data = 0;
  uint32_t array_heap_len = 0, array_heap_ptr = 0;
};

// The table of major.minor; nullopt when gp has none (then the process is skipped).
std::optional<RubyLayout> layout_for_version(const RubyVersion& v);

// "3.1" : the versions that have a table, for messages.
std::string supported_versions();

}  // namespace gp::runtime::ruby
