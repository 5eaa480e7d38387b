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


def descend(frames, *args):
    if frames > 0:
        result = descend(frames - 1, *args)
        return result  # not a tail position the interpreter could fold
    return spin(*args)


def main():
    start, end, min_gap, capacity = (int(a) for a in sys.argv[1:5])
    log = array.array("q", bytes(16 * capacity))  # allocated and touched before the window
    stolen, gaps, logged = descend(32, start, end, min_gap, log, capacity)
    out = array.array("q", [stolen, gaps, logged])
    sys.stdout.buffer.write(out.tobytes())
    sys.stdout.buffer.write(log[: 2 * logged].tobytes())


main()
