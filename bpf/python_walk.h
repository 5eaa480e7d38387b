/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames in native stacks (--python-frames; the format is in profile.h, at GP_PY_MARKER).
 * Included by profile.bpf.c after its stack hashes; python_frames() is its one entry point,
 * called once a sample's native user stack is in walk->user.stack.
 *
 * The sampled thread's PyThreadState is the one whose thread_id (pthread_self(), the thread's TLS
 * base on x86-64 with glibc and musl) is the task's fs base: found by walking the main
 * interpreter's thread list once, then remembered per tid and checked at every sample. Its
 * frame chain is walked leaf first, read through the walk's window (py_frame_bytes), and bounded
 * (GP_PY_MAX_FRAMES and the room the native stack left), so a chain that loops or changes under
 * the walk ends and is marked cut. Nothing read here is trusted by user space: it names a code
 * object only after checking its type (a torn chain shows as the native stack alone).
 */
#ifndef GP_PYTHON_WALK_H
#define GP_PYTHON_WALK_H

#include <bpf/bpf_core_read.h>

/* Set by user space before load (--python-frames). */
const volatile bool python_frames_on = false;

/* Processes whose Python frames are walked: user space writes an entry once it has read the
 * interpreter's version and offsets, and removes it when the process execs or exits. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized with --python-frames */
	__type(key, __u32);
	__type(value, struct gp_python_proc);
} python_procs SEC(".maps");

/* The PyThreadState last found for a tid (checked against the thread's fs base before use). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* resized with --python-frames */
	__type(key, __u32);
	__type(value, __u64);
} python_threads SEC(".maps");

struct gp_py_stats {
	__u64 counters[GP_PY_COUNTER_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_py_stats);
} python_stats SEC(".maps");

/* Where this CPU's last sample put its Python frames in walk->user.stack (the marker's index
 * and the entries from it on; len 0: none): a stack copy carries them (python_copy_tail). */
struct gp_py_tail {
	__u32 pid, tid;
	__u32 start, len;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_py_tail);
} python_tail SEC(".maps");

static __always_inline void py_count(__u32 counter)
{
	__u32 zero = 0;
	struct gp_py_stats *s = bpf_map_lookup_elem(&python_stats, &zero);

	if (s && counter < GP_PY_COUNTER_MAX)
		s->counters[counter] += 1;
}

/* CO-RE: only the field read here; the ___gp suffix names the kernel's own structs. */
struct thread_struct___gp {
	unsigned long fsbase;
} __attribute__((preserve_access_index));

struct task_struct___gp {
	struct thread_struct___gp thread;
} __attribute__((preserve_access_index));

/* The current thread's TLS base, which glibc and musl return as pthread_self(); 0 elsewhere. */
static __always_inline __u64 py_thread_pointer(void)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct___gp *task = (struct task_struct___gp *)bpf_get_current_task();

	return BPF_CORE_READ(task, thread.fsbase);
#else
	return 0;
#endif
}

static __always_inline __u64 py_read(__u64 address)
{
	__u64 v = 0;

	if (address < 4096 || bpf_probe_read_user(&v, sizeof(v), (const void *)address) != 0)
		return 0;
	return v;
}

/* Fields of a frame read into the walk's window; 0 past the bytes read. */
static __always_inline __u64 py_u64(const __u8 *buf, __u32 off)
{
	if (off > GP_PY_FRAME_READ - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u32 py_u32(const __u8 *buf, __u32 off)
{
	if (off > GP_PY_FRAME_READ - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

static __always_inline __u8 py_u8(const __u8 *buf, __u32 off)
{
	if (off > GP_PY_FRAME_READ - 1)
		return 0;
	return buf[off];
}

struct py_thread_ctx {
	const struct gp_python_proc *proc;
	__u64 tstate;
	__u64 want; /* the thread's pthread_t */
	__u64 found;
};

static long py_thread_step(__u32 index, void *data)
{
	struct py_thread_ctx *c = data;

	if (c->tstate == 0)
		return 1;
	if (py_read(c->tstate + c->proc->tstate_thread_id) == c->want) {
		c->found = c->tstate;
		return 1;
	}
	c->tstate = py_read(c->tstate + c->proc->tstate_next);
	return 0;
}

/* The PyThreadState of the current thread, 0 when it has none (or it was not found). */
static __always_inline __u64 py_thread_state(const struct gp_python_proc *proc, __u32 tid)
{
	struct py_thread_ctx c = { .proc = proc };
	__u64 *known, interp;

	c.want = py_thread_pointer();
	if (c.want == 0)
		return 0;
	known = bpf_map_lookup_elem(&python_threads, &tid);
	if (known && *known && py_read(*known + proc->tstate_thread_id) == c.want)
		return *known;
	interp = py_read(proc->runtime + proc->interpreters_head);
	if (interp == 0)
		return 0;
	c.tstate = py_read(interp + proc->threads_head);
	bpf_loop(GP_PY_MAX_THREADS, py_thread_step, &c, 0);
	if (c.found)
		bpf_map_update_elem(&python_threads, &tid, &c.found, BPF_ANY);
	return c.found;
}

struct py_frame_ctx {
	struct gp_walk_state *walk;
	const struct gp_python_proc *proc;
	__u64 frame;
	__u64 pending; /* the last frame's entry, written once the next frame tells its entry bit */
	struct stack_hash h;
	__u32 depth; /* where the pending entry goes */
	__u32 count;
	__u32 flags;
	__u32 pad;
};

/* Writes the pending entry at c->depth and moves on. */
static __always_inline void py_put(struct py_frame_ctx *c)
{
	__u32 slot = c->depth;

	if (c->pending == 0 || slot >= GP_MAX_STACK_DEPTH)
		return;
	barrier_var(slot);
	c->walk->user.stack.ips[slot & 127] = c->pending;
	hash_frame(&c->h, c->pending);
	c->depth = slot + 1;
	c->count++;
	c->pending = 0;
}

/* The instruction's offset in code units, GP_PY_OFFSET_UNKNOWN when it is not known. */
static __always_inline __u64 py_offset(const struct gp_python_proc *p, const __u8 *buf, __u64 code)
{
	__u64 instr, first, units;
	__s32 lasti;

	if (p->model == GP_PY_FRAME_OBJECT) {
		lasti = (__s32)py_u32(buf, p->frame_instr);
		if (lasti < 0)
			return GP_PY_OFFSET_UNKNOWN;
		units = p->lasti_bytes ? (__u64)lasti / 2 : (__u64)lasti;
	} else {
		instr = py_u64(buf, p->frame_instr);
		first = code + p->code_adaptive;
		if (instr < first)
			return GP_PY_OFFSET_UNKNOWN;
		units = (instr - first) / 2;
	}
	return units < GP_PY_OFFSET_UNKNOWN ? units : GP_PY_OFFSET_UNKNOWN;
}

/*
 * The bytes of frame c->frame in walk->window: from the window when they are in it, else read.
 * A 3.11+ interpreter frame lives in its thread's data stack, its caller's just below it: the
 * read takes the frame and up to the window's room below it, within the frame's page, so that
 * one read serves a run of frames (up to 5 of the bench's ~190-byte frames instead of 1). A frame
 * object (3.8-3.10) is on the heap: its own bytes alone. Returns its offset in the window, or
 * -1 when it cannot be read.
 */
static __always_inline long py_frame_bytes(struct py_frame_ctx *c, __u32 size)
{
	const __u64 room = sizeof(c->walk->window) - GP_PY_FRAME_READ; /* the frame's offset at most */
	/* What the window holds, kept where the table walk keeps it (in the map: the verifier
	 * tracks no bounds of it from one step to the next, as it would on the stack) and true for
	 * it too. */
	struct gp_unwind_regs *u = &c->walk->unwind;
	__u64 frame = c->frame, off = frame - u->window_base, start, len;

	if (frame >= u->window_base && off + size <= u->window_len)
		return off <= room ? (long)off : -1;
	if (frame < 4096)
		return -1;
	start = frame;
	if (c->proc->model == GP_PY_INTERPRETER_FRAME) {
		start = frame > room ? frame - room : 0;
		if (start < (frame & ~4095ULL))
			start = frame & ~4095ULL;
	}
	len = frame - start + size;
	barrier_var(len);
	if (len == 0 || len > sizeof(c->walk->window))
		return -1;
	if (bpf_probe_read_user(c->walk->window, len, (const void *)start) != 0)
		return -1;
	u->window_base = start;
	u->window_len = len;
	off = frame - start;
	return off <= room ? (long)off : -1;
}

static long py_frame_step(__u32 index, void *data)
{
	struct py_frame_ctx *c = data;
	const struct gp_python_proc *p = c->proc;
	__u32 size = p->frame_read;
	__u64 code, entry;
	__u8 *buf;
	long off;

	if (c->frame == 0)
		return 1;
	/* The pending entry and this frame's must both fit. */
	if (c->depth + 1 >= GP_MAX_STACK_DEPTH || c->count + 1 >= GP_PY_MAX_FRAMES) {
		c->flags |= GP_PY_CUT;
		return 1;
	}
	if (size > GP_PY_FRAME_READ || size == 0)
		size = GP_PY_FRAME_READ;
	off = py_frame_bytes(c, size);
	if (off < 0 || off > (long)(sizeof(c->walk->window) - GP_PY_FRAME_READ)) {
		c->flags |= GP_PY_READ_FAILED;
		return 1;
	}
	buf = (__u8 *)c->walk->window + off;
	code = py_u64(buf, p->frame_code) & ~p->code_tag_mask;
	c->frame = py_u64(buf, p->frame_previous);
	if (p->frame_owner != GP_PY_NONE && py_u8(buf, p->frame_owner) >= p->owner_shim) {
		/* An evaluation loop's entry shim (3.12+): the frame before it, leaf-ward, is the
		 * outermost one that loop runs. */
		if (c->pending)
			c->pending |= GP_PY_ENTRY;
		return 0;
	}
	if (p->model == GP_PY_FRAME_OBJECT)
		entry = GP_PY_ENTRY; /* one evaluation loop call per frame */
	else if (p->frame_is_entry != GP_PY_NONE && py_u8(buf, p->frame_is_entry))
		entry = GP_PY_ENTRY;
	else
		entry = 0;
	py_put(c);
	if (code < 4096 || code > GP_PY_CODE_MASK) {
		c->flags |= GP_PY_READ_FAILED;
		return 1;
	}
	c->pending = GP_PY_FRAME | entry | py_offset(p, buf, code) << GP_PY_OFFSET_SHIFT | code;
	return 0;
}

/*
 * Appends the Python frames of the sampled thread to walk->user.stack (native frames already
 * there, hashed into `hash`) and returns the stack's new hash; `hash` itself when the process is
 * not walked, its thread has no Python frame, or the native stack left no room.
 */
__attribute__((noinline)) __u64 python_frames(__u32 pid, __u32 tid, __u64 hash)
{
	/* A global function: the verifier checks it once, not again inside every inlined copy
	 * of record() (which, with the deferred-copy path, went past its limit). */
	struct gp_walk_state *walk;
	struct gp_stack *st;
	const struct gp_python_proc *proc;
	struct py_frame_ctx c = {};
	struct gp_py_tail *tail;
	__u64 tstate, frame;
	__u32 native, zero = 0;

	if (!python_frames_on)
		return hash;
	tail = bpf_map_lookup_elem(&python_tail, &zero);
	if (!tail)
		return hash;
	tail->len = 0;
	walk = bpf_map_lookup_elem(&walk_state, &zero);
	if (!walk)
		return hash;
	st = &walk->user.stack;
	native = st->depth;
	proc = bpf_map_lookup_elem(&python_procs, &pid);
	if (!proc)
		return hash;
	py_count(GP_PY_SAMPLES);
	if (native + 2 > GP_MAX_STACK_DEPTH) {
		py_count(GP_PY_NO_ROOM);
		return hash;
	}
	tstate = py_thread_state(proc, tid);
	if (tstate == 0) {
		py_count(GP_PY_NO_THREAD);
		return hash;
	}
	frame = py_read(tstate + proc->tstate_frame);
	if (frame && proc->cframe_frame != GP_PY_NONE)
		frame = py_read(frame + proc->cframe_frame);
	if (frame == 0) {
		py_count(GP_PY_NO_FRAME);
		return hash;
	}
	c.walk = walk;
	c.proc = proc;
	c.frame = frame;
	c.depth = native + 1; /* after the marker */
	c.h.key = hash;
	c.h.check = (__u64)st->check << 32 | native;
	bpf_loop(GP_PY_MAX_FRAMES, py_frame_step, &c, 0);
	if (c.frame != 0 && !(c.flags & (GP_PY_CUT | GP_PY_READ_FAILED)))
		c.flags |= GP_PY_CUT; /* bpf_loop's bound */
	py_put(&c);
	if (c.count == 0) {
		py_count(GP_PY_NO_FRAME);
		return hash;
	}
	if (c.flags & GP_PY_CUT)
		py_count(GP_PY_CUT_CHAINS);
	if (c.flags & GP_PY_READ_FAILED)
		py_count(GP_PY_READ_ERRORS);
	py_count(GP_PY_WALKED);
	st->ips[native & 127] = GP_PY_MARKER | c.flags | c.count;
	hash_frame(&c.h, st->ips[native & 127]);
	tail->pid = pid;
	tail->tid = tid;
	tail->start = native;
	tail->len = c.depth - native;
	return hash_end(&c.h, st, c.depth);
}

/*
 * A sample whose user stack is copied for user space to unwind (before its process's tables)
 * keeps its Python frames: python_frames() walked them into walk->user.stack as for any sample
 * (after the native frames walked so far, or from its start), and they are appended to the copy,
 * after its `n` stack bytes, as the marker and its entries. Returns the bytes appended.
 */
static __always_inline __u32 python_copy_tail(struct gp_walk_state *walk,
					      const struct gp_sample_key *key, __u8 *to)
{
	struct gp_py_tail *tail;
	__u32 zero = 0, start, len;

	if (!python_frames_on)
		return 0;
	tail = bpf_map_lookup_elem(&python_tail, &zero);
	if (!tail || tail->len == 0 || tail->pid != key->pid || tail->tid != key->tid)
		return 0;
	start = tail->start;
	len = tail->len;
	tail->len = 0;
	if (start >= GP_MAX_STACK_DEPTH || len > GP_MAX_STACK_DEPTH - start)
		return 0;
	len *= sizeof(__u64);
	barrier_var(len);
	if (len == 0 || len > GP_MAX_STACK_DEPTH * sizeof(__u64))
		return 0;
	if (bpf_probe_read_kernel(to, len, &walk->user.stack.ips[start & 127]) != 0)
		return 0;
	return len;
}

#endif /* GP_PYTHON_WALK_H */
