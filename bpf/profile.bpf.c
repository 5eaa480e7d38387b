// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gp-record's sampler: runs on a per-CPU perf event (cpu-clock by default), takes the frame-pointer
 * user and kernel stacks of the interrupted thread, and counts samples per
 * (pid, tid, comm, user stack, kernel stack) in a hash map, as libbpf-tools' profile does.
 *
 * Double buffering: there are two slots (A and B), each a counts map plus the stack map its stack
 * ids refer to. `active_slot` picks the slot samples go to. Every flush, user space flips it, then
 * waits for programs still running with the old value (an update of the `rcu_barrier`
 * map-of-maps returns only after synchronize_rcu()), then takes the idle slot's counts out. A
 * sample therefore lands in exactly one drain. The slot's stack maps are kept across drains (a
 * stack id names the same stack until its map is cleared; user space keeps a copy of each) and
 * cleared, while idle, once they fill.
 *
 * Processes are announced on a ring buffer the first time one of their threads is sampled and
 * when they exec, so user space snapshots /proc/PID while the process (even a short-lived one)
 * still exists; the exit of an announced process is announced too, so user space can forget it. Needs no vmlinux.h: only the perf_event context and helpers are used.
 */
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>

#include "profile.h"

/* Configuration, written by user space before load (rodata is frozen afterwards). */
const volatile bool filter_pids = false;   /* only pids in `pid_filter` */
const volatile bool filter_tids = false;   /* only tids in `tid_filter` */
const volatile bool filter_cgroup = false; /* only tasks under the cgroup in `cgroup_filter` */
const volatile bool include_idle = false;  /* keep samples of the idle task (pid 0) */
const volatile bool user_stacks = true;    /* false with --kernel-only */
const volatile bool kernel_stacks = true;  /* false with --user-only */
const volatile bool kernel_only = false;   /* drop samples taken in user mode */

/* The slot samples go to (0 = A, 1 = B); flipped by user space through the mmapped .bss. */
__u32 active_slot = 0;
/* Bumped by every exec and announced exit: a CPU's cached "already announced" pid holds only
 * within a generation. */
__u32 exec_generation = 0;

#define GP_NO_STACK (-1)

struct stack_map {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, GP_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, GP_DEFAULT_STORAGE); /* resized from --stack-storage-size */
};

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct gp_sample_key);
	__type(value, __u64);
	__uint(max_entries, GP_DEFAULT_STORAGE); /* resized from --stack-storage-size */
};

struct stack_map stacks_a SEC(".maps");
struct stack_map stacks_b SEC(".maps");
/* Second chance for stacks that collide in the main map (GP_OVERFLOW_STACK ids). */
struct stack_map overflow_a SEC(".maps");
struct stack_map overflow_b SEC(".maps");
struct counts_map counts_a SEC(".maps");
struct counts_map counts_b SEC(".maps");

/* Only used from user space: updating a map-of-maps waits for running programs (the swap's
 * barrier). */
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
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

static __always_inline struct gp_cpu_state *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

static __always_inline void count(__u32 counter)
{
	struct gp_cpu_state *state = this_cpu();

	if (state && counter < GP_COUNTER_MAX)
		state->counters[counter] += 1; /* per-CPU: no atomics needed */
}

static __always_inline bool wanted(__u32 pid, __u32 tid)
{
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return false;
	if (filter_tids && !bpf_map_lookup_elem(&tid_filter, &tid))
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

static __always_inline void announce(__u32 type, __u32 pid, __u32 tid)
{
	struct gp_event *event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);

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
	bpf_ringbuf_submit(event, 0);
}

/*
 * Announces pid the first time one of its threads is sampled (and again after an exec). Most
 * samples repeat their CPU's previous pid, and a per-CPU array answers those without the LRU
 * hash lookup (which also dirties the element's reference bit).
 */
static __always_inline void note_process(__u32 pid, __u32 tid)
{
	__u32 generation = *(volatile __u32 *)&exec_generation;
	struct gp_cpu_state *state = this_cpu();
	__u8 one = 1;

	if (state && state->seen_pid == pid && state->seen_generation == generation)
		return;
	if (!bpf_map_lookup_elem(&seen_pids, &pid)) {
		bpf_map_update_elem(&seen_pids, &pid, &one, BPF_ANY);
		announce(GP_EVENT_NEW_PROCESS, pid, tid);
	}
	if (state) {
		state->seen_pid = pid;
		state->seen_generation = generation;
	}
}

static __always_inline void note_stack_error(__s32 id, __u32 collision_counter)
{
	if (id == -EEXIST)
		count(collision_counter);
	else if (id < 0 && id != -EFAULT) /* -EFAULT: no stack of that kind (kernel thread, user mode) */
		count(GP_COUNTER_STACK_ERRORS);
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

/* A stack id from the main map, or on a collision from the overflow map (tagged). */
static __always_inline __s32 stack_id(struct bpf_perf_event_data *ctx, void *stacks, void *overflow,
				      __u64 flags)
{
	__s32 id = bpf_get_stackid(ctx, stacks, flags);

	if (id != -EEXIST)
		return id;
	id = bpf_get_stackid(ctx, overflow, flags);
	if (id < 0)
		return id;
	count(GP_COUNTER_OVERFLOW_STACKS);
	return id | GP_OVERFLOW_STACK;
}

/* Takes the stacks into `stacks`/`overflow` and counts the sample in `counts` (all of one slot). */
static __always_inline int record(struct bpf_perf_event_data *ctx, void *stacks, void *overflow,
				  void *counts, __u32 pid, __u32 tid)
{
	struct gp_sample_key key = {};
	__u64 one = 1, *value;

	key.pid = pid;
	key.tid = tid;
	if (!kernel_stacks)
		key.kernel_stack_id = GP_NO_STACK;
	else if (in_user_mode(ctx))
		key.kernel_stack_id = -EFAULT; /* what bpf_get_stackid says for an empty kernel stack */
	else
		key.kernel_stack_id = stack_id(ctx, stacks, overflow, 0);
	if (kernel_only && key.kernel_stack_id == -EFAULT) {
		count(GP_COUNTER_FILTERED); /* the CPU was in user mode */
		return 0;
	}
	key.user_stack_id = user_stacks ? stack_id(ctx, stacks, overflow, BPF_F_USER_STACK) : GP_NO_STACK;
	note_stack_error(key.kernel_stack_id, GP_COUNTER_KERNEL_COLLISIONS);
	note_stack_error(key.user_stack_id, GP_COUNTER_USER_COLLISIONS);
	bpf_get_current_comm(key.comm, sizeof(key.comm));

	value = bpf_map_lookup_elem(counts, &key);
	if (value) {
		__sync_fetch_and_add(value, 1);
	} else if (bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST) != 0) {
		/* -EEXIST: another CPU inserted the key meanwhile; otherwise the map is full */
		value = bpf_map_lookup_elem(counts, &key);
		if (value)
			__sync_fetch_and_add(value, 1);
		else
			count(GP_COUNTER_COUNTS_FULL);
	}
	count(GP_COUNTER_SAMPLES);
	return 0;
}

SEC("perf_event")
int gp_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;

	if ((tid == 0 && !include_idle) || !wanted(pid, tid)) {
		count(GP_COUNTER_FILTERED);
		return 0;
	}
	if (pid != 0)
		note_process(pid, tid);
	/* One copy of record() per slot, so each helper call sees one constant map. */
	if (*(volatile __u32 *)&active_slot)
		return record(ctx, &stacks_b, &overflow_b, &counts_b, pid, tid);
	return record(ctx, &stacks_a, &overflow_a, &counts_a, pid, tid);
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
	 * is news to user space: most execs (shell pipelines, wrapper scripts) are never sampled. */
	bool announced = bpf_map_delete_elem(&seen_pids, &pid) == 0;

	__sync_fetch_and_add(&exec_generation, 1);
	if (announced)
		announce(GP_EVENT_EXEC, pid, tid);
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
	if (bpf_map_delete_elem(&seen_pids, &pid) != 0)
		return 0; /* never announced: nothing to tell */
	__sync_fetch_and_add(&exec_generation, 1); /* a CPU's cache may still hold the pid */
	announce(GP_EVENT_EXIT, pid, tid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
