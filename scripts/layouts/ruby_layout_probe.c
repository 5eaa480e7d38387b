/* Prints one entry of gp's Ruby layout table (libcore/src/runtime/ruby/ruby_layouts.inc): the
 * offsets and constants gp's Ruby sampler reads (struct RubyLayout, ruby_layout.h, in its order),
 * measured with offsetof() and the headers' own constants, against one CRuby version's internal
 * headers (its source package) and ruby/config.h (its ruby-dev package). Compiled by
 * scripts/gen-interp-layouts.sh with the host's compiler; never edited into the table by hand.
 * GP_ID_ENTRY_UNIT: symbol.c's ID_ENTRY_UNIT (a constant of that file, not of a header). */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ruby/ruby.h"
#include "ruby/encoding.h"
#include "ruby/version.h"
#include "vm_core.h"
#include "iseq.h"
#include "method.h"
#include "symbol.h"
#include "id.h"
#define GP_RUBY (RUBY_API_VERSION_MAJOR * 100 + RUBY_API_VERSION_MINOR)
#if GP_RUBY >= 300
#include "ractor_core.h"
#include "internal/imemo.h"
#else
#include "internal.h"
#endif

#ifndef GP_ID_ENTRY_UNIT
#error "GP_ID_ENTRY_UNIT (symbol.c's ID_ENTRY_UNIT) is not defined"
#endif

#define END(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define FIELD(name, value) printf("        ." #name " = %llu,\n", (unsigned long long)(value))
#define SFIELD(name, value) printf("        ." #name " = %lld,\n", (long long)(value))
#define HFIELD(name, value) printf("        ." #name " = 0x%llx,\n", (unsigned long long)(value))

int main(void) {
  /* The sampler reads these widths and shapes; a header that changes them needs a sampler
   * change, not just a new table. */
  const struct rb_iseq_constant_body* body = 0;
  if (sizeof(body->iseq_size) != 4 || sizeof(body->insns_info.size) != 4 ||
      sizeof(((struct iseq_insn_info_entry*)0)->line_no) != 4 ||
      offsetof(struct iseq_insn_info_entry, line_no) != 0 ||
      sizeof(((rb_symbols_t*)0)->last_id) != 4 || sizeof(ID) != 8 || sizeof(VALUE) != 8) {
    fprintf(stderr, "ruby_layout_probe: Ruby %d.%d: a field's width changed\n",
            RUBY_API_VERSION_MAJOR, RUBY_API_VERSION_MINOR);
    return 1;
  }
  /* The method type: the low bits of the definition's first word (a bit-field). */
  rb_method_definition_t def;
  uint32_t type_bits = 0;
  memset(&def, 0, sizeof def);
  def.type = (rb_method_type_t)((1u << VM_METHOD_TYPE_MINIMUM_BITS) - 1);
  memcpy(&type_bits, &def, sizeof type_bits);

  printf("    // Ruby %d.%d\n    RubyLayout{\n", RUBY_API_VERSION_MAJOR, RUBY_API_VERSION_MINOR);
  FIELD(major, RUBY_API_VERSION_MAJOR);
  FIELD(minor, RUBY_API_VERSION_MINOR);
  /* ruby_vm_at_exit's store, by which gp finds ruby_current_vm_ptr when it is not exported. */
  size_t at_exit = offsetof(rb_vm_t, at_exit);
#if GP_RUBY >= 300
  /* Threads: the main ractor's list (rb_thread_t.lt_node), the ec holding the GVL beside it. */
  if (offsetof(rb_thread_t, lt_node) != 0) return fprintf(stderr, "lt_node moved\n"), 1;
  FIELD(vm_main_ractor, offsetof(rb_vm_t, ractor.main_ractor));
  FIELD(vm_at_exit, at_exit);
  FIELD(threads_head, offsetof(rb_ractor_t, threads.set));
  FIELD(running_ec, offsetof(rb_ractor_t, threads.running_ec));
#else
  /* Threads: the VM's list (rb_thread_t.vmlt_node); the thread holding the GVL beside it. */
  if (offsetof(rb_thread_t, vmlt_node) != 0) return fprintf(stderr, "vmlt_node moved\n"), 1;
  FIELD(vm_main_ractor, 0);
  FIELD(vm_at_exit, at_exit);
  FIELD(threads_head, offsetof(rb_vm_t, living_threads));
  FIELD(running_thread, offsetof(rb_vm_t, gvl.owner));
#endif
  FIELD(thread_ec, offsetof(rb_thread_t, ec));
#if GP_RUBY >= 303
  FIELD(thread_nt, offsetof(rb_thread_t, nt));
  FIELD(thread_tid, offsetof(struct rb_native_thread, tid));
#elif GP_RUBY >= 301
  FIELD(thread_tid, offsetof(rb_thread_t, tid));
#else
  FIELD(thread_pthread, offsetof(rb_thread_t, thread_id));
  FIELD(vm_main_thread, offsetof(rb_vm_t, main_thread));
#endif
  FIELD(ec_vm_stack, offsetof(rb_execution_context_t, vm_stack));
  FIELD(ec_vm_stack_size, offsetof(rb_execution_context_t, vm_stack_size));
  FIELD(ec_cfp, offsetof(rb_execution_context_t, cfp));
  FIELD(cfp_pc, offsetof(rb_control_frame_t, pc));
  FIELD(cfp_iseq, offsetof(rb_control_frame_t, iseq));
  FIELD(cfp_ep, offsetof(rb_control_frame_t, ep));
  FIELD(cfp_size, sizeof(rb_control_frame_t));
  FIELD(iseq_body, offsetof(rb_iseq_t, body));
  typedef struct rb_iseq_constant_body B;
  FIELD(body_iseq_size, offsetof(B, iseq_size));
  FIELD(body_iseq_encoded, offsetof(B, iseq_encoded));
  FIELD(body_pathobj, offsetof(B, location.pathobj));
  FIELD(body_label, offsetof(B, location.label));
  FIELD(body_first_lineno, offsetof(B, location.first_lineno));
  FIELD(body_first_lineno_size, sizeof(((B*)0)->location.first_lineno));
  FIELD(body_insns_body, offsetof(B, insns_info.body));
  FIELD(body_insns_positions, offsetof(B, insns_info.positions));
  FIELD(body_insns_size, offsetof(B, insns_info.size));
  FIELD(body_insns_succ_table, offsetof(B, insns_info.succ_index_table));
  size_t body_end = MAX2(END(B, iseq_size), END(B, iseq_encoded));
  body_end = MAX2(body_end, MAX2(END(B, location.pathobj), END(B, location.label)));
  body_end = MAX2(body_end, MAX2(END(B, location.first_lineno), END(B, insns_info.body)));
  body_end = MAX2(body_end, MAX2(END(B, insns_info.positions), END(B, insns_info.size)));
  body_end = MAX2(body_end, END(B, insns_info.succ_index_table));
  FIELD(body_read_size, body_end);
  FIELD(insn_info_entry_size, sizeof(struct iseq_insn_info_entry));
  SFIELD(ep_me_cref, VM_ENV_DATA_INDEX_ME_CREF);
  SFIELD(ep_flags, VM_ENV_DATA_INDEX_FLAGS);
  HFIELD(frame_magic_mask, VM_FRAME_MAGIC_MASK);
  HFIELD(frame_magic_cfunc, VM_FRAME_MAGIC_CFUNC);
  FIELD(me_def, offsetof(rb_method_entry_t, def));
  HFIELD(def_type_bits, type_bits);
  FIELD(def_original_id, offsetof(rb_method_definition_t, original_id));
  FIELD(method_type_cfunc, VM_METHOD_TYPE_CFUNC);
  FIELD(symbols_last_id, offsetof(rb_symbols_t, last_id));
  FIELD(symbols_ids, offsetof(rb_symbols_t, ids));
  FIELD(id_entry_unit, GP_ID_ENTRY_UNIT);
  FIELD(id_scope_shift, RUBY_ID_SCOPE_SHIFT);
  FIELD(last_op_id, tLAST_OP_ID);
  printf("        .known_ids = {{%llu, \"+\"}, {%llu, \"each\"}, {%llu, \"call\"}},\n",
         (unsigned long long)idPLUS, (unsigned long long)idEach, (unsigned long long)idCall);
  HFIELD(qnil, Qnil);
  HFIELD(flags_type_mask, T_MASK);
  HFIELD(type_string, T_STRING);
  HFIELD(type_array, T_ARRAY);
  HFIELD(type_imemo, T_IMEMO);
  FIELD(imemo_shift, FL_USHIFT);
  HFIELD(imemo_mask, IMEMO_MASK);
  FIELD(imemo_iseq, imemo_iseq);
  FIELD(imemo_ment, imemo_ment);
  HFIELD(string_noembed, RSTRING_NOEMBED);
#if GP_RUBY >= 302
  /* The length is a field of every string (embedded or not). */
  FIELD(string_embed_len_shift, 0);
  HFIELD(string_embed_len_mask, 0);
  FIELD(string_embed_data, offsetof(struct RString, as.embed.ary));
  FIELD(string_heap_len, offsetof(struct RString, len));
#else
  FIELD(string_embed_len_shift, RSTRING_EMBED_LEN_SHIFT);
  HFIELD(string_embed_len_mask, RSTRING_EMBED_LEN_MASK >> RSTRING_EMBED_LEN_SHIFT);
#if GP_RUBY >= 301
  FIELD(string_embed_data, offsetof(struct RString, as.embed.ary));
#else
  FIELD(string_embed_data, offsetof(struct RString, as.ary));
#endif
  FIELD(string_heap_len, offsetof(struct RString, as.heap.len));
#endif
  FIELD(string_heap_ptr, offsetof(struct RString, as.heap.ptr));
  HFIELD(array_embed, RARRAY_EMBED_FLAG);
  FIELD(array_embed_len_shift, RARRAY_EMBED_LEN_SHIFT);
  HFIELD(array_embed_len_mask, RARRAY_EMBED_LEN_MASK >> RARRAY_EMBED_LEN_SHIFT);
  FIELD(array_embed_data, offsetof(struct RArray, as.ary));
  FIELD(array_heap_len, offsetof(struct RArray, as.heap.len));
  FIELD(array_heap_ptr, offsetof(struct RArray, as.heap.ptr));
  printf("    },\n");
  return 0;
}
