"""scripts/suite: the suite's one command.

    scripts/suite run                     build (Release), run every step, print the speedup table
    scripts/suite lecture                 every step at the n where its lesson shows, row by row
    scripts/suite lesson 06 07            what a step changes (the diff of two kernel files)
    scripts/suite sweep --out results     every step at n = 2^10 .. 2^30 (records for the figures)
    scripts/suite measure 13 --out results   a step beyond the progression: its runs.txt measure lines
    scripts/suite ab 07                   07 against 06 at 07's demo n, interleaved rounds; --aa: A/A
    scripts/suite compare OLD NEW         two measurements, each point's ratio, interval and verdict
    scripts/suite profile [STEP]          Nsight Compute counters
    scripts/suite readme [--check]        write (check) every generated block of the READMEs
    scripts/suite figures                 docs/figures/ from the records
    scripts/suite skips [BUILD]           why tests were skipped
    scripts/suite gpu OUT                 a GPU machine's whole run: build, tests, sanitizers, records
    scripts/suite runs STEP [--cmake]     a step's run list, expanded

Exit codes: 0 done, 1 a failure or a wrong result, 2 bad usage (one line), 77 no usable GPU.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

from . import __version__, bench, compare, figures, gpu, lesson, profile, readme, skips
from .common import (
    ROOT,
    UsageError,
    check_folder,
    parse_count,
    parse_int,
    parse_range,
    quote,
    read_beyond,
    resolve_step,
    run_main,
    step_names,
)
from .runlist import RunList


class Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line (exit 2), takes options by their full names only
    and refuses an option given twice."""

    def __init__(self, *a, **kw):
        super().__init__(*a, allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter, **kw)

    def error(self, message):  # argparse's own messages: a value quoted in them is cut to 40 characters
        raise UsageError(re.sub(r"'([^']{40})[^']+'", r"'\1...'", message))

    def parse_args(self, args=None, namespace=None):
        args, extra = self.parse_known_args(args, namespace)
        if extra:
            raise UsageError(
                f"unknown argument {quote(extra[0], 40)}" + (f" (and {len(extra) - 1} more)" if extra[1:] else "")
            )
        return args

    def parse_known_args(self, args=None, namespace=None):
        seen = set()
        for a in args or []:
            if a == "--":
                break
            name = a.split("=", 1)[0]
            if name.startswith("--") and name in self._option_string_actions:
                if name in seen:
                    raise UsageError(f"option {name} given twice")
                seen.add(name)
        return super().parse_known_args(args, namespace)


class Version(argparse.Action):
    """--version: the suite's version (CMakeLists.txt) and the full commit of this checkout."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, help="print the suite's version and git commit, then exit")

    def __call__(self, parser, *args):
        here = Path(__file__).resolve().parent.parent.parent
        try:
            git = subprocess.run(
                ["git", "-C", str(here), "rev-parse", "--show-toplevel", "HEAD"],
                capture_output=True,
                text=True,
                timeout=20,
            )
            top, commit = (git.stdout.split() + ["", ""])[:2] if git.returncode == 0 else ("", "")
        except (OSError, subprocess.TimeoutExpired):
            top, commit = "", ""
        commit = commit if top and Path(top).resolve() == here else "unknown"  # not another repository's HEAD
        print(f"suite {__version__} (commit {commit})")
        parser.exit()


# --- each option declared once: its name, its help and how its text becomes a value ---------------
# A kind is kind(text, NAME) -> value, raising UsageError that names the option; blank text is refused
# before it ("NAME: empty": an empty value is an error, never "absent"). argparse calls it on the text
# given and on a text default, so what a command receives is already checked and typed.


def integer(lo, hi):
    return lambda text, name: parse_int(text, name, lo, hi)


def powers(text, name):  # MIN:MAX as the sizes 2^MIN .. 2^MAX
    lo, hi = parse_range(text, name)
    return [1 << k for k in range(lo, hi + 1)]


def one_size(text, name):
    return [parse_count(text, name)]


def step_of(read):
    return lambda text, name: resolve_step(text, read(), name)


def steps_in_order(text, name):  # a comma-separated choice of the progression, in teaching order
    steps = step_names()
    chosen = [resolve_step(s, steps, name) for s in text.split(",")]
    if len(set(chosen)) != len(chosen):
        raise UsageError(f"{name}: a step given twice")
    return [s for s in steps if s in chosen]


def folder(text, name):
    check_folder(text, name)
    return text


def parts(text, name):
    chosen = text.split(",")
    bad = [p for p in chosen if p not in gpu.PARTS]
    if bad:
        raise UsageError(f"{name}: unknown part {quote(bad[0], 40)} (parts: {', '.join(gpu.PARTS)})")
    return chosen


def regex(text, name):
    try:
        return re.compile(text)
    except (re.error, OverflowError, RecursionError, ValueError) as e:  # a{99999999999} overflows
        raise UsageError(f"{name}: {quote(text, 40)} is not a regular expression ({e})") from None


def add(p, flag, kind=lambda value, name: value, **kw):
    """One option or positional that takes a value: kind parses its text (flags: flag below)."""
    name = flag if flag.startswith("-") else flag.upper()

    def typed(value):
        if not value.strip():
            raise UsageError(f"{name}: empty")
        return kind(value, name)

    p.add_argument(flag, type=typed, **kw)


def flag(p, name, help):
    p.add_argument(name, action="store_true", help=help)


BUILD = str(ROOT / "build" / "release")
OUT_HELP = (
    "write {} under OUT/<gpu>/ (OUT, from the current folder; the repository's results/ is where the READMEs read)"
)


def build_options(p):
    add(p, "--build-dir", default=BUILD, help="default build/release")
    flag(p, "--no-build", "use the executables as they are")


def parser():
    top = Parser(prog="suite", description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1])
    top.add_argument("--version", action=Version)
    sub = top.add_subparsers(
        dest="command",
        metavar="COMMAND",
        parser_class=Parser,
        help="one of these; scripts/suite COMMAND --help gives its options",
    )

    def command(name, call, help):
        p = sub.add_parser(name, help=help)
        p.set_defaults(call=call)
        return p

    p = command("run", bench.run, "build, run every step, print the table")
    build_options(p)
    add(p, "--n", parse_count, default="2^26", help="elements (1000, 4K, 16M, 1G, 2^k; default 2^26)")
    add(p, "--steps", steps_in_order, help="comma-separated step numbers or names (default: every step)")
    add(p, "--out", folder, help=OUT_HELP.format("table.json"))
    p.add_argument("extra", nargs="*", help="after --: options for every step executable (e.g. -- --pattern int)")
    p = command("lecture", bench.lecture, "every step at its demo n, each row as it finishes; writes nothing")
    build_options(p)
    add(p, "--iters", integer(1, 100000), help="timed runs per step (default: the steps' own)")
    p = command("sweep", bench.sweep, "every step and the read ceiling at n = 2^MIN .. 2^MAX")
    build_options(p)
    add(p, "--range", parse_range, default="10:30", help="MIN:MAX exponents (default 10:30)")
    flag(p, "--add", "keep the points of OUT's sweep.json at other sizes (a sweep in parts)")
    add(p, "--out", folder, help=OUT_HELP.format("sweep.json"))
    p = command("measure", bench.measure, "a step beyond the progression: the measure lines of its runs.txt")
    add(p, "step", step_of(read_beyond), help="a step of beyond.txt, by number or name (13, 13_segmented)")
    add(p, "--build-dir", default=BUILD, help="default build/release (never built here)")
    add(p, "--n", parse_count, help="replaces every run's --n")
    add(p, "--iters", integer(1, 100000), help="replaces every run's --iters")
    add(p, "--only", help="these runs only (NAME,NAME)")
    add(p, "--out", folder, help=OUT_HELP.format("the records"))
    p = command("ab", bench.ab, "interleaved A/B of steps against their predecessors (or --against, or --aa itself)")
    build_options(p)
    add(
        p, "steps", step_of(step_names), nargs="+", help="the B side: steps by number or name (07, 07_cooperative_grid)"
    )
    side = p.add_mutually_exclusive_group()
    add(side, "--against", step_of(step_names), help="the A side (default: each step's predecessor)")
    flag(side, "--aa", "A/A: each step against itself; prints the false-positive rate")
    size = p.add_mutually_exclusive_group()
    add(size, "--n", one_size, dest="sizes", metavar="N", help="one size (default: the step's demo n)")
    add(
        size,
        "--range",
        powers,
        dest="sizes",
        metavar="RANGE",
        help="MIN:MAX: every 2^k in between (at least 20 points for an A/A rate)",
    )
    add(p, "--rounds", integer(1, 100), default="5", help="interleaved rounds (default 5)")
    add(p, "--iters", integer(5, 100000), default="30", help="timed runs per record (default 30)")
    add(p, "--out", folder, help=OUT_HELP.format("ab.json (the gains, merged with the pairs and sizes there)"))
    p = command("compare", compare.main, "two measurements: ratio, 95%% interval, verdict per point")
    add(p, "old", help="a results folder (results/h200, or a step's folder in it) or a record file")
    add(p, "new", help="the same for the new measurement")
    flag(p, "--json", "the rows as JSON")
    flag(p, "--across-gpus", "compare records of different GPUs (refused without it)")
    p = command("profile", profile.main, "Nsight Compute: the progression, or a beyond step's profile lines")
    add(
        p,
        "step",
        step_of(read_beyond),
        nargs="?",
        help="a step of beyond.txt: its profile lines (default: the progression)",
    )
    add(p, "--build-dir", default=BUILD, help="default build/release (never built here)")
    add(p, "--n", parse_count, default="2^24", help="the progression's n (default 2^24)")
    add(p, "--out", folder, help=OUT_HELP.format("profile.csv"))
    p = command("readme", readme.main, "write every generated block of the READMEs from results/")
    flag(p, "--check", "exit 1 where a block differs, a marker is wrong or a block is lost")
    flag(p, "--dry-run", "show the differences, write nothing")
    p = command("figures", figures.main, "draw docs/figures/ from results/ (matplotlib)")
    add(p, "--only", help="these figures only (gain_07_cooperative_grid,sweep_h200)")
    p = command("lesson", lesson.main, "the diff of two neighbouring steps' kernel files")
    add(p, "a", nargs="?", help="the earlier step, by number or name (06)")
    add(p, "b", nargs="?", help="the later step (07)")
    flag(p, "--no-comments", "code only")
    flag(p, "--stat", "the count of changed code lines against the budget")
    flag(p, "--check", "exit 1 over the budget, 77 while a folder is missing (CTest)")
    flag(p, "--any", "allow steps that are not neighbours")
    flag(p, "--pairs", "the pairs with a budget, one per line")
    p = command("skips", skips.main, "why tests were skipped, one line per reason")
    add(p, "where", nargs="?", help="a build folder (default build/release) or a JUnit file")
    add(p, "--allow", regex, help="exit 1 when a reason does not match this regular expression")
    p = command("gpu", gpu.main, "a GPU machine's whole run: build sm_90, tests, compute-sanitizer, records, logs")
    add(p, "out", folder, help="a folder for the build, results/, logs/ and summary.txt (made once a GPU is seen)")
    add(p, "--build-dir", folder, help="default OUT/build")
    add(p, "--parts", parts, help=f"comma-separated, of {', '.join(gpu.PARTS)} (default all but ab)")
    add(p, "--sanitizer-jobs", integer(1, 64), default="4", help="compute-sanitizer runs at a time (default 4)")
    p = command("runs", runs, "a step's run list, expanded")
    add(p, "step", step_of(read_beyond), help="a step of beyond.txt, by number or name")
    flag(p, "--cmake", "the smoke and cli lines as CMake reads them")
    return top


def runs(args):
    plan = RunList(args.step)
    if not args.cmake:
        print(f"# {args.step}/runs.txt, {len(plan.runs)} runs: KIND NAME | FIELDS | ARGUMENTS")
    print(
        "\n".join(
            plan.cmake_lines()
            if args.cmake
            else (
                " | ".join([r.kind if r.kind == "sanitize" else r.kind + " " + r.name, *r.fields, " ".join(r.args)])
                for r in plan.runs
            )
        )
    )
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv

    def go(argv):
        own, extra = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
        args = parser().parse_args(own)
        if extra and args.command != "run":
            raise UsageError("only run passes options after -- to the steps")
        if args.command == "run":
            if args.extra:  # a stray word before --, not an option for the steps
                raise UsageError(
                    f"run: unexpected argument {quote(args.extra[0], 40)} (options for the steps go after --)"
                )
            args.extra = extra
        if args.command is None:
            raise UsageError("give a command (scripts/suite --help lists them)")
        return args.call(args)

    return run_main("suite", go, argv)
