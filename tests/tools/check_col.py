#!/usr/bin/env python3
"""Independent checker of gProfiler's collapsed format (.col), written from
reference/gprofiler.md §2 (and upload-apis.md §1.4) without using any gp code.

Usage: check_col.py [--sorted] [--studio] FILE.col
  --sorted   also require gp-fold's deliberate deviation: lines sorted and unique
  --studio   also require every metadata field the Performance Studio validates (§8.4)
  --studio-fields-known
             require the §8.4 fields except those a recording cannot know offline
             (memory_capacity_mb, pid): gp-fold leaves unknown values out

Prints "ok: <lines> lines, <samples> samples" and exits 0, or prints every violation
("line N: ...") to stderr and exits 1.
"""
import json
import re
import sys

# §2.2 top-level keys every header must have.
REQUIRED_KEYS = {
    "containers": list,
    "container_names_enabled": bool,
    "metadata": dict,
    "metrics": dict,
    "application_metadata": list,
    "application_metadata_enabled": bool,
    "profiling_mode": str,
}
PARITY_KEYS = ("hwmetrics", "htmlblob", "flamegraph_html")
# §8.4 AgentMetadata required fields.
STUDIO_FIELDS = (
    "current_time", "spawn_time", "spawn_uptime_ms", "private_ip", "hostname", "cloud_provider",
    "processors", "memory_capacity_mb", "system_name", "os_name", "os_release", "kernel_release",
    "kernel_version", "hardware_type", "pid", "mac_address", "agent_version", "libc_type",
    "libc_version", "python_version", "run_mode", "deployment_type", "run_arguments",
)
# §2.5 suffix vocabulary (async-profiler's _[0]/_[1] included).
SUFFIXES = {"k", "j", "i", "0", "1", "p", "pn", "pe", "rb", "php", "net"}
SUFFIX_RE = re.compile(r"_\[([a-z0-9]+)\]$")


class Checker:
    def __init__(self, sorted_lines, studio):
        self.sorted_lines = sorted_lines
        self.studio = studio
        self.problems = []

    def bad(self, where, what):
        self.problems.append(f"{where}: {what}")

    def header(self, line):
        if not line.startswith("# "):
            self.bad("line 1", "header must be '# ' followed by JSON")
            return None
        try:
            doc = json.loads(line[2:])
        except ValueError as e:
            self.bad("line 1", f"header is not JSON: {e}")
            return None
        if not isinstance(doc, dict):
            self.bad("line 1", "header JSON is not an object")
            return None
        # json.dumps with default separators and ensure_ascii, key order as written.
        if json.dumps(doc) != line[2:]:
            self.bad("line 1", "header is not in json.dumps' default form")
        for key, typ in REQUIRED_KEYS.items():
            if not isinstance(doc.get(key), typ):
                self.bad("line 1", f"header key '{key}' missing or not {typ.__name__}")
        for key in PARITY_KEYS:
            if key not in doc:
                self.bad("line 1", f"header key '{key}' missing")
        apps = doc.get("application_metadata")
        if isinstance(apps, list):
            if not apps or apps[0] is not None:
                self.bad("line 1", "application_metadata[0] must be null")
            rest = apps[1:]
            for i, a in enumerate(rest):
                if not isinstance(a, dict):
                    self.bad("line 1", f"application_metadata[{i + 1}] is not an object")
                if a in rest[:i]:
                    self.bad("line 1", f"application_metadata[{i + 1}] repeats an earlier entry")
        metrics = doc.get("metrics")
        if isinstance(metrics, dict) and set(metrics) != {"cpu_avg", "mem_avg"}:
            self.bad("line 1", "metrics must have exactly cpu_avg and mem_avg")
        md = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        if doc.get("profiling_mode") not in ("cpu", "allocation"):
            self.bad("line 1", "profiling_mode must be cpu or allocation")
        if "sampling_event" in doc:
            mode = doc.get("sampling_mode")
            if mode not in ("frequency", "period") or f"sampling_{mode}" not in doc:
                self.bad("line 1", "sampling_mode must name a present sampling_frequency/sampling_period")
        if "token" in json.dumps(md).lower():
            self.bad("line 1", "metadata carries a token")
        if self.studio:
            for f in STUDIO_FIELDS:
                if self.studio == "known" and f in ("memory_capacity_mb", "pid"):
                    continue
                if f not in md:
                    self.bad("line 1", f"metadata.{f} missing (the Studio rejects the upload)")
        return doc

    def stack_line(self, n, line, doc, layout, seen):
        cut = line.rfind(" ")
        if cut < 0:
            self.bad(f"line {n}", "no space before the count")
            return 0
        stack, count = line[:cut], line[cut + 1:]
        if not count.isdigit() or int(count) <= 0:
            self.bad(f"line {n}", f"count {count!r} is not a positive integer")
            return 0
        frames = stack.split(";")
        has_index, has_container = layout
        need = 1 + has_index + has_container
        if len(frames) < need:
            self.bad(f"line {n}", "too few frames for the line prefix")
            return 0
        i = 0
        if has_index:
            idx = frames[0]
            if not idx.isdigit() or int(idx) >= len(doc.get("application_metadata", [None])):
                self.bad(f"line {n}", f"app-metadata index {idx!r} out of range")
            i += 1
        if has_container:
            container = frames[i]
            if container and container not in doc.get("containers", []):
                self.bad(f"line {n}", f"container {container!r} not listed in the header")
            i += 1
        if not frames[i]:
            self.bad(f"line {n}", "empty comm frame")
        for j, frame in enumerate(frames[i + 1:], start=i + 1):
            if not frame:
                self.bad(f"line {n}", f"frame {j} is empty")
            if frame.startswith("appid: ") and j != i + 1:
                self.bad(f"line {n}", "appid frame must follow the comm")
            m = SUFFIX_RE.search(frame)
            if m and m.group(1) not in SUFFIXES:
                self.bad(f"line {n}", f"unknown suffix _[{m.group(1)}] in {frame!r}")
        if stack in seen and self.sorted_lines:
            self.bad(f"line {n}", "stack repeats an earlier line")
        seen[stack] = seen.get(stack, 0) + int(count)
        return int(count)

    def check(self, data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            self.bad("file", f"not UTF-8: {e}")
            return 0, 0
        if text.endswith("\n"):
            self.bad("file", "ends with a newline (gProfiler joins lines with no trailing newline)")
        lines = text.split("\n")
        doc = self.header(lines[0]) or {}
        ra = doc.get("metadata", {}).get("run_arguments", {}) if isinstance(doc.get("metadata"), dict) else {}
        v1 = isinstance(ra, dict) and ra.get("profile_api_version") == "v1"
        layout = (int(doc.get("application_metadata_enabled", True) and not v1), int(not v1))
        seen, samples, stack_lines = {}, 0, 0
        body = lines[1:]
        for n, line in enumerate(body, start=2):
            if not line or line.startswith("#"):
                self.bad(f"line {n}", "blank or comment line inside the stacks")
                continue
            samples += self.stack_line(n, line, doc, layout, seen)
            stack_lines += 1
        if self.sorted_lines and body != sorted(body, key=lambda l: l[: l.rfind(" ")]):
            self.bad("file", "lines are not sorted")
        return stack_lines, samples


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    studio = "all" if "--studio" in argv else "known" if "--studio-fields-known" in argv else None
    checker = Checker("--sorted" in argv, studio)
    with open(args[0], "rb") if args[0] != "-" else sys.stdin.buffer as f:
        lines, samples = checker.check(f.read())
    if checker.problems:
        for p in checker.problems:
            print(f"check_col: {p}", file=sys.stderr)
        return 1
    print(f"ok: {lines} lines, {samples} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
