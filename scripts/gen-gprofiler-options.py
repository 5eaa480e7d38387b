#!/usr/bin/env python3
"""Generates gp-profile's table of gProfiler's options from gProfiler's own parser.

  scripts/gen-gprofiler-options.py --from-checkout DIR   read a gProfiler checkout (DIR/gprofiler/...),
                                                         rewrite the source excerpt and the table
  scripts/gen-gprofiler-options.py                       rewrite the table (and the Java safemode
                                                         causes) from the excerpt
  scripts/gen-gprofiler-options.py --check               regenerate both into memory; exit 1 on a
                                                         difference (the excerpt is re-read from DIR
                                                         too when --from-checkout is also given)

Two steps, so that the table can be regenerated without network access:
1. excerpt (tests/fixtures/gprofiler/options_source.py): the text of every add_argument() call of
   gprofiler/main.py's parse_cmd_args, every @register_profiler(...) of gprofiler/profilers/*.py
   (their ProfilerArgument lists and --<name>-mode/--no-<name>, which main.py's
   _add_profilers_arguments adds), and the module-level constants they name, each with the file
   and line it comes from, under a header naming gProfiler's version and commit.
2. table (tools/gp-profile/gprofiler_options.inc): one aggregate initializer per option, with its
   names, dest, action, nargs, type, default, choices and help as argparse shows them
   (%(default)s and %(choices)s filled in), read by tools/gp-profile/cli.cpp; and the Java
   safemode causes (JavaSafemodeOptions) in libcore/include/gp/runtime/java_safemode_causes.inc,
   read by gp-profile and gp-runtime.
Only Python's own ast module is used; nothing of gProfiler is imported or run.
"""
import argparse
import ast
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
EXCERPT = os.path.join(SRC, "tests", "fixtures", "gprofiler", "options_source.py")
TABLE = os.path.join(SRC, "tools", "gp-profile", "gprofiler_options.inc")
SAFEMODE = os.path.join(SRC, "libcore", "include", "gp", "runtime", "java_safemode_causes.inc")
NONE = object()  # an argparse default of None (no default shown)


class Unresolved(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Step 1: checkout -> excerpt


def _py_files(root):
    for d, _, files in os.walk(os.path.join(root, "gprofiler")):
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(d, f)


def _names_in(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_call_to(node, name):
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == name) or (isinstance(f, ast.Name) and f.id == name)


def excerpt_from_checkout(root):
    segments = []  # (relpath, line, text)
    constants = {}  # NAME -> (relpath, line, text, names used)
    for path in _py_files(root):
        rel = os.path.relpath(path, root)
        text = open(path, encoding="utf-8").read()
        tree = ast.parse(text)
        for node in tree.body:  # module-level constants: UPPER_CASE = <expression>
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id.isupper():
                    if node.value is not None:
                        constants.setdefault(
                            targets[0].id,
                            (rel, node.lineno, ast.get_source_segment(text, node), _names_in(node.value)),
                        )
            if isinstance(node, ast.ClassDef):  # its plain attributes (Enum members, class constants)
                attrs = [a for a in node.body if isinstance(a, ast.Assign) and len(a.targets) == 1
                         and isinstance(a.targets[0], ast.Name)
                         and not any(isinstance(n, (ast.Call, ast.Lambda)) for n in ast.walk(a.value))]
                if attrs:
                    bases = ", ".join(ast.unparse(b) for b in node.bases)
                    body = "\n".join("    " + ast.get_source_segment(text, a) for a in attrs)
                    constants.setdefault(node.name, (rel, node.lineno, f"class {node.name}({bases}):\n{body}",
                                                     set().union(*(_names_in(a.value) for a in attrs))))
        if rel == os.path.join("gprofiler", "main.py"):
            for fn in tree.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "parse_cmd_args":
                    for node in ast.walk(fn):
                        # X = parser.add_argument_group(...) / subparsers.add_parser(...), and the
                        # add_argument() calls on them
                        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                                and isinstance(node.targets[0], ast.Name)
                                and (_is_call_to(node.value, "add_argument_group")
                                     or _is_call_to(node.value, "add_parser"))):
                            segments.append((rel, node.lineno, ast.get_source_segment(text, node)))
                        if _is_call_to(node, "add_argument"):
                            segments.append((rel, node.lineno, ast.get_source_segment(text, node)))
        if rel.startswith(os.path.join("gprofiler", "profilers")):
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    for dec in node.decorator_list:
                        if _is_call_to(dec, "register_profiler"):
                            segments.append((rel, dec.lineno, ast.get_source_segment(text, dec)))
    segments.sort(key=lambda s: (s[0] != os.path.join("gprofiler", "main.py"), s[0], s[1]))
    # The constants the calls name, and those these name, transitively.
    wanted, todo = set(), set()
    for _, _, seg in segments:
        todo |= _names_in(ast.parse(seg))
    while todo:
        n = todo.pop()
        if n in constants and n not in wanted:
            wanted.add(n)
            todo |= constants[n][3]
    version = "unknown"
    init = os.path.join(root, "gprofiler", "__init__.py")
    if os.path.exists(init):
        for line in open(init, encoding="utf-8"):
            if line.startswith("__version__"):
                version = line.split("=", 1)[1].strip().strip("\"'")
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    out = [
        "# Excerpt of gProfiler's parser (https://github.com/intel/gprofiler, Apache License 2.0,",
        "# Copyright (C) 2022 Intel Corporation), written by scripts/gen-gprofiler-options.py --from-checkout:",
        f"# gProfiler {version}, commit {commit}",
        "# The add_argument() calls of gprofiler/main.py's parse_cmd_args, the @register_profiler(...) of",
        "# gprofiler/profilers/*.py and the module-level constants they name. Not run: only parsed.",
        "",
    ]
    for name in sorted(wanted, key=lambda n: (constants[n][0], constants[n][1])):
        rel, line, seg, _ = constants[name]
        out += [f"# {rel}:{line}", seg, ""]
    for rel, line, seg in segments:
        out += [f"# {rel}:{line}", seg, ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Step 2: excerpt -> table


class Evaluator:
    """Evaluates the constant expressions of the excerpt (literals, names, f-strings, + and *)."""

    def __init__(self):
        self.env = {}

    def eval(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Attribute):
            if node.attr == "value":  # an Enum member's value: members are kept as their values
                return self.eval(node.value)
            owner = self.eval(node.value)
            if isinstance(owner, dict) and node.attr in owner:
                return owner[node.attr]
            raise Unresolved(ast.unparse(node))
        if isinstance(node, ast.ListComp) and len(node.generators) == 1 and not node.generators[0].ifs:
            gen = node.generators[0]
            seq = self.eval(gen.iter)
            seq = list(seq.values()) if isinstance(seq, dict) else seq
            out = []
            for item in seq:
                self.env[gen.target.id] = item
                out.append(self.eval(node.elt))
            self.env.pop(gen.target.id, None)
            return out
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            if node.id in ("int", "str", "float", "bool"):
                return node.id
            raise Unresolved(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    parts.append(str(self.eval(v.value)))
                else:
                    parts.append(v.value)
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            a, b = self.eval(node.left), self.eval(node.right)
            return a + b if isinstance(node.op, ast.Add) else a * b
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.eval(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            return list(range(*[self.eval(a) for a in node.args]))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
                and isinstance(node.func.value, ast.Constant)):
            return node.func.value.value.join(self.eval(node.args[0]))
        if isinstance(node, ast.IfExp):  # gp runs on Linux: is_linux() holds
            test = True if ast.unparse(node.test) == "is_linux()" else self.eval(node.test)
            return self.eval(node.body if test else node.orelse)
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("datetime.timedelta", "timedelta"):
            units = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}
            return {"seconds": sum(units[k.arg] * self.eval(k.value) for k in node.keywords)}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list" and not node.args:
            return []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
            return str(self.eval(node.args[0]))
        raise Unresolved(ast.unparse(node))


def _kwargs(ev, call):
    out = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        if kw.arg == "type":  # a converter: kept by name (int, positive_integer, ...)
            out["type"] = ast.unparse(kw.value)
            continue
        try:
            out[kw.arg] = ev.eval(kw.value)
        except Unresolved:
            out[kw.arg] = ast.unparse(kw.value)
    return out


def _option(names, kw, scope="", group=""):
    long_names = [n for n in names if n.startswith("--")]
    dest = kw.get("dest") or (long_names[0] if long_names else names[0]).lstrip("-").replace("-", "_")
    action = kw.get("action", "store")
    default = kw.get("default", NONE)
    if action == "store_true" and "default" not in kw:
        default = False
    if action == "store_false" and "default" not in kw:
        default = True
    choices = kw.get("choices")
    help_text = kw.get("help") or ""
    if isinstance(default, list):  # an append/extend default: shown as gp types it
        default = ",".join(str(d) for d in default)
    if isinstance(help_text, str):
        shown = "None" if default is NONE else str(default)
        help_text = help_text.replace("%(default)s", shown)
        if choices is not None:
            help_text = help_text.replace("%(choices)s", ", ".join(str(c) for c in choices))
        help_text = help_text.replace("%%", "%")
    return {
        "scope": scope,
        "group": group,
        "names": names,
        "dest": dest,
        "action": action,
        "nargs": str(kw.get("nargs", "")),
        "type": kw.get("type", ""),
        "default": "" if default is NONE else ("" if default is None else str(default)),
        "has_default": default is not NONE and default is not None,
        "const": "" if kw.get("const") is None else str(kw.get("const")),
        "choices": choices,
        "help": " ".join(str(help_text).split()),
    }


def table_from_excerpt(text):
    ev = Evaluator()
    options = []
    receivers = {}  # variable -> (subcommand, group) of the add_argument() calls made on it
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef):  # a namespace of its attributes, in order
            ns = {}
            for a in node.body:
                try:
                    ns[a.targets[0].id] = ev.eval(a.value)
                except Unresolved:
                    pass
            ev.env[node.name] = ns
            continue
        if isinstance(node, ast.Assign) and _is_call_to(node.value, "add_argument_group"):
            receivers[node.targets[0].id] = ("", ev.eval(node.value.args[0]))
            continue
        if isinstance(node, ast.Assign) and _is_call_to(node.value, "add_parser"):
            receivers[node.targets[0].id] = (ev.eval(node.value.args[0]), "")
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            try:
                ev.env[target.id] = ev.eval(node.value)
            except Unresolved:
                pass  # a constant gp need not know (only named by an unresolved expression)
            continue
        call = node.value if isinstance(node, ast.Expr) else None
        if _is_call_to(call, "add_argument"):
            names = [ev.eval(a) for a in call.args]
            if not isinstance(names[0], str) or not names[0].startswith("-"):
                continue  # a templated name: _add_profilers_arguments, expanded below
            scope, group = receivers.get(ast.unparse(call.func.value), ("", ""))
            options.append(_option(names, _kwargs(ev, call), scope, group))
        elif _is_call_to(call, "register_profiler"):
            name = ev.eval(call.args[0])
            kw = _kwargs(ev, call)
            modes = list(kw["possible_modes"]) + ["none"]  # register_profiler appends the legacy "none"
            mode_help = kw.get("profiler_mode_argument_help") or (
                f"Choose the mode for profiling {name} processes. '{kw['default_mode']}' to profile them with "
                f"the default method, or 'disabled' to disable {name}-specific profiling")
            dest = f"{name.lower()}_mode"
            options.append(_option([f"--{name.lower()}-mode"],
                                   {"dest": dest, "default": kw["default_mode"], "help": mode_help,
                                    "choices": modes}, "", name))
            options.append(_option([f"--no-{name.lower()}"],
                                   {"action": "store_const", "const": "disabled", "dest": dest,
                                    "default": True,
                                    "help": kw.get("disablement_help")
                                    or f"Disable the runtime-profiling of {name} processes"}, "", name))
            for arg in next((k.value.elts for k in call.keywords if k.arg == "profiler_arguments"), []):
                akw = _kwargs(ev, arg)
                names = [ev.eval(a) for a in arg.args] or [akw.pop("name")]
                akw.pop("name", None)
                options.append(_option(names, akw, "", name))
    return options


def _c(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(options, excerpt_text):
    header = [line for line in excerpt_text.splitlines() if line.startswith("# gProfiler ")][0]
    out = [
        "// Generated by scripts/gen-gprofiler-options.py from tests/fixtures/gprofiler/options_source.py",
        f"// ({header[2:]}). Do not edit: regenerate.",
        "// {subcommand, group, names, dest, action, nargs, type, has_default, default, const, choices, help}",
    ]
    for o in options:
        choices = "" if o["choices"] is None else ",".join(str(c) for c in o["choices"])
        fields = [o["scope"], o["group"], ",".join(o["names"]), o["dest"], o["action"], o["nargs"], o["type"]]
        out.append("{" + ", ".join(_c(f) for f in fields) + ", " + ("true" if o["has_default"] else "false")
                   + ", " + ", ".join(_c(f) for f in (o["default"], o["const"], choices)) + ",")
        out.append(" " + _c(o["help"]) + "},")
    return "\n".join(out) + "\n"


def render_safemode_causes(excerpt_text):
    """The values of gProfiler's JavaSafemodeOptions enum, one string literal a line."""
    header = [line for line in excerpt_text.splitlines() if line.startswith("# gProfiler ")][0]
    enum = next(node for node in ast.parse(excerpt_text).body
                if isinstance(node, ast.ClassDef) and node.name == "JavaSafemodeOptions")
    out = [
        "// Generated by scripts/gen-gprofiler-options.py from tests/fixtures/gprofiler/options_source.py",
        f"// ({header[2:]}): gProfiler's JavaSafemodeOptions. Do not edit: regenerate.",
    ]
    out += [_c(a.value.value) + "," for a in enum.body if isinstance(a, ast.Assign)]
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from-checkout", metavar="DIR", help="a gProfiler checkout (holding gprofiler/main.py)")
    p.add_argument("--check", action="store_true", help="exit 1 when a generated file differs")
    p.add_argument("--excerpt", default=EXCERPT, metavar="FILE", help="the excerpt (default: %(default)s)")
    p.add_argument("--table", default=TABLE, metavar="FILE", help="the table (default: %(default)s)")
    p.add_argument("--safemode-causes", default=SAFEMODE, metavar="FILE",
                   help="the Java safemode causes (default: %(default)s)")
    a = p.parse_args()
    excerpt_path, table_path = a.excerpt, a.table
    wanted = {}
    if a.from_checkout:
        if not os.path.exists(os.path.join(a.from_checkout, "gprofiler", "main.py")):
            sys.exit(f"gen-gprofiler-options.py: error: {a.from_checkout}/gprofiler/main.py not found")
        wanted[excerpt_path] = excerpt_from_checkout(a.from_checkout) + "\n"
    excerpt = wanted.get(excerpt_path) or open(excerpt_path, encoding="utf-8").read()
    wanted[table_path] = render(table_from_excerpt(excerpt), excerpt)
    wanted[a.safemode_causes] = render_safemode_causes(excerpt)
    differ = False
    for path, text in wanted.items():
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == text:
            continue
        if a.check:
            print(f"gen-gprofiler-options.py: {path} is not what the script generates: run "
                  "scripts/gen-gprofiler-options.py", file=sys.stderr)
            differ = True
        else:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
