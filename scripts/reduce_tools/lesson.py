"""lesson A B: what one step changes, the diff of two neighbouring steps' kernel files, and the lesson
budget: neighbours may differ by at most BUDGET changed code lines (comments, blank lines and the
steps' own names left out; a block of k lines replaced by m counts max(k, m)). The pair that ends in
the library step has no budget: it replaces the kernel by a library call."""

import difflib
import re
import sys

from .common import ROOT, Failure, UsageError, read_beyond, read_text, resolve_step, step_names

BUDGET = 40
COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}


def strip_comments(text):
    """C++/CUDA source without // and /* */ comments (string and character literals kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a digit separator
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def code_lines(text):
    return [line.rstrip() for line in strip_comments(text).splitlines() if line.strip()]


def kernel_file(step):
    """The step's one kernel file: its .cu file that is neither a main nor a test."""
    folder = ROOT / step
    if not folder.is_dir():
        raise Failure(f"{step}: no such folder yet")
    files = [f for f in sorted(folder.glob("*.cu")) if f.name != "main.cu" and not f.name.startswith("test_")]
    if len(files) != 1:
        raise Failure(f"{step}: expected one kernel .cu file, found {len(files)}")
    return files[0]


def neutral(lines, step):
    """The step's own names made alike in every step (namespace stepNN, kernels reduce_<name>, "NN_name")."""
    number, _, title = step.partition("_")
    subs = [
        (re.compile(rf"\bstep{number}\b"), "stepNN"),
        (re.compile(rf"\breduce_{title}"), "reduce_STEP"),
        (re.compile(rf'"{re.escape(step)}"'), '"STEP"'),
    ]
    for pattern, to in subs:
        lines = [pattern.sub(to, line) for line in lines]
    return lines


def counts(a, b):
    """(removed, added, changed) code lines between the kernel files of steps a and b."""
    la = neutral(code_lines(read_text(kernel_file(a))), a)
    lb = neutral(code_lines(read_text(kernel_file(b))), b)
    removed = added = changed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        if tag != "equal":
            removed, added, changed = removed + i2 - i1, added + j2 - j1, changed + max(i2 - i1, j2 - j1)
    return removed, added, changed


def checked_pairs(steps):
    return [(a, b) for a, b in zip(steps, steps[1:]) if b != steps[-1]]


def main(args):
    steps = step_names()
    if args.pairs:
        print("\n".join(f"{a} {b}" for a, b in checked_pairs(steps)))
        return 0
    if args.a is None or args.b is None:
        raise UsageError("lesson: give two steps (lesson 06 07), or --pairs")
    known = steps + read_beyond() if args.any else steps  # --any: the steps beyond the progression too
    a, b = resolve_step(args.a, known, "A"), resolve_step(args.b, known, "B")
    neighbours = b in steps and a in steps and steps.index(b) - steps.index(a) == 1
    if a == b or (not args.any and not neighbours):
        raise UsageError(f"{a} and {b} are not neighbours in steps.txt (--any allows any pair)")
    if args.check:
        absent = [s for s in (a, b) if not (ROOT / s).is_dir()]
        if absent:
            print(f"skipped: no folder {', '.join(absent)} yet")
            return 77
    if args.stat or args.check:
        removed, added, changed = counts(a, b)
        line = f"{a} -> {b}: {changed} changed code lines (-{removed} +{added})"
        if b == steps[-1] or not neighbours:
            print(f"{line}; no budget for this pair")
            return 0
        print(f"{line}; {'within' if changed <= BUDGET else 'OVER'} the budget of {BUDGET}")
        return 1 if args.check and changed > BUDGET else 0
    fa, fb = kernel_file(a), kernel_file(b)

    def read(f):
        return [x + "\n" for x in code_lines(read_text(f))] if args.no_comments else read_text(f).splitlines(True)

    tty = sys.stdout.isatty()
    for line in difflib.unified_diff(read(fa), read(fb), f"a/{fa.relative_to(ROOT)}", f"b/{fb.relative_to(ROOT)}"):
        line = line if line.endswith("\n") else line + "\n"
        c = "\033[1m" if line.startswith(("+++", "---")) else COLOURS.get(line[:1])
        sys.stdout.write(f"{c}{line.rstrip()}\033[0m\n" if tty and c else line)
    return 0
