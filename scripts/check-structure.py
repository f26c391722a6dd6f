#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the rules of the source tree that no compiler enforces.

  scripts/check-structure.py [--root DIR] [--only RULE,...] [--fix]

Rules (docs/architecture.md explains them):
  layering  no file of the runtime side (runtime/, examples/server/, the
            runtime's tools) includes a compiler, dialect, MLIR or LLVM
            header, and no file of dialects/ includes a compiler header.
  guards    each header's include guard is DTENSOR_<path>_H, <path> being
            the path after include/dtensor/ for public headers and the path
            from the root without lib/ for the others.
  stages    the compiler stages before code generation (Planner, Builders,
            Frontend, Autodiff, Training, Analysis, Propagation, Partition,
            Attention,
            Collectives, Reports) and the distribute pipeline (Driver/Pipelines.*,
            Driver/TargetCapabilities.*) include no dtensor/Codegen/
            header: the per-rank program they build does not depend on a
            codegen pass, only on the target's stated capabilities.
  banners   each C/C++/CUDA/TableGen file starts with a one-line banner of
            at most 80 columns ending in ===// (===* in C files) whose second
            line is the SPDX line (`// SPDX-License-Identifier: ...`); each
            Python and shell script has the SPDX line in its first 5 lines.
  debug     each file under compiler/lib that defines a pass
            (`#define GEN_PASS_DEF_...`) defines DEBUG_TYPE, so that
            -debug-only=<pass> shows its decisions; report passes
            (compiler/lib/Reports/) print their report instead.
  attrs     no compiler or tool source spells a dtensor attribute name
            that the dialect defines (a StringLiteral("dtensor.<name>") in
            dialects/DTensor/include/.../DTensor.td) as a string literal: it
            uses DTensorDialect::get<Name>AttrName().
  syspath   no Python file (under the folders above and test/) modifies
            sys.path (insert, append, extend, remove, pop, clear, an
            assignment, site.addsitedir): what a script imports comes from
            its own folder or from PYTHONPATH (<root>/python, test/lit.cfg.py).

Prints one line per problem, `path:line: rule: message`, then a count, and
exits 1 when there is a problem. --fix rewrites include guards and puts the
SPDX line in place of a banner's empty second line (no line moves, so
diagnostics' line numbers and compiler caches are unaffected); it never
changes code.
"""

import argparse
import os
import re
import subprocess
import sys

SPDX = "SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception"
C_FAMILY = (".cpp", ".h", ".c", ".cu", ".td")
SCRIPTS = (".py", ".sh")
# Folders whose files the rules cover (fixtures of the checker's own tests
# live under test/Structure/Inputs and are checked only when named as root).
SOURCE_DIRS = ("compiler", "dialects", "runtime", "tools", "examples", "fuzz",
               "test/unit", "scripts", "python")
# The runtime side: never the compiler, the dialect, MLIR or LLVM.
RUNTIME_SIDE = ("runtime/", "examples/server/", "tools/dtensor-run/",
                "tools/dtensor-bench-ceilings/")
# Target-neutral compiler code (the "stages" rule).
NEUTRAL_STAGES = ("Planner", "Builders", "Frontend", "Autodiff", "Training",
                  "Analysis",
                  "Propagation", "Partition", "Attention", "Collectives",
                  "Reports")
TARGET_NEUTRAL = tuple(
    f"compiler/{part}/{stage}/" for part in ("lib", "include/dtensor")
    for stage in NEUTRAL_STAGES) + tuple(
        f"compiler/{part}/Driver/{name}" for part in ("lib", "include/dtensor")
        for name in ("Pipelines.", "TargetCapabilities."))
# The attribute names the dialect defines (the "attrs" rule).
DIALECT_TD = "dialects/DTensor/include/dtensor/Dialect/DTensor/DTensor.td"
ATTR_NAME = re.compile(r'StringLiteral\("(dtensor\.\w+)"\)')
STRING = re.compile(r'"(dtensor\.\w+)"')
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
# The syspath rule also covers the tests' Python files (its own fixtures
# excepted, as above).
SYSPATH_DIRS = ("test",)
FIXTURES = "test/Structure/Inputs/"
SYSPATH_EDIT = re.compile(
    r"\bsys\.path\s*(\.\s*(insert|append|extend|remove|pop|clear)\s*\("
    r"|(\[[^\]]*\])?\s*[-+]?=(?!=))|\bsite\.addsitedir\s*\(")


def list_files(root, dirs=SOURCE_DIRS):
    """The files under `dirs`: git's list when root is a checkout's top,
    else a walk (a copied tree may sit in an ignored folder of one)."""
    files = []
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root,
                             capture_output=True, text=True,
                             check=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(root):
            raise OSError("not the top of a checkout")
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard",
             "--"] + list(dirs),
            cwd=root, capture_output=True, text=True, check=True).stdout
        files = [f for f in out.splitlines()
                 if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        for top in dirs:
            for folder, dirs, names in os.walk(os.path.join(root, top)):
                dirs[:] = [d for d in dirs if not d.startswith(("build", "."))]
                for name in names:
                    files.append(os.path.relpath(os.path.join(folder, name),
                                                 root))
    return sorted(files)


def compiler_include_prefixes(root):
    """dtensor/<Folder>/ and dtensor/<File>.h of compiler/include/dtensor."""
    base = os.path.join(root, "compiler", "include", "dtensor")
    if not os.path.isdir(base):
        return []
    return ["dtensor/" + entry + ("/" if os.path.isdir(
        os.path.join(base, entry)) else "") for entry in sorted(os.listdir(base))]


def check_layering(root, path, lines, problems):
    if not path.endswith(C_FAMILY):
        return
    runtime_side = path.startswith(RUNTIME_SIDE)
    dialect = path.startswith("dialects/")
    if not runtime_side and not dialect:
        return
    compiler = compiler_include_prefixes(root)
    for number, line in enumerate(lines, 1):
        match = INCLUDE.match(line)
        if not match:
            continue
        header = match.group(1)
        if any(header.startswith(prefix) for prefix in compiler):
            problems.append((path, number, "layering",
                             f"includes the compiler's {header}"))
        elif runtime_side and header.startswith(
                ("mlir/", "llvm/", "dtensor/Dialect/")):
            problems.append((path, number, "layering",
                             f"the runtime side includes {header}"))
        elif header.startswith("../") and (runtime_side or dialect):
            problems.append((path, number, "layering",
                             f"includes {header} by a relative path out of "
                             "its folder"))


PASS_DEF = re.compile(r"^\s*#\s*define\s+GEN_PASS_DEF_(\w+)")
DEBUG_TYPE = re.compile(r"^\s*#\s*define\s+DEBUG_TYPE\b")


def check_debug(path, lines, problems):
    """A pass's file under compiler/lib, outside Reports/, defines
    DEBUG_TYPE; the problem is reported at its GEN_PASS_DEF_ line."""
    if not path.startswith("compiler/lib/") or not path.endswith(C_FAMILY):
        return
    if path.startswith("compiler/lib/Reports/"):
        return
    if any(DEBUG_TYPE.match(line) for line in lines):
        return
    for number, line in enumerate(lines, 1):
        match = PASS_DEF.match(line)
        if match:
            problems.append((path, number, "debug",
                             f"defines pass {match.group(1)} but no "
                             "DEBUG_TYPE for -debug-only"))
            return


def check_stages(path, lines, problems):
    if not path.endswith(C_FAMILY) or not path.startswith(TARGET_NEUTRAL):
        return
    for number, line in enumerate(lines, 1):
        match = INCLUDE.match(line)
        if match and match.group(1).startswith("dtensor/Codegen/"):
            problems.append((path, number, "stages",
                             "target-neutral compiler code includes "
                             f"{match.group(1)}"))


def dialect_attr_names(root):
    try:
        with open(os.path.join(root, DIALECT_TD), encoding="utf-8") as handle:
            return set(ATTR_NAME.findall(handle.read()))
    except OSError:
        return set()


def check_attrs(path, lines, names, problems):
    if not path.startswith(("compiler/", "tools/")) or \
            not path.endswith((".cpp", ".h")):
        return
    for number, line in enumerate(lines, 1):
        code = line.split("//", 1)[0]
        for name in STRING.findall(code):
            if name in names:
                problems.append((path, number, "attrs",
                                 f'spells the dialect\'s attribute "{name}"; '
                                 "use DTensorDialect's name for it"))


def expected_guard(path):
    stem = path[:-len(".h")]
    if "/include/dtensor/" in stem:
        stem = stem.split("/include/dtensor/", 1)[1]
    else:
        stem = stem.replace("/lib/", "/")
    return "DTENSOR_" + re.sub(r"[^A-Za-z0-9]", "_", stem).upper() + "_H"


GUARD_IFNDEF = re.compile(r"^#ifndef\s+(\w+)\s*$")


def check_guard(path, lines, problems, fix):
    if not path.endswith(".h"):
        return None
    want = expected_guard(path)
    index = next((i for i, l in enumerate(lines) if GUARD_IFNDEF.match(l)),
                 None)
    if index is None or index + 1 >= len(lines) or not re.match(
            r"^#define\s+" + re.escape(GUARD_IFNDEF.match(lines[index])
                                       .group(1)) + r"\s*$",
            lines[index + 1]):
        problems.append((path, 1, "guards", f"no include guard (want {want})"))
        return None
    have = GUARD_IFNDEF.match(lines[index]).group(1)
    if have == want:
        return None
    if not fix:
        problems.append((path, index + 1, "guards",
                         f"include guard {have}, want {want}"))
        return None
    new = [re.sub(r"\b" + have + r"\b", want, l) if (
        l.startswith("#ifndef") or l.startswith("#define") or
        l.startswith("#endif")) else l for l in lines]
    return new


def check_banner(path, lines, problems, fix):
    if path.endswith(SCRIPTS):
        if not any(SPDX in l for l in lines[:5]):
            if not fix:
                problems.append((path, 1, "banners",
                                 "no SPDX line in its first 5 lines"))
                return None
            at = 1 if lines and lines[0].startswith("#!") else 0
            return lines[:at] + ["# " + SPDX] + lines[at:]
        return None
    if not path.endswith(C_FAMILY):
        return None
    if not lines:
        problems.append((path, 1, "banners", "empty file"))
        return None
    first = lines[0]
    c_style = first.startswith("/*===")
    if not (first.startswith("//===-") or c_style):
        problems.append((path, 1, "banners",
                         "does not start with a //===- banner line"))
        return None
    end = "===*" if c_style else "===//"
    if len(first) > 80 or not first.rstrip().endswith(end):
        problems.append((path, 1, "banners",
                         f"banner line is not one line of at most 80 columns "
                         f"ending in {end}"))
    lead = " *" if c_style else "//"
    if len(lines) > 1 and lines[1] == lead + " " + SPDX:
        return None
    if not fix:
        problems.append((path, 2, "banners",
                         "the banner's second line is not the SPDX line"))
        return None
    # The SPDX line takes the place of the banner's empty second line (or
    # of the blank line after a one-line banner), so that no line moves.
    if len(lines) > 1 and lines[1].strip() in ("", "//", "*"):
        return [first, lead + " " + SPDX] + lines[2:]
    return [first, lead + " " + SPDX] + lines[1:]


def check_syspath(path, lines, problems):
    if not path.endswith(".py"):
        return
    for number, line in enumerate(lines, 1):
        code = line.split("#", 1)[0]
        if SYSPATH_EDIT.search(code):
            problems.append((path, number, "syspath",
                             "modifies sys.path (use PYTHONPATH instead)"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--only",
                        default="layering,stages,guards,banners,debug,syspath,"
                        "attrs")
    parser.add_argument("--fix", action="store_true")
    args = parser.parse_args()
    rules = set(args.only.split(","))
    unknown = rules - {"layering", "stages", "guards", "banners", "debug",
                       "syspath", "attrs"}
    if unknown:
        parser.error("unknown rule(s): " + ", ".join(sorted(unknown)))
    problems = []
    attr_names = dialect_attr_names(args.root)
    files = list_files(args.root)
    # The tests' Python files, for the syspath rule alone.
    test_scripts = [f for f in list_files(args.root, SYSPATH_DIRS)
                    if f.endswith(".py") and not f.startswith(FIXTURES)
                    and f not in files]
    for path in test_scripts if "syspath" in rules else []:
        with open(os.path.join(args.root, path), encoding="utf-8") as handle:
            check_syspath(path, handle.read().split("\n"), problems)
    for path in files:
        full = os.path.join(args.root, path)
        try:
            with open(full, encoding="utf-8") as handle:
                text = handle.read()
        except UnicodeDecodeError:
            continue
        lines = text.split("\n")
        changed = None
        if "layering" in rules:
            check_layering(args.root, path, lines, problems)
        if "debug" in rules:
            check_debug(path, lines, problems)
        if "attrs" in rules:
            check_attrs(path, lines, attr_names, problems)
        if "stages" in rules:
            check_stages(path, lines, problems)
        if "guards" in rules:
            changed = check_guard(path, lines, problems, args.fix) or changed
        if changed:
            lines = changed
        if "banners" in rules:
            fixed = check_banner(path, lines, problems, args.fix)
            if fixed:
                lines = fixed
                changed = fixed
        if "syspath" in rules:
            check_syspath(path, lines, problems)
        if changed is not None and args.fix:
            with open(full, "w", encoding="utf-8") as handle:
                handle.write("\n".join(lines))
    for path, line, rule, message in problems:
        print(f"{path}:{line}: {rule}: {message}")
    print(f"{len(problems)} problem(s) in "
          f"{len(files) + len(test_scripts)} files")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
