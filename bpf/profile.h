/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI between bpf/profile.bpf.c and gp-record (tools/gp-record/sampler_bpf.cpp): map keys,
 * ring-buffer events and counter slots. Plain C with fixed-width types and explicit padding;
 * user space static_asserts every size. Change both sides together.
 */
#ifndef GP_PROFILE_H
#define GP_PROFILE_H

#define GP_MAX_STACK_DEPTH 127 /* the kernel's PERF_MAX_STACK_DEPTH default */
#define GP_TASK_COMM_LEN 16
#define GP_DEFAULT_STORAGE 16384
/* Stack ids with this bit set index the slot's overflow stack map: a stack whose hash bucket in
 * the main map holds another stack (-EEXIST) gets a second chance there, so collisions lose
 * about p^2 of the stacks instead of p. Map ids stay below max_entries, far below this bit. */
#define GP_OVERFLOW_STACK (1 << 30)

/* One aggregation slot: samples of one thread with one (user, kernel) stack pair. Stack ids
 * index the stack map of the same slot (A or B); a negative id is the -errno of
 * bpf_get_stackid (-EFAULT: no stack of that kind, -EEXIST: collision) or -1 when the stack
 * was not requested (-U, -K). */
struct gp_sample_key {
	__u32 pid;  /* tgid */
	__u32 tid;
	__s32 user_stack_id;
	__s32 kernel_stack_id;
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
	GP_COUNTER_SAMPLES = 0,         /* samples that passed the filters */
	GP_COUNTER_FILTERED,            /* samples dropped by the filters */
	GP_COUNTER_USER_COLLISIONS,     /* user stack lost to a stack-map hash collision (-EEXIST) */
	GP_COUNTER_KERNEL_COLLISIONS,   /* kernel stack lost to a collision */
	GP_COUNTER_STACK_ERRORS,        /* other bpf_get_stackid failures (e.g. -ENOMEM: map full) */
	GP_COUNTER_COUNTS_FULL,         /* sample dropped: the counts map was full */
	GP_COUNTER_EVENTS_LOST,         /* ring-buffer reservation failed (event dropped) */
	GP_COUNTER_OVERFLOW_STACKS,     /* stacks kept in the overflow map after a collision */
	GP_COUNTER_MAX,
};

/* The one element of the per-CPU `cpu_state` array. */
struct gp_cpu_state {
	__u32 seen_pid;        /* the pid this CPU's previous sample found announced... */
	__u32 seen_generation; /* ...in this exec_generation */
	__u64 counters[GP_COUNTER_MAX];
};

#endif /* GP_PROFILE_H */
