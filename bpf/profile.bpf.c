// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gp-record's sampler: runs on a per-CPU perf event (cpu-clock by default), takes the frame-pointer
 * user and kernel stacks of the interrupted thread, and counts samples per
 * (pid, tid, comm, user stack, kernel stack) in a hash map, as libbpf-tools' profile does.
 *
 * Stacks are kept in a hash map under a 64-bit hash of their frames (a second hash, the depth and
 * the leaf are compared on a hit, so a hash collision loses the stack instead of mislabelling it).
 * The user stack of a sample taken in user mode on x86-64 is walked here, not by the kernel's
 * bpf_get_stack: its walker has no end-of-chain test and reads the frame at address 0 that ends
 * every frame-pointer chain (the ABI's outermost frame), a page fault that costs more than the
 * rest of the walk (about 650 ns of 1100 on the benchmark's VM).
 *
 * Counting: each CPU has its own part of a slot's `tally` (an array user space reads through
 * mmap), an open-addressed table of the keys it sampled this interval and their counts. A key's
 * samples on a CPU cost one array element there (a cache line), not a jhash of the key and two
 * cold cache lines in a shared hash map; the hash map `counts` takes only the keys for which
 * the tally has no room.
 *
 * Double buffering: there are two slots (A and B), each a tally, a counts map and the stack map
 * their stack keys refer to. `active_slot` picks the slot samples go to. Every flush, user space
 * flips it, then makes sure no program still uses the old value, then takes the idle slot's
 * counts (tally and map) out.
 * A sample therefore lands in exactly one drain. The check is a handshake on each CPU's
 * `in_slot` flag: the program sets it (a fully ordered xchg) before it reads active_slot and
 * clears it when done; user space reads every CPU's flag after its flip (also fenced). A flag
 * read as 0 means that CPU's next sample sees the new slot; a flag read as 1 (a sample in
 * flight, a microsecond window) falls back to waiting for an RCU grace period (an update of
 * the `rcu_barrier` map-of-maps returns only after synchronize_rcu()). The wait put the
 * recorder to sleep and woke it again at every flush, a context switch pair that cost more
 * than the rest of a flush at low frequencies. The slot's stack map is kept across drains (user
 * space keeps a copy of each stack) and cleared, while idle, once it fills.
 *
 * Processes are announced on a ring buffer the first time one of their threads is sampled and
 * when they exec, so user space snapshots /proc/PID while the process (even a short-lived one)
 * still exists; the exit of an announced process is announced too, so user space can forget it.
 * Needs no vmlinux.h: the perf_event context, helpers, and four task_struct fields (CO-RE).
 */
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "profile.h"

/* The fields of the kernel's task_struct that gp_sample reads; CO-RE finds their offsets in the
 * running kernel's BTF at load time. */
struct mm_struct {
	void *binfmt; /* NULL in an exec's new memory map until the new image is mapped */
} __attribute__((preserve_access_index));

struct task_struct {
	struct mm_struct *mm; /* NULL in do_exit past exit_mm (and in kernel threads) */
	unsigned int flags;
	int pid;
	int tgid;
	char comm[GP_TASK_COMM_LEN];
} __attribute__((preserve_access_index));

#define GP_PF_EXITING 0x00000004 /* task_struct.flags: the task is in do_exit */

/* The field of a VMA that says whether a file is mapped there (bpf_find_vma's callback). */
struct vm_area_struct {
	void *vm_file;
} __attribute__((preserve_access_index));

/* Configuration, written by user space before load (rodata is frozen afterwards). */
const volatile bool filter_pids = false;   /* only pids in `pid_filter` */
const volatile bool filter_tids = false;   /* only tids in `tid_filter` */
const volatile bool filter_cgroup = false; /* only tasks under a cgroup in `cgroup_filter` */
const volatile __u32 cgroup_count = 0;	   /* entries of `cgroup_filter` in use */
const volatile bool include_idle = false;  /* keep samples of the idle task (pid 0) */
const volatile bool user_stacks = true;	   /* false with --kernel-only */
const volatile bool kernel_stacks = true;  /* false with --user-only */
const volatile bool kernel_only = false;   /* drop samples taken in user mode */
/* Entries per CPU of a tally, minus one (a power of two minus one); no tally when the kernel has
 * no mmapable arrays (Linux 5.5): every key goes to the counts map. */
const volatile __u32 tally_mask = 0;
const volatile bool tally_on = false;
const volatile bool unwind_tables_on =
	false; /* user stacks unwound with tables (--unwind dwarf|auto) */
/* Stack copies a second per CPU for deferred unwinding (bpf/profile.h: struct gp_stack_copy);
 * 0: none, samples before tables are walked with frame pointers. */
const volatile __u32 copy_budget = 0;
/* Bytes of stack a copy takes at most (--unwind-copy-size; never above GP_STACK_COPY_BYTES). */
const volatile __u32 copy_bytes = GP_STACK_COPY_BYTES;

/* The slot samples go to (0 = A, 1 = B); flipped by user space through the mmapped .bss. */
__u32 active_slot = 0;
/* Per slot, the id of its current interval (never 0, set by user space before the first sample):
 * an entry of the slot's tally holds a key only when it was written in this interval. A drain
 * gives the idle slot a new id: its entries are then empty without writing them. */
__u32 tally_interval[2];
/* Per slot: set when a sample of the slot's interval went to its counts map (with a tally, rare).
 * A drain reads the map only then: reading even an empty hash map walks every bucket. User space
 * clears it while the slot is idle. */
__u32 counts_used[2];
/* Bumped by every exec and announced exit: a CPU's cached "already announced" pid holds only
 * within a generation. */
__u32 exec_generation = 0;
/* Bumped by every write or removal of an unwind_procs entry (user space, exec and exit): a CPU's
 * copy of its last process's entry holds only within a generation. */
__u32 unwind_generation = 0;

struct stack_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64); /* the stack's hash */
	__type(value, struct gp_stack);
	__uint(max_entries, GP_DEFAULT_STORAGE); /* resized from --stack-storage-size */
};

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct gp_sample_key);
	__type(value, __u64);
	__uint(max_entries, GP_DEFAULT_STORAGE); /* resized from --stack-storage-size */
};

/* Per slot: each CPU's keys of this interval and their counts, tally_mask + 1 entries per CPU
 * (CPU n's from n * (tally_mask + 1)), open-addressed by the key's hash. */
struct tally_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* user space reads it in place */
	__uint(max_entries, 1);		   /* resized: possible CPUs * (tally_mask + 1) */
	__type(key, __u32);
	__type(value, struct gp_tally);
};

struct stack_map stacks_a SEC(".maps");
struct stack_map stacks_b SEC(".maps");
struct counts_map counts_a SEC(".maps");
struct counts_map counts_b SEC(".maps");
struct tally_map tally_a SEC(".maps");
struct tally_map tally_b SEC(".maps");

/* Only used from user space: updating a map-of-maps waits for running programs (the swap's
 * barrier when the in_slot handshake cannot tell). */
struct barrier_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} barrier_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct barrier_inner);
} rcu_barrier SEC(".maps") = {
	.values = { [0] = &barrier_inner },
};

/* Per CPU, one element: the counters and the announced-pid cache share its cache lines, so a
 * sample on a cold CPU misses once for both. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_cpu_state);
} cpu_state SEC(".maps");

/* Per CPU: the stack being taken. A CPU runs one perf_event program at a time (bpf_prog_active),
 * so it is never shared. Apart from cpu_state, which user space reads every flush. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_walk_state);
} walk_state SEC(".maps");

/* Announced processes: SEEN_ANNOUNCED, or SEEN_EXECED after an exec (announce again when next
 * sampled). An exec keeps the entry, so the exit of a process that is not sampled after its exec
 * (a shell's fork that execs a short command) is still announced and user space forgets it.
 * SEEN_EXITED once its main thread's exit is announced: the samples of the rest of that exit are
 * not news, a thread living on (or a new process with the pid) is. */
#define SEEN_ANNOUNCED 1
#define SEEN_EXECED 2
#define SEEN_EXITED 3

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} seen_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized to the number of --pid values */
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized to the number of --tid values */
	__type(key, __u32);
	__type(value, __u8);
} tid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, GP_MAX_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

static __always_inline struct gp_cpu_state *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

static __always_inline void count_many(struct gp_cpu_state *state, __u32 counter, __u64 n)
{
	if (state && counter < GP_COUNTER_MAX)
		state->counters[counter] += n; /* per-CPU: no atomics needed */
}

static __always_inline void count_on(struct gp_cpu_state *state, __u32 counter)
{
	count_many(state, counter, 1);
}

static __always_inline void count(__u32 counter)
{
	count_on(this_cpu(), counter);
}

static __always_inline bool wanted(__u32 pid, __u32 tid)
{
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return false;
	if (filter_tids && !bpf_map_lookup_elem(&tid_filter, &tid))
		return false;
	if (filter_cgroup) {
		for (__u32 i = 0; i < GP_MAX_CGROUPS && i < cgroup_count; i++)
			if (bpf_current_task_under_cgroup(&cgroup_filter, i) == 1)
				return true;
		return false;
	}
	return true;
}

/* New processes and execs, for the unwinder's own reader (--unwind): it loads their tables while
 * the recorder's thread may be busy with a flush (bpf/profile.h: GP_UNWIND_NEWS_EXEC). Only pids;
 * a lost one waits for `events`. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1); /* resized: 64 KiB with --unwind */
} unwind_events SEC(".maps");

static __always_inline void unwind_news(__u32 news_value)
{
	__u32 *news = bpf_ringbuf_reserve(&unwind_events, sizeof(*news), 0);

	if (news) {
		*news = news_value;
		bpf_ringbuf_submit(news, BPF_RB_FORCE_WAKEUP);
	}
}

static __always_inline void announce(__u32 type, __u32 pid, __u32 tid)
{
	struct gp_event *event;

	if (unwind_tables_on && type == GP_EVENT_NEW_PROCESS)
		unwind_news(pid);
	event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);

	if (!event) {
		count(GP_COUNTER_EVENTS_LOST);
		return;
	}
	event->type = type;
	event->pid = pid;
	event->tid = tid;
	event->pad = 0;
	event->time_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(event->comm, sizeof(event->comm));
	/* Only a new process is urgent (user space snapshots it while it lives); an exec or an exit
	 * waits for the next wake-up, a flush at the latest. A new process forces its wake-up: the
	 * default wakes the reader only when it has read everything before, which a waiting exit
	 * would prevent. */
	bpf_ringbuf_submit(event,
			   type == GP_EVENT_NEW_PROCESS ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * Announces pid the first time one of its threads is sampled (and again after an exec). Most
 * samples repeat their CPU's previous pid, and the per-CPU state answers those without the LRU
 * hash lookup (which also dirties the element's reference bit).
 */
static __always_inline void note_process(struct gp_cpu_state *state, __u32 pid, __u32 tid)
{
	__u32 generation = *(volatile __u32 *)&exec_generation;
	__u8 announced = SEEN_ANNOUNCED, *seen;

	if (state->seen_pid == pid && state->seen_generation == generation)
		return;
	seen = bpf_map_lookup_elem(&seen_pids, &pid);
	if (!seen) {
		bpf_map_update_elem(&seen_pids, &pid, &announced, BPF_ANY);
		announce(GP_EVENT_NEW_PROCESS, pid, tid);
	} else if (*seen == SEEN_EXITED && (bpf_get_current_task_btf()->flags & GP_PF_EXITING)) {
		/* The rest of an announced exit: announcing it again made user space read /proc of
		 * a dying process (and drain early for it). Not cached: a thread of it that lives
		 * on may run on this CPU next, and is news. */
		return;
	} else if (*seen != SEEN_ANNOUNCED) {
		/* Its first sample since an exec, or since its exit while a thread lives on (or a
		 * new process took the pid). Two CPUs may both get here: user space takes a
		 * repeated announcement as one. */
		*seen = SEEN_ANNOUNCED;
		announce(GP_EVENT_NEW_PROCESS, pid, tid);
	}
	state->seen_pid = pid;
	state->seen_generation = generation;
}

/*
 * True when the interrupted CPU was in user mode: its kernel stack is empty, so the walk is
 * skipped (it costs about as much as a short user stack on a VM). Unknown architectures walk.
 */
static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return (ctx->regs.cs & 3) != 0;
#elif defined(__TARGET_ARCH_arm64)
	return (ctx->regs.pstate & 0xf) == 0; /* EL0 */
#else
	return false;
#endif
}

/* True when this program walks the user stack itself: a sample in 64-bit user mode on x86-64
 * (__USER_CS; 32-bit code has other frames and the kernel's walker knows them). arm64's kernel
 * walker already stops at a zero frame pointer. */
static __always_inline bool own_user_walk(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return ctx->regs.cs == 0x33;
#else
	return false;
#endif
}

/* Two running hashes of a stack's frames: the map key, and a check stored with the stack. */
struct stack_hash {
	__u64 key;
	__u64 check;
};

static __always_inline void hash_start(struct stack_hash *h)
{
	h->key = 0x2545f4914f6cdd1dULL;
	h->check = 0x61c8864680b583ebULL;
}

static __always_inline void hash_frame(struct stack_hash *h, __u64 ip)
{
	h->key ^= ip;
	h->key *= 0x9e3779b97f4a7c15ULL;
	h->key ^= h->key >> 29;
	h->check = (h->check + ip) * 0xff51afd7ed558ccdULL;
}

/* Ends the hashes with the depth; returns the key (never 0: 0 means "no stack") and stores the
 * check and depth in `st`. */
static __always_inline __u64 hash_end(struct stack_hash *h, struct gp_stack *st, __u32 depth)
{
	hash_frame(h, depth);
	st->depth = depth;
	st->check = (__u32)(h->check >> 32);
	return h->key ? h->key : 1;
}

#include "python_walk.h"

/* The state of a frame walk between steps (bpf_loop's context). */
struct walk_ctx {
	struct gp_walk_state *walk;
	__u64 fp;   /* the next frame record */
	__u64 base; /* walk->window holds user memory [base, base + len) */
	__u64 len;
	struct stack_hash h;
	__u32 depth;
	__u32 chain_end; /* the walk stopped at the zero frame pointer or return address that ends
			  * a chain, after at least one frame record */
};

/*
 * Step `index` of walk_user_frames: the frame record at c->fp gives frame index + 1. Returns 1 to
 * end the walk. The frame's slot comes from `index`, not from a counter in `c`: the verifier
 * then sees every step alike and checks the callback once, not once per possible depth.
 */
static long walk_step(__u32 index, void *data)
{
	const __u64 mask = GP_STACK_WINDOW_WORDS - 1;
	struct walk_ctx *c = data;
	struct gp_walk_state *walk = c->walk;
	__u64 fp = c->fp, off = fp - c->base, len, ret;
	__u32 slot = index + 1;

	if (fp == 0) {
		c->chain_end = slot > 1;
		return 1;
	}
	if (fp < 4096 || (fp & 7) != 0 || slot >= GP_MAX_STACK_DEPTH)
		return 1;
	if (fp < c->base || off + 16 > c->len) {
		len = 4096 - (fp & 4095); /* to the end of the frame's page... */
		if (len > sizeof(walk->window))
			len = sizeof(walk->window); /* ...or the window's size */
		if (len < 16)
			len = 16; /* a frame record across two pages */
		if (bpf_probe_read_user(walk->window, len, (const void *)fp) != 0)
			return 1;
		c->base = fp;
		c->len = len;
		off = 0;
	}
	off >>= 3;
	ret = walk->window[(off + 1) & mask];
	if (ret == 0) {
		c->chain_end = slot > 1;
		return 1;
	}
	/* slot < GP_MAX_STACK_DEPTH (checked above); the mask shows the verifier a bound whatever
	 * register clang checked, and barrier_var keeps clang from dropping it. */
	barrier_var(slot);
	walk->user.stack.ips[slot & 127] = ret;
	c->depth = slot + 1;
	hash_frame(&c->h, ret);
	c->fp = walk->window[off & mask];
	return 0;
}

/*
 * Walks the frame-pointer chain from user registers ip and fp into walk->user.stack, as the
 * kernel's perf_callchain_user does (the leaf ip, then the return address of each frame record
 * {next frame, return address}), with two differences:
 * - it stops at a frame pointer in the first page (0 ends every chain) instead of faulting on it;
 * - it reads stack memory a window at a time (from the frame to the end of its page, up to the
 *   window's size), not 16 bytes per frame: nearby frames cost no helper call. Reading within
 *   one page faults no more often than reading the frame itself.
 * With `mark_end` (unwinding with tables, none loaded yet for the process) a chain that does not
 * end at a zero frame pointer or return address after one frame record at least is marked
 * truncated: code without frame pointers leaves rbp at 0 or at anything, and its first sample
 * would otherwise show a frame or two of it as a whole stack. Returns the stack's hash.
 */
static __always_inline __u64 walk_user_frames(struct gp_walk_state *walk, __u64 ip, __u64 fp,
					      const bool mark_end)
{
	struct walk_ctx c = { .walk = walk, .fp = fp, .depth = 1 };

	walk->user.stack.end = GP_STACK_END_UNKNOWN;
	hash_start(&c.h);
	walk->user.stack.ips[0] = ip;
	hash_frame(&c.h, walk->user.stack.ips[0]);
	bpf_loop(GP_MAX_STACK_DEPTH - 1, walk_step, &c, 0);
	if (mark_end && !c.chain_end) {
		walk->user.stack.end = GP_STACK_END_TRUNCATED;
		hash_frame(&c.h, GP_STACK_END_TRUNCATED);
	}
	return hash_end(&c.h, &walk->user.stack, c.depth);
}

/*
 * Unwinding with tables (--unwind dwarf|auto): see the gp_unwind_* types in profile.h. User space
 * fills the arrays (rows and pages of every loaded table, where each table starts, and each
 * process's mapped tables) and names a process's mappings in `unwind_procs` once they are in
 * place.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		   /* resized from --unwind-memory */
	__uint(map_flags, BPF_F_MMAPABLE); /* user space copies tables in through mmap */
	__type(key, __u32);
	__type(value, struct gp_unwind_row_block);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		   /* resized from --unwind-memory */
	__uint(map_flags, BPF_F_MMAPABLE); /* user space copies tables in through mmap */
	__type(key, __u32);
	__type(value, struct gp_unwind_page);
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized with --unwind */
	__type(key, __u32);
	__type(value, struct gp_unwind_rule);
} unwind_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized: one element per table */
	__type(key, __u32);
	__type(value, struct gp_unwind_table);
} unwind_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized: every process's mapped tables */
	__type(key, __u32);
	__type(value, struct gp_unwind_mapping);
} unwind_mappings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized with --unwind */
	__type(key, __u32);	/* pid */
	__type(value, struct gp_unwind_process);
} unwind_procs SEC(".maps");

/* Each CPU's rule cache (struct gp_unwind_cache), at the CPU's number: one lookup a call, and
 * an entry is then an address computed from the pc. A per-CPU array of entries costs a load of
 * the entry's address first, at every frame. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized to the possible CPUs with --unwind */
	__type(key, __u32);
	__type(value, struct gp_unwind_cache);
} unwind_cache SEC(".maps");

/* Offsets in the signal frame on x86-64: at a sigreturn trampoline's rsp is the ucontext, whose
 * mcontext (struct sigcontext) starts 40 bytes in. */
#define GP_SIGCONTEXT_RBP (40 + 10 * 8)
#define GP_SIGCONTEXT_RSP (40 + 15 * 8)
#define GP_SIGCONTEXT_RIP (40 + 16 * 8)

/*
 * The walk is four global (not static) functions: the verifier checks each once, on its own,
 * with its arguments unknown. Inlined into bpf_loop's callback, their branches and bounded
 * searches made the verifier's states multiply past its limit (it re-checks a callback until its
 * states converge).
 */

/* The index in unwind_mappings of the mapping in [first, first + count) that holds pc (binary
 * search over the sorted range), or -1. */
__attribute__((noinline)) long gp_find_mapping(__u32 first, __u32 count, __u64 pc)
{
	struct gp_unwind_mapping *m;
	__u32 lo = 0, hi = count, mid, i, index;

	if (hi > GP_UNWIND_MAX_MAPPINGS)
		hi = GP_UNWIND_MAX_MAPPINGS;
	/* Invariant: the mapping, if any, is in [lo, hi). 2^9 > GP_UNWIND_MAX_MAPPINGS. */
	for (i = 0; i < 9 && lo + 1 < hi; i++) {
		mid = (lo + hi) / 2;
		index = first + mid;
		m = bpf_map_lookup_elem(&unwind_mappings, &index);
		if (!m)
			return -1;
		if (m->start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (lo >= hi)
		return -1;
	index = first + lo;
	m = bpf_map_lookup_elem(&unwind_mappings, &index);
	return m && pc >= m->start && pc < m->end ? (long)index : -1;
}

/* The index in unwind_rules of the rule in force at offset rel of a table, or -1 when no row
 * covers it (a frame-pointer step). The offsets the row holds in rel's page go to this CPU's
 * walk state (row_start, row_end): the rule cache keeps them. */
__attribute__((noinline)) long gp_find_row(__u32 table_id, __u64 rel)
{
	__u32 zero = 0;
	struct gp_walk_state *w = bpf_map_lookup_elem(&walk_state, &zero);
	struct gp_unwind_table *table = bpf_map_lookup_elem(&unwind_tables, &table_id);
	struct gp_unwind_page *page;
	struct gp_unwind_row_block *block;
	__u32 index, first, lo = 0, hi, mid, i, rule, start, end = 1u << GP_UNWIND_PAGE_SHIFT,
			    in_page = (__u32)rel & ((1u << GP_UNWIND_PAGE_SHIFT) - 1);

	if (!w || !table || (rel >> GP_UNWIND_PAGE_SHIFT) >= table->page_count)
		return -1;
	index = table->page_base + (__u32)(rel >> GP_UNWIND_PAGE_SHIFT);
	page = bpf_map_lookup_elem(&unwind_pages, &index);
	if (!page || page->count == 0)
		return -1;
	first = table->row_base + page->first_row;
	hi = page->count;
	/* Invariant: the answer is in [lo, hi): row 0 is in force at the page's start, and the rows
	 * after it start in the page (mid >= 1 is never row 0). A page holds at most 4097 rows (one
	 * per byte, and the one in force at its start): 13 halvings. */
	for (i = 0; i < 13 && lo + 1 < hi; i++) {
		mid = (lo + hi) / 2;
		index = (first + mid) / GP_UNWIND_ROW_BLOCK;
		block = bpf_map_lookup_elem(&unwind_rows, &index);
		if (!block)
			return -1;
		if (block->rows[(first + mid) % GP_UNWIND_ROW_BLOCK].pc <= in_page)
			lo = mid;
		else
			hi = mid;
	}
	index = (first + lo) / GP_UNWIND_ROW_BLOCK;
	block = bpf_map_lookup_elem(&unwind_rows, &index);
	if (!block)
		return -1;
	rule = block->rows[(first + lo) % GP_UNWIND_ROW_BLOCK].rule;
	/* Row 0 is in force from the page's start; a row holds up to the next row's start or the
	 * page's end. */
	start = lo == 0 ? 0 : block->rows[(first + lo) % GP_UNWIND_ROW_BLOCK].pc;
	if (lo + 1 < page->count) {
		index = (first + lo + 1) / GP_UNWIND_ROW_BLOCK;
		block = bpf_map_lookup_elem(&unwind_rows, &index);
		end = block ? block->rows[(first + lo + 1) % GP_UNWIND_ROW_BLOCK].pc : in_page + 1;
	}
	w->unwind.row_start = rel - in_page + start;
	w->unwind.row_end = rel - in_page + end;
	return rule;
}

/* The rule in force at pc in the process's tables, and the addresses [*start, *end) that hold it
 * too (its row, within pc's page of the table and pc's mapping); NULL when none covers it, with
 * *listed false when no mapping of the process's entry holds pc either. */
static __always_inline struct gp_unwind_rule *find_rule(struct gp_walk_state *w, __u64 pc,
							__u64 *start, __u64 *end, bool *listed)
{
	struct gp_unwind_regs *u = &w->unwind;
	struct gp_unwind_mapping *m;
	long index = gp_find_mapping(u->first, u->count, pc);
	__u32 key;

	*listed = index >= 0;
	if (index < 0)
		return NULL;
	key = (__u32)index;
	m = bpf_map_lookup_elem(&unwind_mappings, &key);
	if (!m || pc < m->bias)
		return NULL;
	index = gp_find_row(m->table, pc - m->bias);
	if (index < 0)
		return NULL;
	*start = u->row_start + m->bias;
	*end = u->row_end + m->bias;
	if (*start < m->start)
		*start = m->start;
	if (*end > m->end)
		*end = m->end;
	key = (__u32)index;
	return bpf_map_lookup_elem(&unwind_rules, &key);
}

static long vma_has_file(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	*(__u32 *)data = vma->vm_file != NULL;
	return 0;
}

/* 1 when pc lies in a file mapping of the current process (or its memory map is busy: assumed
 * so), 0 in anonymous memory (JIT code) or none. */
__attribute__((noinline)) long gp_file_mapped(__u64 pc)
{
	__u32 file = 0;
	long err = bpf_find_vma(bpf_get_current_task_btf(), pc, vma_has_file, &file, 0);

	return err == -EBUSY || (err == 0 && file);
}

/* Whether the sampled task's memory map lacks pc (no memory map at all, or no mapping there; a
 * busy map is taken as holding it). */
__attribute__((noinline)) long gp_pc_unmapped(__u64 pc)
{
	__u32 file = 0;

	return bpf_find_vma(bpf_get_current_task_btf(), pc, vma_has_file, &file, 0) == -ENOENT;
}

/* This CPU's rule cache. */
static __always_inline struct gp_unwind_cache *this_cpu_cache(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&unwind_cache, &cpu);
}

/* The set of the cache for pc's 64-byte block in the process's entry of this serial: its two
 * entries, the one stored last first. */
static __always_inline struct gp_unwind_cached *cache_set(struct gp_unwind_cache *cache, __u64 pc,
							  __u32 serial)
{
	__u64 h = ((pc >> 6) ^ ((__u64)serial << 40)) * 0x9e3779b97f4a7c15ULL;
	__u32 set = (__u32)(h >> (64 - GP_UNWIND_CACHE_SHIFT)) & (GP_UNWIND_CACHE_SETS - 1);

	return &cache->entries[set * GP_UNWIND_CACHE_WAYS];
}

/* Whether the cache entry holds the rule of pc for the process's entry of this serial. */
static __always_inline bool cache_holds(const struct gp_unwind_cached *cached, __u64 pc,
					__u32 serial)
{
	return cached->serial == serial && pc - (cached->start_and_size & GP_UNWIND_CACHE_START) <
						   cached->start_and_size >>
						   GP_UNWIND_CACHE_SIZE_SHIFT;
}

/* The entry of the set that holds the rule of pc, or NULL. */
static __always_inline struct gp_unwind_cached *cache_find(struct gp_unwind_cached *set, __u64 pc,
							   __u32 serial)
{
	if (cache_holds(&set[0], pc, serial))
		return &set[0];
	if (cache_holds(&set[1], pc, serial))
		return &set[1];
	return NULL;
}

/* The rule in force at pc (kind GP_UNWIND_NONE when no table covers it): from this CPU's rule
 * cache when an entry of the set of pc's 64-byte block holds a row that covers pc for this
 * process's current entry, else searched and cached. Kind GP_UNWIND_PENDING (never cached) when
 * pc lies in a file mapping the entry does not list: its table is not loaded yet. */
static __always_inline void rule_at(struct gp_walk_state *w, struct gp_cpu_state *state, __u64 pc,
				    struct gp_unwind_rule *rule)
{
	struct gp_unwind_regs *u = &w->unwind;
	struct gp_unwind_cache *cache = this_cpu_cache();
	struct gp_unwind_cached *set = cache ? cache_set(cache, pc, u->serial) : NULL, *cached;
	struct gp_unwind_rule *found;
	__u64 start = pc, end = pc + 1;
	bool listed;

	if (set) {
		cached = cache_find(set, pc, u->serial);
		if (cached) {
			*rule = cached->rule;
			return;
		}
	}
	count_on(state, GP_COUNTER_UNWIND_SEARCHES);
	found = find_rule(w, pc, &start, &end, &listed);
	if (found) {
		*rule = *found;
	} else if (!listed && gp_file_mapped(pc)) {
		rule->kind = GP_UNWIND_PENDING;
		return;
	} else {
		rule->kind = GP_UNWIND_NONE;
		rule->cfa_offset = 0;
		rule->rbp_offset = 0;
	}
	/* A row is at most a page, around pc; anything else (a corrupt page) caches pc alone. A
	 * user address fits below the size's bits. */
	if (start > pc || end <= pc || end - start > (1u << GP_UNWIND_PAGE_SHIFT))
		start = pc, end = pc + 1;
	/* The set's other entry keeps the row found before: two rows of one block (a call near a
	 * function's end and the next function's call) would otherwise evict each other at every
	 * sample. */
	if (set && end <= GP_UNWIND_CACHE_START) {
		set[1] = set[0];
		set[0].start_and_size = start | (end - start) << GP_UNWIND_CACHE_SIZE_SHIFT;
		set[0].serial = u->serial;
		set[0].rule = *rule;
	}
}

/* One word of user memory at addr, through the window: a miss reads from addr to the end of its
 * page (at most the window). False when it cannot be read. */
static __always_inline bool read_word(struct gp_walk_state *w, __u64 addr, __u64 *out)
{
	const __u64 mask = GP_STACK_WINDOW_WORDS - 1;
	struct gp_unwind_regs *u = &w->unwind;
	__u64 off = addr - u->window_base, len;

	if ((addr & 7) != 0)
		return bpf_probe_read_user(out, 8, (const void *)addr) == 0;
	if (addr < u->window_base || off + 8 > u->window_len) {
		len = 4096 - (addr & 4095);
		if (len > sizeof(w->window))
			len = sizeof(w->window);
		if (bpf_probe_read_user(w->window, len, (const void *)addr) != 0)
			return false;
		u->window_base = addr;
		u->window_len = len;
		off = 0;
	}
	*out = w->window[(off >> 3) & mask];
	return true;
}

/* Ends the walk: how, and the counter that says so. */
static __always_inline long unwind_stop(struct gp_unwind_regs *u, struct gp_cpu_state *state,
					__u32 end, __u32 counter)
{
	u->end = end;
	u->stop_counter = counter;
	count_on(state, counter);
	return 1;
}

/* The caller's return address and rbp (*next_bp, bp when the frame did not save it) once a
 * frame's CFA is known. False, with the counter of the truncation, when the CFA is not above sp
 * or a word cannot be read. */
static __always_inline bool caller_at_cfa(struct gp_walk_state *w, struct gp_unwind_rule rule,
					  __u64 sp, __u64 bp, __u64 cfa, __u64 *ra, __u64 *next_bp,
					  __u32 *truncation)
{
	/* A caller's frame is above its callee's: anything else is a corrupt stack or table. */
	if (cfa <= sp || (cfa & 7) != 0) {
		*truncation = GP_COUNTER_TRUNC_BAD_FRAME;
		return false;
	}
	/* The lower address first: the window then covers the return address too. */
	*next_bp = bp;
	if ((rule.rbp_offset != 0 && !read_word(w, cfa + (__s64)rule.rbp_offset * 8, next_bp)) ||
	    !read_word(w, cfa - 8, ra)) {
		*truncation = GP_COUNTER_TRUNC_READ;
		return false;
	}
	return true;
}

/* The caller of a frame whose rule is a CFA at rsp or rbp plus an offset (or a PLT entry's):
 * its CFA, return address and rbp (*next_bp, bp when the frame did not save it). False, with the
 * counter of the truncation, when the rule is not one of those, the CFA is not above sp, or a
 * word cannot be read. */
static __always_inline bool frame_by_cfa(struct gp_walk_state *w, struct gp_unwind_rule rule,
					 __u64 pc, __u64 sp, __u64 bp, __u64 *cfa, __u64 *ra,
					 __u64 *next_bp, __u32 *truncation)
{
	__u8 base = rule.kind & GP_UNWIND_KIND_MASK;

	if (rule.kind == GP_UNWIND_RBP)
		*cfa = bp + rule.cfa_offset;
	else if (rule.kind == GP_UNWIND_RSP)
		*cfa = sp + rule.cfa_offset;
	else if (rule.kind == GP_UNWIND_PLT)
		*cfa = sp + rule.cfa_offset + ((pc & 15) >= 11 ? 8 : 0);
	else if (base == GP_UNWIND_DEREF_RSP || base == GP_UNWIND_DEREF_RBP) {
		/* A stack pointer saved on the stack, plus the addend. */
		if (!read_word(w, (base == GP_UNWIND_DEREF_RSP ? sp : bp) + (__s16)rule.cfa_offset,
			       cfa)) {
			*truncation = GP_COUNTER_TRUNC_READ;
			return false;
		}
		*cfa += (__u64)(rule.kind >> GP_UNWIND_ADD_SHIFT) * 8;
	} else {
		*truncation = base == GP_UNWIND_REG ? GP_COUNTER_TRUNC_REGISTER :
						      GP_COUNTER_TRUNC_UNSUPPORTED;
		return false;
	}
	return caller_at_cfa(w, rule, sp, bp, *cfa, ra, next_bp, truncation);
}

/* The CFA of the sampled frame by a rule based on another register (GP_UNWIND_REG): that register
 * as the kernel saved it at its entry (the sample's user registers, when their rip and rsp are
 * the walk's first pc and sp), plus the offset. False when they cannot be read or are not the
 * sample's. */
static __always_inline bool leaf_cfa_by_register(struct gp_unwind_rule rule, __u64 pc, __u64 sp,
						 __u64 *cfa)
{
	const __u64 *regs = (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u32 n = (rule.kind >> GP_UNWIND_ADD_SHIFT) & 15;
	__u64 ip = 0, stack = 0, value = 0;

	if (bpf_probe_read_kernel(&ip, 8, &regs[GP_PT_REGS_RIP]) != 0 ||
	    bpf_probe_read_kernel(&stack, 8, &regs[GP_PT_REGS_RSP]) != 0 || ip != pc || stack != sp ||
	    bpf_probe_read_kernel(&value, 8, &regs[GP_PT_REGS_INDEX(n)]) != 0)
		return false;
	*cfa = value + rule.cfa_offset;
	return true;
}

/* The caller of the sampled frame whose rule is GP_UNWIND_REG, as frame_by_cfa. */
static __always_inline bool leaf_frame_by_register(struct gp_walk_state *w,
						   struct gp_unwind_rule rule, __u64 pc, __u64 sp,
						   __u64 bp, __u64 *cfa, __u64 *ra, __u64 *next_bp,
						   __u32 *truncation)
{
	if (!leaf_cfa_by_register(rule, pc, sp, cfa)) {
		*truncation = GP_COUNTER_TRUNC_REGISTER;
		return false;
	}
	return caller_at_cfa(w, rule, sp, bp, *cfa, ra, next_bp, truncation);
}

/*
 * One step of the walk: from the frame of u->pc to its caller, stored as frame `slot`. The rule
 * comes from the table of the mapping that holds the pc (the call's address, pc - 1, for a
 * return address); a pc no table covers takes a frame-pointer step (JIT code, a binary without
 * CFI). Returns 1 when the walk ends (u->end says how), else 0.
 */
__attribute__((noinline)) long gp_unwind_step(__u32 slot)
{
	__u32 zero = 0;
	struct gp_walk_state *w = bpf_map_lookup_elem(&walk_state, &zero);
	struct gp_cpu_state *state = bpf_map_lookup_elem(&cpu_state, &zero);
	struct gp_unwind_regs *u;
	struct gp_unwind_rule rule;
	struct stack_hash h;
	__u64 cfa = 0, ra = 0, bp, sp, pc;
	__u32 truncation;
	__u8 kind;

	if (!w || !state)
		return 1;
	u = &w->unwind;
	if (slot >= GP_MAX_STACK_DEPTH)
		return unwind_stop(u, state, GP_STACK_END_TRUNCATED, GP_COUNTER_TRUNC_DEPTH);
	pc = u->pc;
	sp = u->sp;
	bp = u->bp;
	rule_at(w, state, pc - (u->ret_addr ? 1 : 0), &rule);
	kind = rule.kind;
	if (kind == GP_UNWIND_END)
		return unwind_stop(u, state, GP_STACK_END_COMPLETE, GP_COUNTER_UNWIND_COMPLETE);
	if (kind == GP_UNWIND_PENDING) {
		u->pending = 1; /* the frames so far, truncated, unless the stack is copied */
		return unwind_stop(u, state, GP_STACK_END_TRUNCATED, GP_COUNTER_UNWIND_PENDING);
	}
	if (kind == GP_UNWIND_SIGNAL) {
		/* The interrupted code's registers, saved by the kernel in the signal frame; its pc
		 * is where it was interrupted, not a return address. */
		if (!read_word(w, sp + GP_SIGCONTEXT_RBP, &bp) ||
		    !read_word(w, sp + GP_SIGCONTEXT_RSP, &cfa) ||
		    !read_word(w, sp + GP_SIGCONTEXT_RIP, &ra))
			return unwind_stop(u, state, GP_STACK_END_TRUNCATED, GP_COUNTER_TRUNC_READ);
		u->ret_addr = 0;
	} else if (kind == GP_UNWIND_NONE) {
		/* A frame-pointer step: {saved rbp, return address} at rbp. */
		count_on(state, GP_COUNTER_UNWIND_FP_FRAMES);
		if (bp == 0) /* the ABI's outermost frame, but no CFI says so */
			return unwind_stop(u, state, GP_STACK_END_UNKNOWN,
					   GP_COUNTER_UNWIND_UNKNOWN_END);
		if (bp < sp || (bp & 7) != 0)
			return unwind_stop(u, state, GP_STACK_END_TRUNCATED,
					   GP_COUNTER_TRUNC_NO_RULE);
		cfa = bp + 16;
		if (!read_word(w, bp, &bp) || !read_word(w, cfa - 8, &ra))
			return unwind_stop(u, state, GP_STACK_END_TRUNCATED, GP_COUNTER_TRUNC_READ);
		u->ret_addr = 1;
	} else if ((kind & GP_UNWIND_KIND_MASK) == GP_UNWIND_REG && slot == 1 && !u->ret_addr) {
		/* The sampled frame: its registers are the sample's. */
		if (!leaf_frame_by_register(w, rule, pc, sp, bp, &cfa, &ra, &bp, &truncation))
			return unwind_stop(u, state, GP_STACK_END_TRUNCATED, truncation);
		u->ret_addr = 1;
	} else {
		if (!frame_by_cfa(w, rule, pc, sp, bp, &cfa, &ra, &bp, &truncation))
			return unwind_stop(u, state, GP_STACK_END_TRUNCATED, truncation);
		u->ret_addr = 1;
	}
	if (ra == 0) /* no caller, but no CFI said this was the outermost frame */
		return unwind_stop(u, state, GP_STACK_END_UNKNOWN, GP_COUNTER_UNWIND_UNKNOWN_END);
	u->pc = ra;
	u->sp = cfa;
	u->bp = bp;
	/* slot < GP_MAX_STACK_DEPTH (checked above); the mask shows the verifier a bound, and
	 * barrier_var keeps clang from dropping it. */
	barrier_var(slot);
	w->user.stack.ips[slot & 127] = ra;
	u->depth = slot + 1;
	h.key = u->hash_key;
	h.check = u->hash_check;
	hash_frame(&h, ra);
	u->hash_key = h.key;
	u->hash_check = h.check;
	return 0;
}

/*
 * The walk's common case, up to GP_UNWIND_FAST_FRAMES frames a call with the registers in
 * registers: the rule cache holds the frame's rule, and it is a CFA at rsp or rbp plus an offset
 * (or a PLT entry's). It stops at the first frame that is anything else (a rule to search for,
 * the outermost frame, a signal frame, no table, memory it cannot read), for gp_unwind_step,
 * which takes every case and counts how the walk ends. Returns the frames taken.
 */
#define GP_UNWIND_FAST_FRAMES 8
__attribute__((noinline)) long gp_unwind_fast(void)
{
	__u32 zero = 0, i, slot;
	struct gp_walk_state *w = bpf_map_lookup_elem(&walk_state, &zero);
	struct gp_unwind_cache *cache = this_cpu_cache();
	struct gp_unwind_cached *cached;
	struct gp_unwind_regs *u;
	struct stack_hash h;
	__u64 pc, sp, bp, next_bp, cfa, ra, look, serial;
	__u32 truncation;

	if (!w || !cache)
		return 0;
	u = &w->unwind;
	pc = u->pc;
	sp = u->sp;
	bp = u->bp;
	serial = u->serial;
	slot = u->depth;
	look = pc - (u->ret_addr ? 1 : 0);
	h.key = u->hash_key;
	h.check = u->hash_check;
	for (i = 0; i < GP_UNWIND_FAST_FRAMES && slot < GP_MAX_STACK_DEPTH; i++) {
		cached = cache_find(cache_set(cache, look, serial), look, serial);
		if (!cached)
			break;
		/* A frame that would end the walk is gp_unwind_step's, from the registers as
		 * they were. */
		if (!frame_by_cfa(w, cached->rule, pc, sp, bp, &cfa, &ra, &next_bp, &truncation) ||
		    ra == 0)
			break;
		bp = next_bp;
		pc = ra;
		sp = cfa;
		look = ra - 1;
		barrier_var(slot);
		w->user.stack.ips[slot & 127] = ra;
		hash_frame(&h, ra);
		slot++;
	}
	if (i == 0)
		return 0;
	u->pc = pc;
	u->sp = sp;
	u->bp = bp;
	u->ret_addr = 1;
	u->depth = slot;
	u->hash_key = h.key;
	u->hash_check = h.check;
	return i;
}

/* One turn of the walk: the fast path's frames, then gp_unwind_step's frame unless the fast path
 * took all it can take in a call. Every turn takes a frame or ends the walk, so
 * GP_MAX_STACK_DEPTH turns reach the depth limit. */
static long unwind_loop_step(__u32 index, void *data)
{
	__u32 zero = 0;
	struct gp_walk_state *w;

	if (gp_unwind_fast() == GP_UNWIND_FAST_FRAMES)
		return 0;
	w = bpf_map_lookup_elem(&walk_state, &zero);
	if (!w)
		return 1;
	return gp_unwind_step(w->unwind.depth) != 0; /* bpf_loop takes 0 or 1 */
}

/* The user registers of the interrupted thread: the sample's own in user mode, else those the
 * kernel saved at its entry (a system call, a fault), from the task's pt_regs. False when there
 * are none (a kernel thread) or they are not 64-bit user mode. */
static __always_inline bool user_registers(struct bpf_perf_event_data *ctx, __u64 *pc, __u64 *sp,
					   __u64 *bp)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs regs;
	__u64 ip, stack, frame;

	if (in_user_mode(ctx)) {
		if (ctx->regs.cs != 0x33)
			return false;
		ip = ctx->regs.rip;
		stack = ctx->regs.rsp;
		frame = ctx->regs.rbp;
		/* Loaded here: clang would otherwise merge these loads with the other path's into
		 * one through a pointer, and the verifier refuses a context load through a moved
		 * pointer. */
		barrier_var(ip);
		barrier_var(stack);
		barrier_var(frame);
	} else {
		if (bpf_probe_read_kernel(&regs, sizeof(regs),
					  (void *)bpf_task_pt_regs(bpf_get_current_task_btf())) !=
			    0 ||
		    regs.cs != 0x33)
			return false;
		ip = regs.rip;
		stack = regs.rsp;
		frame = regs.rbp;
	}
	*pc = ip;
	*sp = stack;
	*bp = frame;
	return true;
#else
	return false;
#endif
}

/*
 * Unwinds the user stack with the process's tables into walk->user.stack (leaf first) and returns
 * its hash, or 0 when it cannot: no tables loaded for the process yet (*no_tables: counted, and the
 * caller walks with frame pointers), or no user registers (*error = -EFAULT). A walk that meets a
 * file mapping with no table loaded yet ends there, truncated, with walk->unwind.pending set. In
 * both cases walk->unwind holds the sample's registers, for a stack copy.
 */
static __always_inline __u64 unwind_user_frames(struct bpf_perf_event_data *ctx,
						struct gp_cpu_state *state,
						struct gp_walk_state *walk, __u32 pid, __s32 *error,
						bool *no_tables)
{
	__u32 generation = *(volatile __u32 *)&unwind_generation;
	struct gp_unwind_regs *u = &walk->unwind;
	struct gp_unwind_process *proc = &walk->proc, *entry;
	struct stack_hash h;
	__u64 pc, sp, bp;

	if (!user_registers(ctx, &pc, &sp, &bp)) {
		*error = -EFAULT;
		return 0;
	}
	/* The hash lookup (a cold bucket and element) only when this CPU's copy is not the pid's
	 * entry as of this generation. */
	if (walk->proc_pid != pid || walk->proc_generation != generation) {
		entry = bpf_map_lookup_elem(&unwind_procs, &pid);
		walk->proc_pid = pid;
		walk->proc_generation = generation;
		walk->proc_found = entry != NULL;
		if (entry)
			*proc = *entry;
	}
	/* An exited process's entry serves its own last samples (in do_exit), not a new process
	 * that took its pid before user space forgot it. */
	if (!walk->proc_found ||
	    (proc->exited && !(bpf_get_current_task_btf()->flags & GP_PF_EXITING))) {
		count_on(state, GP_COUNTER_UNWIND_BEFORE_TABLES);
		*no_tables = true;
		u->pending = 0;
		u->pc = pc; /* for a stack copy */
		u->sp = sp;
		u->bp = bp;
		return 0;
	}
	hash_start(&h);
	hash_frame(&h, pc);
	walk->user.stack.ips[0] = pc;
	u->pc = pc;
	u->sp = sp;
	u->bp = bp;
	u->window_base = 0;
	u->window_len = 0;
	u->hash_key = h.key;
	u->hash_check = h.check;
	u->first = proc->first;
	u->count = proc->count;
	u->pid = pid;
	u->serial = proc->serial;
	u->depth = 1;
	u->end = GP_STACK_END_TRUNCATED;
	u->ret_addr = 0;
	u->pending = 0;
	u->stop_counter = GP_COUNTER_MAX; /* none (count_many ignores it) until the walk ends */
	bpf_loop(GP_MAX_STACK_DEPTH, unwind_loop_step, NULL, 0);
	if (u->pending) {
		u->pc = pc;
		u->sp = sp;
		u->bp = bp;
	}
	h.key = u->hash_key;
	h.check = u->hash_check;
	walk->user.stack.end = u->end;
	hash_frame(&h, u->end);
	return hash_end(&h, &walk->user.stack, u->depth);
}

/* The state of hash_step (bpf_loop's context). */
struct hash_ctx {
	struct gp_stack *st;
	struct stack_hash h;
};

static long hash_step(__u32 index, void *data)
{
	struct hash_ctx *c = data;

	if (index >= GP_MAX_STACK_DEPTH)
		return 1;
	hash_frame(&c->h, c->st->ips[index]);
	return 0;
}

/*
 * Takes a stack with the kernel's walker (bpf_get_stack) into `st`. Returns its hash, or 0 when
 * there is none (*error set). With `loops` (bpf_loop, Linux 5.17) the hash covers the stack's
 * frames; without, it covers every slot of `st` (bpf_get_stack zeroes the unused ones): a
 * bounded loop that stops at the depth costs the verifier seconds, one without an exit that
 * depends on the data costs it a pass per slot.
 */
static __always_inline __u64 take_stack(struct bpf_perf_event_data *ctx, struct gp_stack *st,
					__u64 flags, __s32 *error, const bool loops)
{
	long bytes = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);
	struct hash_ctx c = { .st = st };
	__u32 n, i;

	if (bytes <= 0) {
		*error = bytes < 0 ? (__s32)bytes : -EFAULT; /* 0 bytes: no stack of that kind */
		return 0;
	}
	n = (__u32)bytes / sizeof(__u64);
	hash_start(&c.h);
	if (loops) {
		bpf_loop(n, hash_step, &c, 0);
	} else {
		/* Up to the depth in whole chunks of 16 slots (bpf_get_stack zeroes the slots after
		 * the stack): a short stack costs a short loop, and the verifier sees 8 exits, not
		 * 127. */
#pragma clang loop unroll(disable)
		for (i = 0; i < GP_MAX_STACK_DEPTH; i++) {
			if ((i & 15) == 0 && i >= n)
				break;
			hash_frame(&c.h, st->ips[i]);
		}
	}
	return hash_end(&c.h, st, n);
}

/* Stacks new in a stack map, for user space's copies: read from here, a new stack costs the
 * drain no system call (one lost when the ring is full is read from the map instead). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} new_stacks SEC(".maps");

/*
 * Stores `n`'s stack under `hash` in the stack map of slot `slot` unless it is there already,
 * and sends a stack it stored to user space. Returns the key (never 0), or 0 with *error set:
 * -EEXIST when another stack has the hash (counted in `collision_counter`), the map's error when
 * it is full.
 */
static __always_inline __u64 keep_stack(struct gp_cpu_state *state, void *stacks, __u32 slot,
					struct gp_new_stack *n, __u64 hash, __s32 *error,
					__u32 collision_counter, __u32 pid)
{
	struct gp_stack *st = &n->stack, *kept = bpf_map_lookup_elem(stacks, &hash);
	__u64 size;
	long err;

	if (kept) {
		if (kept->check == st->check && kept->depth == st->depth &&
		    kept->ips[0] == st->ips[0])
			return hash;
		count_on(state, collision_counter);
		*error = -EEXIST;
		return 0;
	}
	err = bpf_map_update_elem(stacks, &hash, st, BPF_NOEXIST);
	if (err == 0) {
		n->key = hash;
		n->slot = slot;
		n->pid = pid;
		/* Up to its depth (at most GP_MAX_STACK_DEPTH: the mask shows the verifier). */
		size = sizeof(*n) - sizeof(st->ips) + (__u64)(st->depth & 127) * sizeof(st->ips[0]);
		bpf_ringbuf_output(&new_stacks, n, size, BPF_RB_NO_WAKEUP);
		return hash;
	}
	if (err == -EEXIST) /* another CPU stored it meanwhile, and sends it */
		return hash;
	count_on(state, GP_COUNTER_STACK_ERRORS);
	*error = (__s32)err;
	return 0;
}

static __always_inline bool same_key(const struct gp_sample_key *a, const struct gp_sample_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	_Static_assert(sizeof(struct gp_sample_key) == 6 * sizeof(__u64),
		       "the key is compared as six words");
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4] &&
	       x[5] == y[5];
}

/* Stack copies for deferred unwinding, to user space. Resized by user space (--unwind): its
 * size bounds the copies' bytes in flight. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} stack_copies SEC(".maps");

/* Per CPU: the stack copy being taken. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_stack_copy);
} copy_state SEC(".maps");

/* Whether this CPU may send another stack copy in its current second (and counts it). */
static __always_inline bool copy_allowed(struct gp_cpu_state *state)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - state->copy_window >= 1000000000ULL) {
		state->copy_window = now;
		state->copy_count = 0;
	}
	if (state->copy_count >= copy_budget)
		return false;
	state->copy_count++;
	return true;
}

/* Where a stack copy starts: the red zone below sp, in the page under sp's too when that can be
 * read, else from sp's page (bpf/profile.h: GP_STACK_COPY_RED_ZONE). */
static __always_inline __u64 copy_start(__u64 sp)
{
	__u64 start = sp - GP_STACK_COPY_RED_ZONE, word;

	if ((start ^ sp) & ~(__u64)(GP_STACK_COPY_PAGE - 1)) {
		if (bpf_probe_read_user(&word, sizeof(word), (const void *)start) != 0)
			return sp - GP_STACK_COPY_BELOW(sp);
	}
	return start;
}

/* The user registers (in walk->unwind, from unwind_user_frames) and the stack above rsp, a page
 * at a time up to GP_STACK_COPY_BYTES or the first page that cannot be read, into this CPU's
 * copy_state; NULL when copies are off, over budget, or rsp's page cannot be read. */
static __always_inline struct gp_stack_copy *copy_user_stack(struct gp_cpu_state *state,
							     struct gp_walk_state *walk)
{
	__u32 zero = 0, off = 0, len, i;
	struct gp_stack_copy *c;
	__u64 sp = walk->unwind.sp, start;

	if (copy_budget == 0)
		return NULL;
	c = bpf_map_lookup_elem(&copy_state, &zero);
	if (!c || !copy_allowed(state))
		return NULL;
	start = copy_start(sp);
	for (i = 0; i < GP_STACK_COPY_BYTES / GP_STACK_COPY_PAGE + 1; i++) {
		if (off >= GP_STACK_COPY_BYTES || off >= copy_bytes)
			break;
		len = GP_STACK_COPY_PAGE - ((start + off) & (GP_STACK_COPY_PAGE - 1));
		if (bpf_probe_read_user(&c->bytes[off], len, (const void *)(start + off)) != 0)
			break;
		off += len;
	}
	if (off == 0)
		return NULL;
	c->size = off > copy_bytes ? copy_bytes : off;
	c->below = (__u8)(sp - start);
	c->rip = walk->unwind.pc;
	c->rsp = sp;
	c->rbp = walk->unwind.bp;
	/* Every user register, for a CFA rule based on another register in the sampled frame: the
	 * ones the kernel saved at its entry, which are the sample's (user space checks rip and
	 * rsp). */
	if (bpf_probe_read_kernel(c->regs, sizeof(c->regs),
				  (void *)bpf_task_pt_regs(bpf_get_current_task_btf())) != 0)
		c->regs[GP_PT_REGS_RIP] = 0;
	return c;
}

/* Sends a stack copy with its sample's key (the kernel stack kept in the slot's stack map first,
 * as a counted sample's). False when the ring has no room. */
static __always_inline bool send_copy(struct gp_cpu_state *state, struct gp_stack_copy *c,
				      struct gp_walk_state *walk, struct gp_sample_key *key,
				      void *stacks, __u32 slot)
{
	__u64 n = c->size;

	if (key->kernel_stack)
		key->kernel_stack =
			keep_stack(state, stacks, slot, &walk->kernel, key->kernel_stack,
				   &key->kernel_error, GP_COUNTER_KERNEL_COLLISIONS, 0);
	__builtin_memcpy(&c->key, key, sizeof(*key));
	c->key.user_stack = 0; /* a walk cut at a mapping without table: the copy replaces it */
	c->slot = slot;
	c->pending = walk->unwind.pending;
	if (n > GP_STACK_COPY_BYTES)
		n = GP_STACK_COPY_BYTES;
	/* The sample's Python frames after the bytes (python_walk.h). */
	if (bpf_ringbuf_output(&stack_copies, c,
			       GP_STACK_COPY_HEADER + n + python_copy_tail(walk, key, c->bytes + n),
			       0) != 0)
		return false;
	count_on(state, GP_COUNTER_DEFERRED);
	count_many(state, GP_COUNTER_DEFERRED_BYTES, n);
	return true;
}

/* Tells user space, in order with pid's stack copies, that pid exec'd (bpf/profile.h: struct
 * gp_copy_exec): its copies so far are of the old image. */
static __always_inline void exec_marker(__u32 pid)
{
	struct gp_copy_exec marker = { .pid = pid, .magic = GP_COPY_EXEC_MAGIC };

	bpf_ringbuf_output(&stack_copies, &marker, sizeof(marker), 0);
}

/* Asks user space to read pid's mappings again (a walk met a file mapping its entry does not
 * list), at most once in GP_REREAD_NS per CPU: its next load brings the mapping's table. */
#define GP_REREAD_NS 5000000ULL
static __always_inline void ask_reread(struct gp_cpu_state *state, __u32 pid)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - state->reread_time < GP_REREAD_NS)
		return;
	state->reread_time = now;
	unwind_news(pid);
}

/* Whether a sample taken in the kernel holds user registers (pc, sp) of an address space its task
 * no longer has: in do_exit past exit_mm (no memory map: its stack is gone), or in an exec past its
 * point of no return (the old image's registers in the new image's memory map: one without a
 * binary format until the new image is mapped, and after it one that maps neither the stack at sp
 * nor pc). Such a sample has no user stack, as a kernel thread's, rather than a cut one. Asked only
 * of walks that failed at their first frame: it may cost a read and a VMA lookup. */
static __always_inline bool user_space_gone(struct bpf_perf_event_data *ctx, __u64 pc, __u64 sp)
{
	struct mm_struct *mm;
	__u64 word;

	if (in_user_mode(ctx))
		return false;
	mm = bpf_get_current_task_btf()->mm;
	if (!mm || !mm->binfmt)
		return true;
	if (bpf_probe_read_user(&word, sizeof(word), (const void *)sp) == 0)
		return false;
	return gp_pc_unmapped(pc);
}

/* The user stack into walk->user.stack: unwound with tables when the process has them (--unwind),
 * else copied for deferred unwinding (*copy), else walked with frame pointers, by this program in
 * user mode or else by the kernel. Returns its hash, or 0 with key->user_error set (or *copy). */
static __always_inline __u64 user_stack(struct bpf_perf_event_data *ctx, struct gp_cpu_state *state,
					struct gp_walk_state *walk, struct gp_sample_key *key,
					const bool loops, struct gp_stack_copy **copy)
{
	bool no_tables = false;
	__u64 hash;

	if (loops && unwind_tables_on) {
		hash = unwind_user_frames(ctx, state, walk, key->pid, &key->user_error, &no_tables);
		if (!no_tables && !walk->unwind.pending) {
			if (hash && walk->unwind.depth == 1 &&
			    walk->unwind.end == GP_STACK_END_TRUNCATED &&
			    user_space_gone(ctx, walk->unwind.pc, walk->unwind.sp)) {
				/* Not a truncated stack after all: its count goes back. */
				count_many(state, walk->unwind.stop_counter, (__u64)-1);
				goto no_user_space;
			}
			return hash;
		}
		if (walk->unwind.pending)
			ask_reread(state, key->pid);
		*copy = copy_user_stack(state, walk);
		if (*copy)
			return hash; /* the cut walk, kept in case the ring has no room */
		if (no_tables && key->user_error == 0 &&
		    user_space_gone(ctx, walk->unwind.pc, walk->unwind.sp))
			goto no_user_space;
		count_on(state, GP_COUNTER_DEFERRED_FALLBACK);
		if (!no_tables)
			return hash;
	}
	if (loops && in_user_mode(ctx) && own_user_walk(ctx))
		return walk_user_frames(walk, PT_REGS_IP(&ctx->regs), PT_REGS_FP(&ctx->regs),
					no_tables);
	/* Before its tables, a sample in a system call or fault is walked here too, from the user
	 * registers the kernel saved: the kernel's walker could not tell a chain that ended from
	 * one that broke off. */
	if (no_tables) {
		__u64 pc, sp, bp;

		if (user_registers(ctx, &pc, &sp, &bp))
			return walk_user_frames(walk, pc, bp, true);
	}
	walk->user.stack.end = GP_STACK_END_UNKNOWN;
	return take_stack(ctx, &walk->user.stack, BPF_F_USER_STACK, &key->user_error, loops);
no_user_space:
	count_on(state, GP_COUNTER_NO_USER_SPACE);
	key->user_error = GP_NO_STACK;
	return 0;
}

/* The entry of this CPU's part of the slot's tally that counts `key` in this interval: the one
 * that holds it (*claim false), else the first free one of its probes (*claim true: the key's
 * first sample here), else NULL (no room: the counts map takes it). */
static __always_inline struct gp_tally *tally_entry(void *tally, __u32 interval,
						    const struct gp_sample_key *key, bool *claim)
{
	__u64 h = (key->user_stack ^ key->kernel_stack ^ ((__u64)key->tid << 32 | key->pid)) *
		  0x9e3779b97f4a7c15ULL;
	__u32 base = bpf_get_smp_processor_id() * (tally_mask + 1), slot = (__u32)(h >> 32), i,
	      index;
	struct gp_tally *entry;

	if (!tally_on)
		return NULL;
#pragma unroll
	for (i = 0; i < GP_TALLY_PROBES; i++) {
		index = base + ((slot + i) & tally_mask);
		entry = bpf_map_lookup_elem(tally, &index);
		if (!entry)
			return NULL;
		if (entry->interval != interval) {
			*claim = true;
			return entry;
		}
		if (same_key(&entry->key, key))
			return entry;
	}
	return NULL;
}

/* Takes the stacks and counts the sample: in its key's entry of this CPU's part of the tally
 * when the key is there or finds room, else in `counts`. A key's first sample in an entry or in
 * the counts map also stores its stacks in `stacks` (all three maps are one slot's); the key's
 * later samples name stacks already stored and skip the stack map (a cold hash lookup, about
 * 300 ns at 99 Hz), so a stack that another stack's 64-bit hash would hide is not compared again.
 * `loops`: the kernel has bpf_loop, and user stacks of samples in user mode are walked here. */
static __always_inline int record(struct bpf_perf_event_data *ctx, struct gp_cpu_state *state,
				  __u32 slot, void *stacks, void *counts, void *tally,
				  __u32 interval, struct gp_sample_key *key, const bool loops)
{
	bool user_mode = in_user_mode(ctx), claim = false;
	__u64 one = 1, *value = NULL;
	struct gp_stack_copy *copy = NULL;
	struct gp_walk_state *walk;
	struct gp_tally *entry;
	__u32 zero = 0;

	walk = bpf_map_lookup_elem(&walk_state, &zero);
	if (!walk)
		return 0;

	if (!kernel_stacks)
		key->kernel_error = GP_NO_STACK;
	else if (user_mode)
		key->kernel_error =
			-EFAULT; /* an empty kernel stack, as bpf_get_stack reports it */
	else
		key->kernel_stack =
			take_stack(ctx, &walk->kernel.stack, 0, &key->kernel_error, loops);
	if (kernel_only && key->kernel_error == -EFAULT) {
		count_on(state, GP_COUNTER_FILTERED); /* the CPU was in user mode */
		return 0;
	}
	if (!user_stacks)
		key->user_error = GP_NO_STACK;
	else
		key->user_stack = user_stack(ctx, state, walk, key, loops, &copy);
	if (loops && key->user_stack) /* Python frames after the native ones (python_walk.h) */
		key->user_stack = python_frames(key->pid, key->tid, key->user_stack);
	else if (loops && copy) { /* before any native frame: for the copy alone */
		walk->user.stack.depth = 0;
		python_frames(key->pid, key->tid, 0);
	}

	count_on(state, GP_COUNTER_SAMPLES);
	if (copy) {
		if (send_copy(state, copy, walk, key, stacks, slot))
			return 0; /* counted by user space, with its unwound stack */
		/* No room in the ring: frame pointers, as without copies (or the walk cut at a
		 * mapping without table, truncated). */
		count_on(state, GP_COUNTER_DEFERRED_FALLBACK);
		if (!key->user_stack)
			key->user_stack = walk_user_frames(walk, copy->rip, copy->rbp, true);
	}
	entry = tally_entry(tally, interval, key, &claim);
	if (entry && !claim) {
		/* This CPU's entry: the drain reads it only while the slot is idle. */
		entry->count += 1;
		return 0;
	}
	if (!entry) {
		count_on(state, GP_COUNTER_SHARED_MAP);
		/* Read first: without a tally every sample comes here, and a store each would move
		 * the line from CPU to CPU. */
		if (!*(volatile __u32 *)&counts_used[slot & 1])
			*(volatile __u32 *)&counts_used[slot & 1] = 1;
		value = bpf_map_lookup_elem(counts, key);
	}
	if (!entry && value) {
		__sync_fetch_and_add(value, 1);
		return 0;
	}
	/* The key's first sample in this entry or in the map: keep its stacks (a collision or a
	 * full stack map changes the key). */
	if (key->kernel_stack)
		key->kernel_stack =
			keep_stack(state, stacks, slot, &walk->kernel, key->kernel_stack,
				   &key->kernel_error, GP_COUNTER_KERNEL_COLLISIONS, 0);
	if (key->user_stack)
		key->user_stack =
			keep_stack(state, stacks, slot, &walk->user, key->user_stack,
				   &key->user_error, GP_COUNTER_USER_COLLISIONS, key->pid);
	if (entry) {
		__builtin_memcpy(&entry->key, key, sizeof(*key));
		entry->count = 1;
		entry->interval = interval;
		return 0;
	}
	/* Inserted with its count, or -EEXIST (another CPU inserted the key meanwhile: add to it),
	 * or the map is full. */
	if (bpf_map_update_elem(counts, key, &one, BPF_NOEXIST) == 0)
		return 0;
	value = bpf_map_lookup_elem(counts, key);
	if (value)
		__sync_fetch_and_add(value, 1);
	else
		count_on(state, GP_COUNTER_COUNTS_FULL);
	return 0;
}

/*
 * The interrupted thread's ids and name into `key`. With `btf` they are loaded from its
 * task_struct (field offsets from the kernel's BTF, CO-RE): on a cold CPU that is cheaper than
 * the two helper calls (bpf_get_current_comm alone cost about 250 ns at 99 Hz here). Without,
 * the helpers (bpf_get_current_task_btf needs Linux 5.11).
 */
static __always_inline void current_thread(struct gp_sample_key *key, const bool btf)
{
	if (btf) {
		struct task_struct *task = bpf_get_current_task_btf();

		key->pid = task->tgid;
		key->tid = task->pid;
		__builtin_memcpy(key->comm, task->comm, sizeof(key->comm));
	} else {
		__u64 id = bpf_get_current_pid_tgid();

		key->pid = id >> 32;
		key->tid = (__u32)id;
		bpf_get_current_comm(key->comm, sizeof(key->comm));
	}
}

/* Filters, announces and records one sample. */
static __always_inline int sample(struct bpf_perf_event_data *ctx, const bool loops)
{
	struct gp_cpu_state *state = this_cpu();
	struct gp_sample_key key = {};

	if (!state)
		return 0;
	current_thread(&key, loops);
	if ((key.tid == 0 && !include_idle) || !wanted(key.pid, key.tid)) {
		count_on(state, GP_COUNTER_FILTERED);
		return 0;
	}
	if (key.pid != 0)
		note_process(state, key.pid, key.tid);
	/* The flag is visible before active_slot is read (xchg is fully ordered), so a drain that
	 * reads it as 0 knows this sample goes to the new slot. Only with `loops`: xchg needs
	 * Linux 5.12, and the program for older kernels leaves user space to wait for RCU. */
	if (loops)
		__sync_lock_test_and_set(&state->in_slot, 1);
	/* One copy of record() per slot, so each helper call sees one constant map. */
	if (*(volatile __u32 *)&active_slot)
		record(ctx, state, 1, &stacks_b, &counts_b, &tally_b,
		       *(volatile __u32 *)&tally_interval[1], &key, loops);
	else
		record(ctx, state, 0, &stacks_a, &counts_a, &tally_a,
		       *(volatile __u32 *)&tally_interval[0], &key, loops);
	if (loops)
		__sync_lock_test_and_set(&state->in_slot, 0);
	return 0;
}

/* The sampler on Linux 5.17 and later: gp's own user stack walk (bpf_loop). */
SEC("perf_event")
int gp_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

/* The sampler without bpf_loop (older kernels, or --stack-walker kernel): the kernel walks every
 * stack. User space loads one of the two. */
SEC("perf_event")
int gp_sample_kernel_walk(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, false);
}

/* A raw tracepoint: attaching needs no tracefs mount. */
SEC("raw_tp/sched_process_exec")
int gp_exec(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;

	if (!wanted(pid, tid))
		return 0;
	/* The next sample announces the process again, once the new image has loaded its libraries;
	 * the new generation makes every CPU look the pid up again. Only a process announced before
	 * is news to user space: most execs (shell pipelines, wrapper scripts) are never sampled.
	 */
	__u8 *seen = bpf_map_lookup_elem(&seen_pids, &pid);

	if (seen && *seen == SEEN_EXITED) /* exit announced: what execs now is news when sampled */
		seen = NULL;
	__sync_fetch_and_add(&exec_generation, 1);
	/* The old image's tables no longer apply: frame pointers until user space loads the new. */
	if (unwind_tables_on) {
		bool had_tables = bpf_map_delete_elem(&unwind_procs, &pid) == 0;

		if (had_tables)
			__sync_fetch_and_add(&unwind_generation, 1);
		/* User space drops them in order with the announcements: a load asked for before
		 * the exec (the old image's mappings) cannot replace the new image's, and a load of
		 * the new image's, asked for by its first sample, comes after. The recorder's
		 * thread learns of the exec (`events`) later, at its next wake-up. */
		if (had_tables || seen)
			unwind_news(pid | GP_UNWIND_NEWS_EXEC);
		if (seen && copy_budget > 0)
			exec_marker(pid);
	}
	if (seen) {
		*seen = SEEN_EXECED;
		announce(GP_EVENT_EXEC, pid, tid);
	}
	return 0;
}

/* The exit of an announced process's main thread: user space forgets the process once its last
 * samples are drained, and a new process that reuses the pid is announced afresh. */
SEC("raw_tp/sched_process_exit")
int gp_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;

	if (pid != tid || pid == 0) /* another thread: the process lives on */
		return 0;
	if (unwind_tables_on) {
		/* Kept for the samples of its exit (user space removes it when it forgets the
		 * process): flagged, so that another process with the pid does not use it. */
		struct gp_unwind_process *proc = bpf_map_lookup_elem(&unwind_procs, &pid);

		if (proc) {
			proc->exited = 1;
			__sync_fetch_and_add(&unwind_generation, 1);
		}
	}
	__u8 *seen = bpf_map_lookup_elem(&seen_pids, &pid);

	if (!seen || *seen == SEEN_EXITED)
		return 0; /* never announced (or the pid's last owner was): nothing to tell */
	*seen = SEEN_EXITED;
	__sync_fetch_and_add(&exec_generation, 1); /* a CPU's cache may still hold the pid */
	announce(GP_EVENT_EXIT, pid, tid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
