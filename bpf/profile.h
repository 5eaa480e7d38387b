/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI between bpf/profile.bpf.c and gp-record (tools/gp-record/sampler_bpf.cpp): map keys,
 * values, ring-buffer events and counter slots. Plain C with fixed-width types and explicit
 * padding; user space static_asserts every size. Change both sides together.
 */
#ifndef GP_PROFILE_H
#define GP_PROFILE_H

#define GP_MAX_STACK_DEPTH 127 /* the kernel's PERF_MAX_STACK_DEPTH default */
#define GP_TASK_COMM_LEN 16
#define GP_DEFAULT_STORAGE 16384
/* cgroups gp-record --cgroup may name (a task in any of them, or below, is sampled). */
#define GP_MAX_CGROUPS 64
/* A stack error: the stack was not requested (-U, -K). Other errors are -errno values. */
#define GP_NO_STACK (-1)
/* Words of user stack memory the frame walk reads with one helper call (a power of two). */
#define GP_STACK_WINDOW_WORDS 128

/* One stack, leaf first, as stored in a slot's stack map under its 64-bit hash. */
struct gp_stack {
	__u16 depth; /* entries of ips in use, 1..GP_MAX_STACK_DEPTH */
	__u8 end;    /* enum gp_stack_end: how a user stack ended (part of its hash) */
	__u8 pad;
	__u32 check; /* a second, independent 32-bit hash of the frames: a hit with another check
		      * (or depth, or leaf) is a collision of the 64-bit key */
	__u64 ips[GP_MAX_STACK_DEPTH];
};

/* One aggregation slot: samples of one thread with one (user, kernel) stack pair. A stack is
 * the key of its entry in the stack map of the same slot (A or B), never 0; 0 means there is
 * none, and the matching error says why: -EFAULT no stack of that kind (kernel thread, sample in
 * user mode), -EEXIST two stacks with one hash (the second is lost), -E2BIG/-ENOMEM the stack map
 * was full, GP_NO_STACK not requested. */
struct gp_sample_key {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 user_stack;
	__u64 kernel_stack;
	__s32 user_error;
	__s32 kernel_error;
	char comm[GP_TASK_COMM_LEN]; /* thread comm at sample time */
};

enum gp_event_type {
	GP_EVENT_NEW_PROCESS = 1, /* first sample of a pid (or first after its exec) */
	GP_EVENT_EXEC = 2, /* sched_process_exec of an announced pid that passes the filters */
	GP_EVENT_EXIT = 3, /* sched_process_exit of an announced pid's main thread */
};

/* Ring-buffer record: rare events that make user space snapshot /proc/PID at once (or forget a
 * process that exited). */
struct gp_event {
	__u32 type; /* enum gp_event_type */
	__u32 pid;
	__u32 tid;
	__u32 pad;
	__u64 time_ns; /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	char comm[GP_TASK_COMM_LEN];
};

/* Counters of the per-CPU `cpu_state` element (summed by user space). */
enum gp_counter {
	GP_COUNTER_SAMPLES = 0,		 /* samples that passed the filters */
	GP_COUNTER_FILTERED,		 /* samples dropped by the filters */
	GP_COUNTER_USER_COLLISIONS,	 /* user stack lost: another stack had its hash (-EEXIST) */
	GP_COUNTER_KERNEL_COLLISIONS,	 /* kernel stack lost to a hash collision */
	GP_COUNTER_STACK_ERRORS,	 /* other stack failures (e.g. -E2BIG: stack map full) */
	GP_COUNTER_COUNTS_FULL,		 /* sample dropped: the counts map was full */
	GP_COUNTER_EVENTS_LOST,		 /* ring-buffer reservation failed (event dropped) */
	GP_COUNTER_UNWIND_BEFORE_TABLES, /* user stack walked with frame pointers: the process's
					  * unwind tables were not loaded yet */
	GP_COUNTER_UNWIND_COMPLETE,	 /* user stacks unwound to the outermost frame */
	GP_COUNTER_TRUNC_DEPTH,		 /* truncated: GP_MAX_STACK_DEPTH frames */
	GP_COUNTER_TRUNC_READ,		 /* truncated: stack memory unreadable */
	GP_COUNTER_TRUNC_NO_RULE,	 /* truncated: no unwind rule and no frame pointer */
	GP_COUNTER_TRUNC_UNSUPPORTED,	 /* truncated: CFI gp cannot follow */
	GP_COUNTER_TRUNC_BAD_FRAME,	 /* truncated: the CFA did not move up the stack */
	GP_COUNTER_UNWIND_FP_FRAMES,   /* frames taken with a frame pointer (no rule covered the pc)
					*/
	GP_COUNTER_UNWIND_UNKNOWN_END, /* stacks that ended at a zero frame pointer or return
					* address with no CFI to say it is the outermost frame */
	GP_COUNTER_UNWIND_SEARCHES,    /* rules searched in the tables (the others came from the
					* per-CPU rule cache) */
	GP_COUNTER_SHARED_MAP,	       /* samples counted in the shared counts map: their CPU's
					* tally had no room for their key */
	GP_COUNTER_DEFERRED,	       /* samples whose user stack was copied to `stack_copies`
					* (no tables yet): user space unwinds and counts them */
	GP_COUNTER_DEFERRED_BYTES,     /* the stack bytes those copies hold */
	GP_COUNTER_DEFERRED_FALLBACK,  /* samples before tables walked with frame pointers: over
					* the copies' budget, or `stack_copies` full */
	GP_COUNTER_UNWIND_PENDING,     /* table walks that met a file mapping with no table loaded
					* yet (mapped since the process's mappings were read, or its
					* table still being built): copied, else cut there, truncated */
	GP_COUNTER_TRUNC_REGISTER,     /* truncated: a CFA based on a register other than rsp and
					* rbp in a caller's frame (only the sampled frame's are known) */
	GP_COUNTER_NO_USER_SPACE,      /* samples in the kernel whose task no longer has the address
					* space of its user registers (do_exit past exit_mm, an exec
					* past its point of no return): no user stack, none cut */
	GP_COUNTER_MAX,
};

/* The records of `unwind_events`: a pid whose mappings user space reads (its first sample, or a
 * walk that met a file mapping without table), or, with GP_UNWIND_NEWS_EXEC, its exec (the old
 * image's tables no longer apply). One ring keeps them in order: an exec is handled before the
 * first sample of the new image asks for its mappings. Pids are below 2^22. */
#define GP_UNWIND_NEWS_EXEC 0x80000000u

/* The one element of the per-CPU `cpu_state` array. */
struct gp_cpu_state {
	__u32 seen_pid;	       /* the pid this CPU's previous sample found announced... */
	__u32 seen_generation; /* ...in this exec_generation */
	__u64 in_slot;	       /* 1 from before the sampler reads active_slot until it is done with
				* the slot: a drain that reads 0 on every CPU after its flip needs no
				* RCU wait (64 bits: BPF's xchg) */
	__u64 copy_window;     /* bpf_ktime_get_ns when this CPU's current second of stack copies
				* began... */
	__u64 copy_count;      /* ...and the copies sent in it (at most copy_budget) */
	__u64 reread_time;     /* bpf_ktime_get_ns when this CPU last asked user space to read a
				* process's mappings again (a walk met a mapping with no table) */
	__u64 counters[GP_COUNTER_MAX];
};

/* Linear probes of a sample's key in its CPU's part of a slot's tally before it goes to the
 * shared counts map. */
#define GP_TALLY_PROBES 4

/* An entry of a slot's tally: a sample key and its samples on one CPU in one interval. One cache
 * line. */
struct gp_tally {
	struct gp_sample_key key;
	__u64 count;
	__u32 interval; /* the slot's tally_interval when the key was written (0: never) */
	__u32 pad;
};

/*
 * Unwinding without frame pointers (--unwind dwarf|auto): .eh_frame/.debug_frame compiled by user
 * space (libcore/src/unwind) into tables of rows, one table per binary (by build-id), shared by
 * every process that maps it. x86-64 only. The return address is always at CFA - 8 (a rule that
 * puts it elsewhere is GP_UNWIND_UNSUPPORTED).
 */
enum gp_unwind_kind {
	GP_UNWIND_NONE = 0,   /* no CFI covers the address: one frame-pointer step */
	GP_UNWIND_RSP = 1,    /* CFA = rsp + cfa_offset */
	GP_UNWIND_RBP = 2,    /* CFA = rbp + cfa_offset */
	GP_UNWIND_PLT = 3,    /* CFA = rsp + cfa_offset, + 8 when (rip & 15) >= 11 (lazy PLT) */
	GP_UNWIND_SIGNAL = 4, /* sigreturn trampoline: registers from the ucontext at rsp */
	GP_UNWIND_END = 5,    /* return address undefined: the outermost frame */
	GP_UNWIND_UNSUPPORTED = 6, /* CFI gp cannot follow: the stack ends here, truncated */
	GP_UNWIND_PENDING = 7, /* never in a table: the address lies in a file mapping the process's
				* entry does not list (its table is not loaded yet) */
	GP_UNWIND_DEREF_RSP = 8, /* CFA = *(rsp + (__s16)cfa_offset) + 8 * (kind >> 4): a stack
				  * pointer saved on the stack (OpenSSL's realigned frames) */
	GP_UNWIND_DEREF_RBP = 9, /* CFA = *(rbp + (__s16)cfa_offset) + 8 * (kind >> 4) */
	GP_UNWIND_REG = 10,	 /* CFA = the register of DWARF number kind >> 4 + cfa_offset: in
				  * the sampled frame only (elsewhere: GP_COUNTER_TRUNC_REGISTER) */
};
/* A rule's kind: the enum gp_unwind_kind in the low bits; a DEREF rule's addend / 8 or a REG
 * rule's register above. */
#define GP_UNWIND_KIND_MASK 0x0f
#define GP_UNWIND_ADD_SHIFT 4

/* A rule: how to find the caller's frame. Rules are one array shared by every table
 * (`unwind_rules`: each distinct rule once; real binaries have a few hundred). */
struct gp_unwind_rule {
	__u16 cfa_offset; /* bytes (a signed 16-bit number for the DEREF kinds) */
	__u8 kind;	  /* enum gp_unwind_kind, and GP_UNWIND_ADD_SHIFT's addend */
	__s8 rbp_offset;  /* rbp was saved at CFA + 8 * rbp_offset; 0: rbp keeps its value */
};
#define GP_UNWIND_MAX_RULES 65536

/* One row: `rule` holds from `pc` up to the next row's pc. pc is the offset in the row's own 4 KiB
 * page of the table (see gp_unwind_page). */
struct gp_unwind_row {
	__u16 pc;
	__u16 rule; /* index in unwind_rules */
};

/* The element of `unwind_rows`: 16 rows, one cache line (an array map rounds each element up to
 * 8 bytes: rows one per element would take twice their size). Row i is rows[i % 16] of element
 * i / 16. */
#define GP_UNWIND_ROW_BLOCK 16
struct gp_unwind_row_block {
	struct gp_unwind_row rows[GP_UNWIND_ROW_BLOCK];
};

/* Rows are found through a directory of 4 KiB pages of each table's address range. */
#define GP_UNWIND_PAGE_SHIFT 12
struct gp_unwind_page {
	__u32 first_row; /* index (in the table) of the row in force at the page's first byte (it
			  * may start in an earlier page); the rows after it up to count start in
			  * this page */
	__u32 count;	 /* rows from first_row whose pc is below the page's end (0: none) */
};

/* An element of `unwind_tables`: where one table's rows and pages are in the global arrays. */
struct gp_unwind_table {
	__u32 row_base; /* index in `unwind_rows` of the table's first row */
	__u32 row_count;
	__u32 page_base; /* index in `unwind_pages` of the table's first page */
	__u32 page_count;
};

/* The executable mappings of one process that have a table, sorted by start, are a range of the
 * global `unwind_mappings` array; addresses in no listed mapping are unwound with frame pointers.
 */
#define GP_UNWIND_MAX_MAPPINGS 256 /* per process */
struct gp_unwind_mapping {
	__u64 start; /* [start, end) in the process's address space */
	__u64 end;
	__u64 bias;  /* the table's offset of address a is a - bias */
	__u32 table; /* index in `unwind_tables`, or GP_UNWIND_NO_TABLE */
	__u32 pad;
};
/* A mapping user space read but has no table for (no CFI, not an ELF file): frame-pointer steps.
 * A file mapping the entry does not list at all is one whose table is not loaded yet. */
#define GP_UNWIND_NO_TABLE 0xffffffffu

/* A value of `unwind_procs` (by pid): where the process's mappings are in `unwind_mappings`. */
struct gp_unwind_process {
	__u32 first;
	__u32 count;  /* at most GP_UNWIND_MAX_MAPPINGS */
	__u32 serial; /* new at every write of the entry: tells the rule cache's old rows from new
		       */
	__u32 exited; /* set by the exit of the process's main thread: the entry serves only tasks
		       * in do_exit until user space removes it */
};

/* Each CPU's cache of rules already found (`unwind_cache`): the return addresses of a busy thread
 * are the same sample after sample, and a hit costs one cache line where the searches through
 * the mappings, pages and rows cost a dozen. Two-way set-associative: a set is chosen by the
 * 64-byte block of the address looked up and the process's entry, and holds the rows found
 * last and before; with one entry a set, two rows of one block (a call at a function's end and
 * one at the next function's start) evicted each other at every sample. An entry holds the
 * addresses of the row found (within its page and mapping): the leaf of a busy loop moves from
 * instruction to instruction, and every one of them in the row hits. An entry holds for one
 * write of a process's entry: its serial is new at every write of any process's entry, so it
 * names the process too, and new mappings or tables make old rows misses. */
#define GP_UNWIND_CACHE_SHIFT 10 /* sets */
#define GP_UNWIND_CACHE_SETS (1u << GP_UNWIND_CACHE_SHIFT)
#define GP_UNWIND_CACHE_WAYS 2
#define GP_UNWIND_CACHE_ENTRIES (GP_UNWIND_CACHE_SETS * GP_UNWIND_CACHE_WAYS)
#define GP_UNWIND_CACHE_SIZE_SHIFT 48 /* x86-64 and arm64 user addresses are below 2^48 */
#define GP_UNWIND_CACHE_START ((1ULL << GP_UNWIND_CACHE_SIZE_SHIFT) - 1)
struct gp_unwind_cached {
	__u64 start_and_size; /* the row's first address (a return address's call is at pc - 1),
			       * and above GP_UNWIND_CACHE_SIZE_SHIFT its size (0: empty) */
	__u32 serial;	      /* gp_unwind_process.serial when it was found */
	struct gp_unwind_rule rule; /* kind GP_UNWIND_NONE: no row covers the addresses */
};

/* One CPU's rule cache: the element of `unwind_cache` at the CPU's number. */
struct gp_unwind_cache {
	struct gp_unwind_cached entries[GP_UNWIND_CACHE_ENTRIES];
};

/* The state of one table walk (in the per-CPU walk_state): the registers of the frame being
 * unwound, the stack window, the running hashes and how the walk ended. */
struct gp_unwind_regs {
	__u64 pc, sp, bp;
	__u64 window_base; /* walk_state.window holds user memory [base, base + len) */
	__u64 window_len;
	__u64 hash_key, hash_check;
	__u32 first, count; /* the process's mappings */
	__u32 depth;	    /* frames in walk_state.stack so far */
	__u32 end;	    /* enum gp_stack_end once the walk ends */
	__u32 ret_addr;	    /* 1: pc is a return address (its call is at pc - 1) */
	__u32 pid;	    /* the process and its entry's serial: the rule cache's key */
	__u32 serial;
	__u32 pending; /* 1: the walk stopped at a file mapping with no table loaded yet */
	__u32 stop_counter; /* the counter the walk's end counted */
	__u64 row_start, row_end; /* the last row found: its offsets in its table, [start, end) */
};

/* How a user stack ended (struct gp_stack.end). */
enum gp_stack_end {
	GP_STACK_END_UNKNOWN = 0,  /* frame pointers only: the walk cannot tell */
	GP_STACK_END_COMPLETE = 1, /* reached the outermost frame (return address undefined) */
	GP_STACK_END_TRUNCATED =
		2, /* cut: depth limit, unreadable memory, no rule and no frame pointer */
};

/* A stack new in its slot's stack map, as the `new_stacks` ring carries it to user space: its key
 * and slot, the process whose sample stored it (0 for a kernel stack: user space names the
 * Python frames of a user stack while that process lives), then the stack up to its depth. */
struct gp_new_stack {
	__u64 key;
	__u32 slot;
	__u32 pid;
	struct gp_stack stack;
};

/* The one element of the per-CPU `walk_state` array: room too large for the BPF stack. */
struct gp_walk_state {
	struct gp_new_stack user;	     /* the user stack being taken */
	struct gp_new_stack kernel;	     /* the kernel stack being taken */
	__u64 window[GP_STACK_WINDOW_WORDS]; /* user stack memory read at once by the frame walk */
	struct gp_unwind_regs unwind;	     /* the table walk's state */
	/* The unwind_procs entry of this CPU's last table walk, and whether there was one, good
	 * while unwind_generation stays: most samples repeat their CPU's process. */
	struct gp_unwind_process proc;
	__u32 proc_pid;
	__u32 proc_generation;
	__u32 proc_found;
	__u32 proc_pad;
};

/*
 * Deferred unwinding (--unwind dwarf|auto): a sample of a process that has no tables loaded yet
 * (its first samples) is not walked with frame pointers but sends its user registers and the top
 * of its user stack to the `stack_copies` ring, with its sample key (the kernel stack kept in the
 * slot's stack map as usual, the user stack 0). User space unwinds the copy with the process's
 * tables once they are loaded (libcore/src/unwind/stack_walker.cpp: this program's rules) and
 * counts the sample at the drain of its slot. A process with tables is copied too when a pc of its
 * walk lies in a file mapping its entry does not list (a library mapped since its mappings were
 * read, a table still being built): `pending` is then 1, and user space reads its mappings
 * again (asked on `unwind_events`). Copies are bounded: copy_budget a second per CPU,
 * and the ring's size in bytes in flight; past either the sample is walked with frame pointers
 * (GP_COUNTER_DEFERRED_FALLBACK).
 */
#define GP_STACK_COPY_BYTES 16384 /* at most this much stack, from its start up */
#define GP_STACK_COPY_PAGE 4096	  /* read a page at a time: the copy stops at the stack's end */
/* A copy starts below rsp, by the psABI's red zone (128 bytes), where hand-written leaf code keeps
 * the caller's stack pointer and a CFA rule may read it (OpenSSL's sha512 loops: DW_OP_breg7 -8;
 * DW_OP_deref), even when that lies in the page under rsp's (code that realigns rsp to a page); only
 * when that page cannot be read does it start at rsp's page (GP_STACK_COPY_BELOW). */
#define GP_STACK_COPY_RED_ZONE 128
#define GP_STACK_COPY_BELOW(rsp)                                                                  \
	(((rsp) & (GP_STACK_COPY_PAGE - 1)) < GP_STACK_COPY_RED_ZONE ?                            \
		 ((rsp) & (GP_STACK_COPY_PAGE - 1)) :                                             \
		 GP_STACK_COPY_RED_ZONE)
/* x86-64's struct pt_regs (<asm/ptrace.h>): 21 words, r15 first; rip at word 16, rsp at 19. */
#define GP_PT_REGS_WORDS 21
#define GP_PT_REGS_RIP 16
#define GP_PT_REGS_RSP 19
/* The word of struct pt_regs that holds the register of DWARF number n (0-15). */
#define GP_PT_REGS_INDEX(n)                                                                      \
	((n) == 0 ? 10 : (n) == 1 ? 12 : (n) == 2 ? 11 : (n) == 3 ? 5 : (n) == 4 ? 13 :          \
	 (n) == 5 ? 14 : (n) == 6 ? 4 : (n) == 7 ? 19 : (n) == 8 ? 9 : (n) == 9 ? 8 :            \
	 (n) == 10 ? 7 : (n) == 11 ? 6 : (n) == 12 ? 3 : (n) == 13 ? 2 : (n) == 14 ? 1 : 0)
struct gp_stack_copy {
	struct gp_sample_key key; /* user_stack 0, user_error 0 */
	__u16 slot;		  /* the slot the sample belongs to (its drain counts it) */
	__u8 pending;		  /* 1: the process had tables, but not for a pc of the walk */
	__u8 below;		  /* bytes copied below rsp (GP_STACK_COPY_RED_ZONE at most) */
	__u32 size;		  /* bytes of stack copied */
	__u64 rip, rsp, rbp;	  /* the user registers; bytes[0] was at rsp - below */
	__u64 regs[GP_PT_REGS_WORDS]; /* all of them, as x86-64's struct pt_regs lays them out (valid
				       * when their rip and rsp equal rip and rsp above) */
	__u8 bytes[GP_STACK_COPY_BYTES + GP_STACK_COPY_PAGE]; /* room for a page read past the
							       * limit */
};
#define GP_STACK_COPY_HEADER 248 /* offsetof(struct gp_stack_copy, bytes) */
/* The other record of `stack_copies`: an exec of a sampled pid, in order with its copies (the
 * ring keeps the order of its reservations): the copies of pid before it are of its old image,
 * those after it of the new one. */
struct gp_copy_exec {
	__u32 pid;
	__u32 magic; /* GP_COPY_EXEC_MAGIC */
};
#define GP_COPY_EXEC_MAGIC 0x63657865u /* "exec" */
/* With --python-frames, a copy's record may go on after its min(size, GP_STACK_COPY_BYTES) stack
 * bytes with the sample's Python frames: a GP_PY_MARKER entry and the entries it counts, as they
 * follow the native frames of a stack (below). */

/*
 * Python frames (--python-frames): for a CPython process user space names in `python_procs`, the
 * BPF program walks the sampled thread's frame chain after its native stack and appends one
 * entry per Python frame to the user stack, after a marker:
 *   ips[n] = GP_PY_MARKER | flags | count   (n: the native frames; flags: GP_PY_CUT, ...)
 *   ips[n + 1 + i] = GP_PY_FRAME | entry << 62 | offset << 47 | code   (i = 0: the leaf frame)
 * code: the PyCodeObject's address (user addresses are below 2^47); offset: the instruction's
 * offset in code units (2 bytes), GP_PY_OFFSET_UNKNOWN when unknown or too large; entry: the
 * frame is the outermost one its evaluation loop call (_PyEval_EvalFrameDefault) runs. Code
 * objects are named by user space (libcore/src/record/python_stacks.cpp).
 */
#define GP_PY_MARKER 0xfffe000000000000ULL
#define GP_PY_MARKER_MASK 0xffff000000000000ULL
#define GP_PY_CUT 0x100ULL	 /* the chain went on past the room left or GP_PY_MAX_FRAMES */
#define GP_PY_READ_FAILED 0x200ULL /* a frame could not be read: the chain stops there */
#define GP_PY_FRAME (1ULL << 63)
#define GP_PY_ENTRY (1ULL << 62)
#define GP_PY_OFFSET_SHIFT 47
#define GP_PY_OFFSET_UNKNOWN 0x7fffULL
#define GP_PY_CODE_MASK ((1ULL << GP_PY_OFFSET_SHIFT) - 1)
#define GP_PY_MAX_FRAMES 96  /* frames read per sample at most */
#define GP_PY_MAX_THREADS 64 /* thread states looked through to find the sampled thread's */
#define GP_PY_FRAME_READ 128 /* bytes of a frame read at once: every field gp uses is inside */

enum gp_py_model {
	GP_PY_FRAME_OBJECT = 0, /* 3.8 - 3.10: PyFrameObject chain (f_back), f_lasti */
	GP_PY_INTERPRETER_FRAME = 1, /* 3.11+: _PyInterpreterFrame chain, instruction pointer */
};

/* A value of `python_procs` (by pid): where CPython keeps what the walk reads, in bytes from
 * the start of each struct (from _Py_DebugOffsets or gp's tables: runtime/python/python_layout.h). */
struct gp_python_proc {
	__u64 runtime;	     /* &_PyRuntime in the process */
	__u64 code_tag_mask; /* low bits of a frame's code pointer that are tags (3.14+) */
	__u32 model;	     /* enum gp_py_model */
	__u32 interpreters_head; /* _PyRuntimeState.interpreters.head */
	__u32 threads_head;	 /* PyInterpreterState.threads.head */
	__u32 tstate_next;
	__u32 tstate_thread_id; /* pthread_t: the thread's TLS base on x86-64 */
	__u32 tstate_frame;	/* frame (3.8-3.10), cframe (3.11-3.12), current_frame (3.13+) */
	__u32 cframe_frame;	/* 3.11-3.12: _PyCFrame.current_frame; GP_PY_NONE otherwise */
	__u32 frame_previous;	/* f_back or previous */
	__u32 frame_code;	/* f_code or f_executable */
	__u32 frame_instr;	/* f_lasti (int) or prev_instr / instr_ptr */
	__u32 frame_owner;	/* 3.12+: owner (char); GP_PY_NONE before */
	__u32 frame_is_entry;	/* 3.11: is_entry (char); GP_PY_NONE otherwise */
	__u32 code_adaptive;	/* 3.11+: PyCodeObject.co_code_adaptive */
	__u32 lasti_bytes;	/* 3.8-3.9: f_lasti counts bytes (1), 3.10: code units (0) */
	__u32 owner_shim;	/* owner values from this up are not Python code (entry shims) */
	__u32 frame_read;	/* bytes of a frame that hold those fields (<= GP_PY_FRAME_READ) */
};
#define GP_PY_NONE 0xffffffffu

/* Counters of the per-CPU `python_stats` array (summed by user space). */
enum gp_py_counter {
	GP_PY_SAMPLES = 0, /* samples of processes in python_procs */
	GP_PY_WALKED,	   /* ...that got Python frames */
	GP_PY_NO_THREAD,   /* no thread state of the sampled thread (not a Python thread, or the
			    * list was unreadable or longer than GP_PY_MAX_THREADS) */
	GP_PY_NO_FRAME,	   /* the thread had no current frame */
	GP_PY_NO_ROOM,	   /* the native stack left no room for a frame */
	GP_PY_CUT_CHAINS,  /* chains cut (GP_PY_CUT) */
	GP_PY_READ_ERRORS, /* chains stopped at an unreadable frame (GP_PY_READ_FAILED) */
	GP_PY_COUNTER_MAX,
};

#endif /* GP_PROFILE_H */
