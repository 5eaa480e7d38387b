// Stolen-time probe for record_overhead.sh: what each sample of a sampler costs the CPU it
// interrupts, in-kernel work included, which neither bpf_stats nor the sampler's own CPU time
// holds for perf.
//
//   stolen_time_probe [-w WARMUP] [-p PID]... [-g NS] [-e PROGRAM] SECONDS [HZ...]
//
// One thread per CPU, pinned, reads CLOCK_MONOTONIC in a loop 32 frames deep (so that stack
// walks have frames to walk). A gap between two reads longer than 250 ns (a loop turn takes
// ~25 ns) is time the CPU spent elsewhere: an interrupt, a BPF program, another task.
// Each HZ is a sampler running at that frequency, all at once: a cpu-clock event in frequency
// mode fires every 1e9/HZ ns exactly (the kernel turns its frequency into a fixed hrtimer
// period), so on each CPU a sampler's gaps start at one offset modulo its period, while the
// other gaps, the other samplers' included when their frequencies differ, spread over it.
// The median length of the gaps at that offset is what one sample costs, timer included; rare
// extras (a reader woken and run right after a sample, another timer firing at the same
// moment) do not move a median much, and they pull every sampler towards the same figure.
//
// The threads run WARMUP seconds (default 0) before the measured SECONDS, so that what the
// probe's own start makes a sampler do (gp-record snapshots a new process and drains within a
// second) falls outside the measurement: the probe is the instrument, not the workload. Each
// -p PID (a sampler) has its CPU time read from schedstat at the start and end of each phase.
//
// With -e PROGRAM the loop is another program's (unwind_bench.sh runs Debian's python3, built
// without frame pointers, through stolen_time_probe.py): the probe starts PROGRAM once per CPU,
// pinned there, with the arguments START_NS END_NS MIN_GAP_NS CAPACITY (CLOCK_MONOTONIC), and
// reads back from its standard output, in native int64s: stolen ns, gaps, logged gaps, then
// (start, length) of each logged gap. -g sets the shortest gap counted (default 250 ns; a
// slower loop needs more).
//
// Prints: stolen ns per CPU-second and gaps per CPU-second, then for each HZ the median
// sampling gap in ns and the sampling gaps found per CPU-second, then for each PID its CPU ns
// during the warm-up and during the measured seconds.
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { max_cpus = 1024, call_depth = 32 };
static long long min_gap_ns = 250;
static const long long phase_bin_ns = 2000;  // the timer's jitter here spans one or two bins

struct gap {
  long long start_ns, length_ns;
};

struct cpu_tally {
  long long stolen_ns, gaps;
  struct gap* log;  // preallocated and touched before the run: no page fault inside it
  long long logged, capacity;
};

static struct cpu_tally tallies[max_cpus];
static long long start_ns, end_ns;  // the measured seconds; gaps before start_ns are warm-up

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

__attribute__((noinline)) static void spin(struct cpu_tally* t) {
  long long previous = now_ns(), now;
  for (; (now = now_ns()) < end_ns; previous = now) {
    if (now - previous <= min_gap_ns || previous < start_ns) continue;
    t->stolen_ns += now - previous;
    t->gaps++;
    if (t->logged < t->capacity) t->log[t->logged++] = (struct gap){previous, now - previous};
  }
}

__attribute__((noinline)) static void descend(int frames, struct cpu_tally* t) {
  if (frames > 0) descend(frames - 1, t);
  else spin(t);
  __asm__ volatile("" ::: "memory");  // no tail call: every frame stays on the stack
}

static void* run_on_cpu(void* arg) {
  long cpu = (long)arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  descend(call_depth, &tallies[cpu]);
  return NULL;
}

// Offset within the period where most of this CPU's gaps start: the sampling interrupt's phase.
static long long sampling_phase(const struct cpu_tally* t, long long period_ns, long* bins) {
  long count = period_ns / phase_bin_ns + 1, peak = 0;
  memset(bins, 0, count * sizeof *bins);
  for (long long i = 0; i < t->logged; i++) bins[t->log[i].start_ns % period_ns / phase_bin_ns]++;
  for (long b = 1; b < count; b++)
    if (bins[b] > bins[peak]) peak = b;
  return peak * phase_bin_ns + phase_bin_ns / 2;
}

static int by_value(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return (x > y) - (x < y);
}

// CPU nanoseconds process `pid` has used so far, all threads (schedstat's first field).
static long long process_cpu_ns(long pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/task", pid);
  DIR* tasks = opendir(path);
  if (!tasks) return 0;  // exited: the sampler failed, which the script reports
  long long total = 0;
  for (struct dirent* d; (d = readdir(tasks));) {
    if (d->d_name[0] == '.') continue;
    char stat_path[320];
    snprintf(stat_path, sizeof stat_path, "/proc/%ld/task/%s/schedstat", pid, d->d_name);
    FILE* f = fopen(stat_path, "r");
    long long ns = 0;
    if (f && fscanf(f, "%lld", &ns) == 1) total += ns;
    if (f) fclose(f);
  }
  closedir(tasks);
  return total;
}

// -e: runs `program` pinned to `cpu` with the window's bounds; returns its pid and sets *out to
// the read end of its standard output, or returns -1.
static pid_t start_external(const char* program, long cpu, long long capacity, int* out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    char args[4][32];
    snprintf(args[0], sizeof args[0], "%lld", start_ns);
    snprintf(args[1], sizeof args[1], "%lld", end_ns);
    snprintf(args[2], sizeof args[2], "%lld", min_gap_ns);
    snprintf(args[3], sizeof args[3], "%lld", capacity);
    char script[4096];
    snprintf(script, sizeof script, "exec %s \"$@\"", program);
    execl("/bin/sh", "sh", "-c", script, "sh", args[0], args[1], args[2], args[3], (char*)NULL);
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) return close(fds[0]), -1;
  *out = fds[0];
  return pid;
}

static int read_all(int fd, void* buffer, size_t size) {
  for (size_t done = 0; done < size;) {
    ssize_t n = read(fd, (char*)buffer + done, size - done);
    if (n <= 0) return -1;
    done += n;
  }
  return 0;
}

// -e: the tally of the program on `cpu` from its output; its exit status must be 0.
static int finish_external(pid_t pid, int fd, struct cpu_tally* t) {
  long long head[3];
  int ok = read_all(fd, head, sizeof head) == 0 && head[2] >= 0 && head[2] <= t->capacity &&
           read_all(fd, t->log, head[2] * sizeof(struct gap)) == 0;
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  t->stolen_ns = head[0];
  t->gaps = head[1];
  t->logged = head[2];
  return 0;
}

static void sleep_until(long long ns) {
  struct timespec t = {ns / 1000000000LL, ns % 1000000000LL};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {
  }
}

int main(int argc, char** argv) {
  double warmup = 0;
  long pids[64];
  int npids = 0;
  const char* program = NULL;
  for (int opt; (opt = getopt(argc, argv, "w:p:g:e:")) != -1;) {
    if (opt == 'w') warmup = atof(optarg);
    else if (opt == 'g') min_gap_ns = atoll(optarg);
    else if (opt == 'e') program = optarg;
    else if (opt == 'p' && npids < 64) pids[npids++] = atol(optarg);
    else optind = argc + 1;
  }
  if (optind >= argc) {
    fprintf(
        stderr,
        "usage: stolen_time_probe [-w WARMUP] [-p PID]... [-g NS] [-e PROGRAM] SECONDS [HZ...]\n");
    return 2;
  }
  double seconds = atof(argv[optind]);
  int first_hz = optind + 1;
  long total_hz = 0;
  for (int i = first_hz; i < argc; i++) total_hz += atol(argv[i]);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > max_cpus) cpus = max_cpus;
  long long capacity =
      (long long)(seconds * (2 * total_hz + 20000));  // ~2000-7000 gaps/s seen here
  for (long c = 0; c < cpus; c++) {
    tallies[c].capacity = capacity;
    tallies[c].log = calloc(capacity, sizeof(struct gap));
    if (!tallies[c].log) return perror("stolen_time_probe"), 1;
    memset(tallies[c].log, 1, capacity * sizeof(struct gap));
  }

  pthread_t threads[max_cpus];
  pid_t programs[max_cpus];
  int outputs[max_cpus];
  long long cpu_ns[64][3];  // per PID: at launch, at start_ns, at end_ns
  for (int p = 0; p < npids; p++) cpu_ns[p][0] = process_cpu_ns(pids[p]);
  start_ns = now_ns() + (long long)(warmup * 1e9);
  end_ns = start_ns + (long long)(seconds * 1e9);
  for (long c = 0; c < cpus; c++) {
    if (!program) {
      pthread_create(&threads[c], NULL, run_on_cpu, (void*)c);
    } else if ((programs[c] = start_external(program, c, capacity, &outputs[c])) < 0) {
      return perror("stolen_time_probe: -e"), 1;
    }
  }
  sleep_until(start_ns);
  for (int p = 0; p < npids; p++) cpu_ns[p][1] = process_cpu_ns(pids[p]);
  long long stolen = 0, gaps = 0, logged = 0, full = 0;
  for (long c = 0; c < cpus; c++) {
    if (!program) {
      pthread_join(threads[c], NULL);
    } else if (finish_external(programs[c], outputs[c], &tallies[c]) != 0) {
      fprintf(stderr, "stolen_time_probe: -e: '%s' failed on CPU %ld\n", program, c);
      return 1;
    }
    stolen += tallies[c].stolen_ns;
    gaps += tallies[c].gaps;
    logged += tallies[c].logged;
    full += tallies[c].logged == capacity;
  }
  if (full) fprintf(stderr, "stolen_time_probe: the gap log filled on %lld CPUs\n", full);

  printf("%.0f %.1f", stolen / (seconds * cpus), gaps / (seconds * cpus));
  for (int p = 0; p < npids; p++) cpu_ns[p][2] = process_cpu_ns(pids[p]);
  long long* lengths = malloc((logged + 1) * sizeof *lengths);
  for (int i = first_hz; i < argc; i++) {
    long long period = 1000000000LL / atol(argv[i]), window = 3 * phase_bin_ns, sampled = 0;
    long* bins = malloc((period / phase_bin_ns + 1) * sizeof *bins);
    for (long c = 0; c < cpus; c++) {
      const struct cpu_tally* t = &tallies[c];
      long long phase = sampling_phase(t, period, bins);
      for (long long g = 0; g < t->logged; g++) {
        long long off = t->log[g].start_ns % period - phase;
        if (off < 0) off = -off;
        if (off > period / 2) off = period - off;  // the phase window may wrap around
        if (off <= window) lengths[sampled++] = t->log[g].length_ns;
      }
    }
    qsort(lengths, sampled, sizeof *lengths, by_value);
    printf(" %lld %.1f", sampled ? lengths[sampled / 2] : 0, sampled / (seconds * cpus));
    free(bins);
  }
  for (int p = 0; p < npids; p++)
    printf(" %lld %lld", cpu_ns[p][1] - cpu_ns[p][0], cpu_ns[p][2] - cpu_ns[p][1]);
  printf("\n");
  return 0;
}
