// Ruby struct layouts (see ruby_layout.h).
#include "runtime/ruby/ruby_layout.h"

#include <charconv>

namespace gp::runtime::ruby {
namespace {

// Ruby 3.1 (vm_core.h, iseq.h, method.h, symbol.h, internal/imemo.h, rstring.h, rarray.h of
// the 3.1 series; x86-64). The comments give each struct's fields up to the one read.
RubyLayout ruby_3_1() {
  RubyLayout l;
  l.major = 3, l.minor = 1;
  // rb_vm_t: self; ractor { list_head set (16); cnt; blocking_cnt; main_ractor; main_thread }
  l.vm_main_ractor = 32;
  // rb_ractor_t: pub (40), sync (200), receiving_mutex, yield_atexit, barrier_wait_cond (48),
  // threads { set @304; cnt; blocking_cnt; sleeper; gvl (184) ; running_ec @520; main @528 }
  l.ractor_threads_head = 304;
  l.ractor_running_ec = 520;
  // rb_thread_t: lt_node (16), self, ractor, vm, ec @40, last_status, calling, top_self,
  // top_wrapper, thread_id (pthread_t) @80, tid @88
  l.thread_ec = 40;
  l.thread_tid = 88;
  // rb_execution_context_t: vm_stack, vm_stack_size, cfp
  l.ec_vm_stack = 0, l.ec_vm_stack_size = 8, l.ec_cfp = 16;
  // rb_control_frame_t: pc, sp, iseq, self, ep, block_code, __bp__, jit_return
  l.cfp_pc = 0, l.cfp_iseq = 16, l.cfp_ep = 32, l.cfp_size = 64;
  // rb_iseq_t: flags, wrapper, body
  l.iseq_body = 16;
  // rb_iseq_constant_body: type, iseq_size, iseq_encoded, param (48) @16,
  // location { pathobj @64, base_label, label @80, first_lineno @88, node_id, code_location },
  // insns_info { body @120, positions @128, size @136, succ_index_table @144 }
  l.body_iseq_size = 4, l.body_iseq_encoded = 8;
  l.body_pathobj = 64, l.body_label = 80, l.body_first_lineno = 88;
  l.body_insns_body = 120, l.body_insns_positions = 128, l.body_insns_size = 136;
  l.body_insns_succ_table = 144;
  l.body_read_size = 152;
  l.insn_info_entry_size = 12;  // { int line_no; int node_id; rb_event_flag_t events; }
  l.ep_me_cref = -2, l.ep_flags = 0;
  l.frame_magic_mask = 0x7fff0001, l.frame_magic_cfunc = 0x55550001;
  // rb_method_entry_t: flags, defined_class, def @16, called_id, owner
  l.me_def = 16;
  // rb_method_definition_t: { type:4, iseq_overload:1, alias_count:27; complemented_count:28,
  // no_redef_warning:1 } (8 bytes), body union (24), original_id @32
  l.def_type_bits = 0x0f, l.def_original_id = 32, l.method_type_cfunc = 1;
  // rb_symbols_t: last_id (uint32), str_sym, ids @16, dsymbol_fstr_hash
  l.symbols_last_id = 0, l.symbols_ids = 16;
  l.id_entry_unit = 512, l.id_scope_shift = 4, l.last_op_id = 169;
  l.known_ids = {{43, "+"}, {3009, "each"}, {3409, "call"}};  // idPLUS, idEach, idCall
  l.qnil = 0x08;
  l.flags_type_mask = 0x1f, l.type_string = 0x05, l.type_array = 0x07, l.type_imemo = 0x1a;
  l.imemo_shift = 12, l.imemo_mask = 0x0f, l.imemo_ment = 6;
  // RString: flags, klass, { heap { len, ptr, aux } | embed { char ary[24] } }; embedded
  // length in flags bits 14..18 (RUBY_FL_USER2..6)
  l.string_noembed = 1u << 13;
  l.string_embed_len_shift = 14, l.string_embed_len_mask = 0x1f;
  l.string_embed_data = 16, l.string_heap_len = 16, l.string_heap_ptr = 24;
  // RArray: flags, klass, { heap { len, aux, ptr } | VALUE ary[3] }; embedded length in flags
  // bits 15..16 (RUBY_FL_USER3..4)
  l.array_embed = 1u << 13;
  l.array_embed_len_shift = 15, l.array_embed_len_mask = 0x3;
  l.array_embed_data = 16, l.array_heap_len = 16, l.array_heap_ptr = 32;
  return l;
}

}  // namespace

std::optional<RubyVersion> parse_ruby_version(std::string_view text) {
  RubyVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.teeny};
  for (int i = 0; i < 3; ++i) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *parts[i]);
    if (ec != std::errc() || p == text.data()) return std::nullopt;
    text.remove_prefix(static_cast<size_t>(p - text.data()));
    if (i < 2) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
  }
  if (!text.empty()) return std::nullopt;
  return v;
}

std::optional<RubyLayout> layout_for_version(const RubyVersion& v) {
  if (v.major == 3 && v.minor == 1) return ruby_3_1();
  return std::nullopt;
}

std::string supported_versions() { return "3.1"; }

}  // namespace gp::runtime::ruby
