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
/* A stack error: the stack was not requested (-U, -K). Other errors are -errno values. */
#define GP_NO_STACK (-1)
/* Words of user stack memory the frame walk reads with one helper call (a power of two). */
#define GP_STACK_WINDOW_WORDS 128

/* One stack, leaf first, as stored in a slot's stack map under its 64-bit hash. */
struct gp_stack {
	__u32 depth; /* entries of ips in use, 1..GP_MAX_STACK_DEPTH */
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
	GP_EVENT_EXEC = 2,        /* sched_process_exec of an announced pid that passes the filters */
	GP_EVENT_EXIT = 3,        /* sched_process_exit of an announced pid's main thread */
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
	GP_COUNTER_SAMPLES = 0,       /* samples that passed the filters */
	GP_COUNTER_FILTERED,          /* samples dropped by the filters */
	GP_COUNTER_USER_COLLISIONS,   /* user stack lost: another stack had its hash (-EEXIST) */
	GP_COUNTER_KERNEL_COLLISIONS, /* kernel stack lost to a hash collision */
	GP_COUNTER_STACK_ERRORS,      /* other stack failures (e.g. -E2BIG: stack map full) */
	GP_COUNTER_COUNTS_FULL,       /* sample dropped: the counts map was full */
	GP_COUNTER_EVENTS_LOST,       /* ring-buffer reservation failed (event dropped) */
	GP_COUNTER_MAX,
};

/* The one element of the per-CPU `cpu_state` array. */
struct gp_cpu_state {
	__u32 seen_pid;        /* the pid this CPU's previous sample found announced... */
	__u32 seen_generation; /* ...in this exec_generation */
	__u64 in_slot;         /* 1 from before the sampler reads active_slot until it is done with
				* the slot: a drain that reads 0 on every CPU after its flip needs no
				* RCU wait (64 bits: BPF's xchg) */
	__u64 counters[GP_COUNTER_MAX];
};

/* Entries per CPU of each slot's cache of recent sample keys (a power of two). */
#define GP_RECENT_ENTRIES 64

/* An entry of a slot's per-CPU `recent` cache: a key already counted in the slot's counts map,
 * and the samples of it counted here since (added to the map when the entry is reused, or
 * read by the drain). One cache line. */
struct gp_recent {
	struct gp_sample_key key;
	__u64 pending;
	__u32 valid;
	__u32 pad;
};

/* The one element of the per-CPU `walk_state` array: room too large for the BPF stack. */
struct gp_walk_state {
	struct gp_stack stack;               /* the user stack being taken */
	struct gp_stack kernel;              /* the kernel stack being taken */
	__u64 window[GP_STACK_WINDOW_WORDS]; /* user stack memory read at once by the frame walk */
};

#endif /* GP_PROFILE_H */
