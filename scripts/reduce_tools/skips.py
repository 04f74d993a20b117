"""skips [BUILD | FILE.xml] [--allow REGEX]: why tests were skipped, one line per reason with its count
and an example, from the JUnit file ctest wrote (Testing/junit.xml; the test preset writes it), else
from Testing/Temporary/LastTest.log (which logs a test that exits 77 as passed, so those are missing).
The grouped GPU tests (gpu.all, smoke.all) print "skipped N: REASON" per reason; those count case by case.
--allow: exit 1 when a skip's reason does not match REGEX (the GPU session allows "needs N GPUs")."""

import os
import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

from .common import ROOT, Failure, UsageError, one_line, progress, quote, read_bytes

MAX_LOG = 512 << 20  # ctest's JUnit file and LastTest.log hold every test's output
JUNIT = Path("Testing") / "junit.xml"
LAST_TEST = Path("Testing") / "Temporary" / "LastTest.log"


def strip_program(line):
    return re.sub(r"^[0-9]{2}_\w+: ", "", line)


def reasons(output, fallback):
    """[(count, reason)] of one skipped test."""
    groups = [
        (int(m.group(1)), strip_program(m.group(2)))
        for m in (re.match(r"^skipped ([0-9]+): (.*)$", line.strip()) for line in output.splitlines())
        if m
    ]
    if groups:
        return groups
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines):
            return [(1, strip_program(lines[i + 1]))]
        m = re.search(r"\.\.\. skipped '(.*)'$", line)
        if m:
            return [(1, m.group(1))]
    last = next((x for x in reversed(lines) if not x.startswith(("[", "<end"))), fallback)
    return [(1, strip_program(last))]


def from_junit(path):
    try:
        root = ET.fromstring(read_bytes(path, MAX_LOG))
    except ET.ParseError as e:
        raise Failure(f"{quote(path)}: not a JUnit file ({e})") from None
    cases = list(root.iter("testcase"))
    skipped = [c for c in cases if c.find("skipped") is not None]
    return len(cases), [
        (c.get("name", "?"), reasons(c.findtext("system-out") or "", c.find("skipped").get("message", "")))
        for c in skipped
    ]


def from_last_test(path):
    text = read_bytes(path, MAX_LOG).decode(errors="replace")
    total, skipped = 0, []
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", text):
        m = re.match(r"\d+/\d+ Testing: (.*)", block)
        if m:
            total += 1
            if "Skip regular expression found" in block:
                out = block.split("Output:", 1)[-1].split("<end of output>", 1)[0]
                skipped.append((m.group(1), reasons(out, "skip expression matched")))
    return total, skipped


def main(args):
    allow = args.allow  # a compiled regular expression, or None
    where = Path(args.where if args.where is not None else ROOT / "build" / "release")
    try:
        where.stat()
    except FileNotFoundError:
        pass  # said below
    except OSError as e:  # a name too long, a folder we may not enter, a link loop
        raise UsageError(f"{quote(where, 60)}: {e.strerror or e}") from None
    if where.is_dir():
        source, read = (
            (where / JUNIT, from_junit) if os.path.lexists(where / JUNIT) else (where / LAST_TEST, from_last_test)
        )
        if not os.path.lexists(source):
            raise Failure(f"no record of a test run in {quote(where)} (run ctest there first)")
    elif os.path.lexists(where):
        source, read = where, from_junit  # a FIFO or a device is refused by the read
    else:
        raise UsageError(f"no such build folder or file: {quote(where)}")
    total, skipped = read(source)
    if not total:
        raise Failure(f"{quote(source)}: no test recorded there")
    counts, examples = Counter(), defaultdict(list)
    for name, found in skipped:
        for count, r in found:
            counts[r] += count
            examples[r].append(name)
    print(f"{len(skipped)} of {total} tests skipped" + (", for these reasons:" if counts else ""))
    for r, count in counts.most_common():
        more = f", ... {len(examples[r]) - 1} more" if len(examples[r]) > 1 else ""
        print(one_line(f"  {count:4d}  {r}  (e.g. {examples[r][0]}{more})"))
    if allow is not None:
        refused = [name for name, found in skipped if any(not allow.search(r) for _, r in found)]
        if refused:
            progress(f"skips: {len(refused)} skips not allowed by --allow (e.g. {quote(refused[0])})")
            return 1
    return 0
