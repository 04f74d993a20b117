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
from .common import (ROOT, UsageError, check_folder, parse_count, parse_int, parse_range, quote, read_beyond, resolve_step,
                     run_main, step_names)
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
            raise UsageError(f"unknown argument {quote(extra[0], 40)}" + (f" (and {len(extra) - 1} more)" if extra[1:] else ""))
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
            git = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel", "HEAD"],
                                 capture_output=True, text=True, timeout=20)
            top, commit = (git.stdout.split() + ["", ""])[:2] if git.returncode == 0 else ("", "")
        except (OSError, subprocess.TimeoutExpired):
            top, commit = "", ""
        commit = commit if top and Path(top).resolve() == here else "unknown"  # not another repository's HEAD
        print(f"suite {__version__} (commit {commit})")
        parser.exit()


def build_options(p):
    p.add_argument("--build-dir", default=str(ROOT / "build" / "release"), help="default build/release")
    p.add_argument("--no-build", action="store_true", help="use the executables as they are")


def out_option(p, what):
    p.add_argument("--out", help=f"write {what} under OUT/<gpu>/ (OUT, from the current folder; the repository's results/ is where the READMEs read)")


def parser():
    top = Parser(prog="suite", description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1])
    top.add_argument("--version", action=Version)
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser,
                             help="one of these; scripts/suite COMMAND --help gives its options")
    p = sub.add_parser("run", help="build, run every step, print the table")
    build_options(p)
    p.add_argument("--n", default="2^26", help="elements (1000, 4K, 16M, 1G, 2^k; default 2^26)")
    p.add_argument("--steps", help="comma-separated step numbers or names (default: every step)")
    out_option(p, "table.json")
    p.add_argument("extra", nargs="*", help="after --: options for every step executable (e.g. -- --pattern int)")
    p = sub.add_parser("lecture", help="every step at its demo n, each row as it finishes; writes nothing")
    build_options(p)
    p.add_argument("--iters", help="timed runs per step (default: the steps' own)")
    p = sub.add_parser("sweep", help="every step and the read ceiling at n = 2^MIN .. 2^MAX")
    build_options(p)
    p.add_argument("--range", default="10:30", help="MIN:MAX exponents (default 10:30)")
    p.add_argument("--add", action="store_true", help="keep the points of OUT's sweep.json at other sizes (a sweep in parts)")
    out_option(p, "sweep.json")
    p = sub.add_parser("measure", help="a step beyond the progression: the measure lines of its runs.txt")
    p.add_argument("step", help="a step of beyond.txt, by number or name (13, 13_segmented)")
    p.add_argument("--build-dir", default=str(ROOT / "build" / "release"), help="default build/release (never built here)")
    p.add_argument("--n", help="replaces every run's --n")
    p.add_argument("--iters", help="replaces every run's --iters")
    p.add_argument("--only", help="these runs only (NAME,NAME)")
    out_option(p, "the records")
    p = sub.add_parser("ab", help="interleaved A/B of steps against their predecessors (or --against, or --aa itself)")
    build_options(p)
    p.add_argument("steps", nargs="+", help="the B side: steps by number or name (07, 07_cooperative_grid)")
    p.add_argument("--against", help="the A side (default: each step's predecessor)")
    p.add_argument("--aa", action="store_true", help="A/A: each step against itself; prints the false-positive rate")
    p.add_argument("--n", help="one size (default: the step's demo n)")
    p.add_argument("--range", help="MIN:MAX: every 2^k in between (at least 20 points for an A/A rate)")
    p.add_argument("--rounds", default="5", help="interleaved rounds (default 5)")
    p.add_argument("--iters", default="30", help="timed runs per record (default 30)")
    p = sub.add_parser("compare", help="two measurements: ratio, 95%% interval, verdict per point")
    p.add_argument("old", help="a results folder (results/h200, or a step's folder in it) or a record file")
    p.add_argument("new", help="the same for the new measurement")
    p.add_argument("--json", action="store_true", help="the rows as JSON")
    p.add_argument("--across-gpus", action="store_true", help="compare records of different GPUs (refused without it)")
    p = sub.add_parser("profile", help="Nsight Compute: the progression, or a beyond step's profile lines")
    p.add_argument("step", nargs="?", help="a step of beyond.txt: its profile lines (default: the progression)")
    p.add_argument("--build-dir", default=str(ROOT / "build" / "release"), help="default build/release (never built here)")
    p.add_argument("--n", default="2^24", help="the progression's n (default 2^24)")
    out_option(p, "profile.csv")
    p = sub.add_parser("readme", help="write every generated block of the READMEs from results/")
    p.add_argument("--check", action="store_true", help="exit 1 where a block differs, a marker is wrong or a block is lost")
    p.add_argument("--dry-run", action="store_true", help="show the differences, write nothing")
    p = sub.add_parser("figures", help="draw docs/figures/ from results/ (matplotlib)")
    p.add_argument("--only", help="these figures only (gain_07_cooperative_grid,sweep_h200)")
    p = sub.add_parser("lesson", help="the diff of two neighbouring steps' kernel files")
    p.add_argument("a", nargs="?", help="the earlier step, by number or name (06)")
    p.add_argument("b", nargs="?", help="the later step (07)")
    p.add_argument("--no-comments", action="store_true", help="code only")
    p.add_argument("--stat", action="store_true", help="the count of changed code lines against the budget")
    p.add_argument("--check", action="store_true", help="exit 1 over the budget, 77 while a folder is missing (CTest)")
    p.add_argument("--any", action="store_true", help="allow steps that are not neighbours")
    p.add_argument("--pairs", action="store_true", help="the pairs with a budget, one per line")
    p = sub.add_parser("skips", help="why tests were skipped, one line per reason")
    p.add_argument("where", nargs="?", help="a build folder (default build/release) or a JUnit file")
    p.add_argument("--allow", help="exit 1 when a reason does not match this regular expression")
    p = sub.add_parser("gpu", help="a GPU machine's whole run: build sm_90, tests, compute-sanitizer, records, logs")
    p.add_argument("out", help="a folder for the build, results/, logs/ and summary.txt (made once a GPU is seen)")
    p.add_argument("--build-dir", help="default OUT/build")
    p.add_argument("--parts", help=f"comma-separated, of {', '.join(gpu.PARTS)} (default all but ab)")
    p.add_argument("--sanitizer-jobs", default="4", help="compute-sanitizer runs at a time (default 4)")
    p = sub.add_parser("runs", help="a step's run list, expanded")
    p.add_argument("step", help="a step of beyond.txt, by number or name")
    p.add_argument("--cmake", action="store_true", help="the smoke and cli lines as CMake reads them")
    return top


def checked(args):
    """Every value checked before anything runs; returns the function to call."""
    c = args.command
    if c is None:
        raise UsageError("give a command (scripts/suite --help lists them)")
    for dest, value in vars(args).items():  # an empty value is an error, never "absent"
        if dest != "extra" and any(isinstance(v, str) and not v.strip() for v in (value if isinstance(value, list) else [value])):
            positional = dest in ("step", "old", "new", "a", "b", "where") or (c, dest) in (("gpu", "out"), ("ab", "steps"))
            raise UsageError(f"{dest.upper() if positional else '--' + dest.replace('_', '-')}: empty")
    steps = step_names()
    if c in ("run", "lecture", "sweep", "ab") and not args.no_build:
        check_folder(args.build_dir, "--build-dir")
    if getattr(args, "out", None) is not None:  # every output checked before anything is built or measured
        check_folder(args.out, "OUT" if c == "gpu" else "--out")
    if c == "run":
        args.n = parse_count(args.n)
        if args.steps is not None:
            chosen = [resolve_step(s, steps, "--steps") for s in args.steps.split(",")]
            if len(set(chosen)) != len(chosen):
                raise UsageError("--steps: a step given twice")
            args.steps = [s for s in steps if s in chosen]
            if args.out is not None and args.steps != steps:
                raise UsageError("--out writes the whole table: leave out --steps")
        return bench.run
    if c == "lecture":
        args.iters = parse_int(args.iters, "--iters", 1, 100000) if args.iters is not None else None
        return bench.lecture
    if c == "sweep":
        args.lo, args.hi = parse_range(args.range, "--range")
        return bench.sweep
    if c == "measure":
        args.step = resolve_step(args.step, read_beyond(), "STEP")
        args.n = parse_count(args.n) if args.n is not None else None
        args.iters = parse_int(args.iters, "--iters", 1, 100000) if args.iters is not None else None
        return bench.measure
    if c == "ab":
        args.steps = [resolve_step(s, steps) for s in args.steps]
        args.against = resolve_step(args.against, steps, "--against") if args.against is not None else None
        if args.aa and args.against:
            raise UsageError("--aa and --against exclude each other")
        if not args.aa and not args.against and steps[0] in args.steps:
            raise UsageError(f"{steps[0]} is the first step, with none before it: give --against")
        if args.n is not None and args.range is not None:
            raise UsageError("--n and --range exclude each other")
        args.sizes = [parse_count(args.n)] if args.n is not None else None
        if args.range is not None:
            lo, hi = parse_range(args.range, "--range")
            args.sizes = [1 << k for k in range(lo, hi + 1)]
        args.rounds = parse_int(args.rounds, "--rounds", 1, 100)
        args.iters = parse_int(args.iters, "--iters", 5, 100000)
        return bench.ab
    if c == "profile":
        args.step = resolve_step(args.step, read_beyond(), "STEP") if args.step is not None else None
        args.n = parse_count(args.n)
        return profile.main
    if c == "gpu":
        args.sanitizer_jobs = parse_int(args.sanitizer_jobs, "--sanitizer-jobs", 1, 64)
        if args.build_dir is not None:
            check_folder(args.build_dir, "--build-dir")
        return gpu.main
    if c == "runs":
        args.step = resolve_step(args.step, read_beyond(), "STEP")
        return runs
    return {"compare": compare.main, "readme": readme.main, "figures": figures.main, "lesson": lesson.main,
            "skips": skips.main}[c]


def runs(args):
    plan = RunList(args.step)
    if not args.cmake:
        print(f"# {args.step}/runs.txt, {len(plan.runs)} runs: KIND NAME | FIELDS | ARGUMENTS")
    print("\n".join(plan.cmake_lines() if args.cmake else
                    (" | ".join([r.kind if r.kind == "sanitize" else r.kind + " " + r.name, *r.fields, " ".join(r.args)])
                     for r in plan.runs)))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv

    def go(argv):
        own, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
        args = parser().parse_args(own)
        if extra and args.command != "run":
            raise UsageError("only run passes options after -- to the steps")
        if args.command == "run":
            if args.extra:  # a stray word before --, not an option for the steps
                raise UsageError(f"run: unexpected argument {quote(args.extra[0], 40)} (options for the steps go after --)")
            args.extra = extra
        return checked(args)(args)
    return run_main("suite", go, argv)
