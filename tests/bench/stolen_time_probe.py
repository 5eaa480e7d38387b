# The stolen-time probe's loop in Python, for stolen_time_probe -e (unwind_bench.sh runs it with
# Debian's /usr/bin/python3, which is built without frame pointers: a CPU-bound interpreter
# whose native stack only an unwinder with tables walks whole).
#
#   python3 stolen_time_probe.py START_NS END_NS MIN_GAP_NS CAPACITY
#
# Reads CLOCK_MONOTONIC in a loop, 32 Python frames deep, until END_NS, and logs every gap
# between two reads longer than MIN_GAP_NS that starts after START_NS. Writes to standard output,
# in native int64s: stolen ns, gaps, logged gaps, then (start, length) of each logged gap.
# The probe (stolen_time_probe.c) pins it to a CPU and analyses the log as its own.
import array
import sys
import time


def spin(start, end, min_gap, log, capacity):
    clock = time.monotonic_ns
    stolen = gaps = logged = 0
    previous = clock()
    while True:
        now = clock()
        if now >= end:
            break
        gap = now - previous
        if gap > min_gap and previous >= start:
            stolen += gap
            gaps += 1
            if logged < capacity:
                log[2 * logged] = previous
                log[2 * logged + 1] = gap
                logged += 1
        previous = now
    return stolen, gaps, logged


# Plain positional calls: CPython 3.11 runs them in the same native frame of its interpreter
# loop, so the native stack is as deep as a CPU-bound script's (fib's), ~15 frames, not two per
# Python frame as a call through *args would make it.
def descend(frames, start, end, min_gap, log, capacity):
    if frames > 0:
        result = descend(frames - 1, start, end, min_gap, log, capacity)
        return result  # not a tail position the interpreter could fold
    return spin(start, end, min_gap, log, capacity)


def main():
    start, end, min_gap, capacity = (int(a) for a in sys.argv[1:5])
    log = array.array("q", bytes(16 * capacity))  # allocated and touched before the window
    stolen, gaps, logged = descend(32, start, end, min_gap, log, capacity)
    out = array.array("q", [stolen, gaps, logged])
    sys.stdout.buffer.write(out.tobytes())
    sys.stdout.buffer.write(log[: 2 * logged].tobytes())


main()
