"""A fuzz test of the command line: the project's own generator of bad inputs (values, options, files,
devices, FIFOs, links, a full or closed stdout) over every subcommand of scripts/suite, on a small tree
(fixture.py, its fake step executables), and over every option of the built executables (REDUCE_BIN,
default build/release/bin; skipped without them). Each case checks the exit code (2 for bad usage; a
bad file 1 or 2; a lost stdout 1), one line on stderr with no control character, no traceback and no
internal exception, no hang, and that nothing changed in the tree, the working folder, TMPDIR or the
files it was given.

Every run prints its seed: REDUCE_FUZZ_SEED=N replays it. Quick mode (CI): seed 1, 300 cases of the
suite and 200 of the executables. Long mode: REDUCE_FUZZ_CASES=2000 (1000 or more) cases of each, a new
seed each run. REDUCE_FUZZ_CASES=0 skips both."""

import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.fixture import SUITE, make_tree

REPO = SUITE.parent.parent
CASES = int(os.environ.get("REDUCE_FUZZ_CASES") or 300)
LONG = CASES >= 1000
SEED = int(os.environ.get("REDUCE_FUZZ_SEED") or (random.randrange(1 << 32) if LONG else 1))

# Bad for every text option (counts, integers, ranges, steps, names): none of them is a valid value anywhere.
TEXT = [
    "",
    " ",
    "\t",
    "x\ny",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "a\rb",
    "\x07\x08\x7f",
    "9" * 5000,
    "-1",
    "-9-9",
    "1.5",
    "1e3",
    "nan",
    "inf",
    "0x10",
    "\u0661\u0662",
    "\uff11\uff10",
    "a" * 10000,
    "-",
    "%s%n{0}",
    "x\udcffy",
    "2^99",
    "99:1",
    "10:30:1",
    "1,,2",
    "\u202e01",
    "ls;",
    "$(id)",
]
REGEX = ["(", "[", "*", "a**", "\\", "(?<", "a{99999999999}", "(?P<x>", "x\\"]  # --allow: not a regular expression
# Paths (names of what Env.paths makes, or fixed ones): never a folder to write into, never a record to read.
PATHS = [
    "fifo",
    "dangling",
    "loop",
    "to_fifo",
    "to_zero",
    "file",
    "file/child",
    "long",
    "missing/x\ny",
    "/dev/full",
    "/dev/null",
    "/dev/zero",
    "/proc/self/mem",
    "/proc/self/status",
    "/proc/1/cwd/nope",
    "",
]
UNKNOWN = ["--bogus", "-x", "---", "--=", "--n-", "-nn", "--N", "--\x1b[2J", "--" + "z" * 3000]

# The subcommands: their base command (valid, writing nothing), and what each option or positional
# takes. Kinds: text (TEXT is bad), regex (REGEX), out (a folder made for output: PATHS are usage
# errors, 2), in (a file or folder read: PATHS give 1 or 2), build (--build-dir with --no-build or
# without a build: PATHS give 2), flag. ("ref", name) is a path of the worker's Env.
B, R, OUT, EMPTY = ("ref", "build"), ("ref", "results"), ("ref", "out"), ("ref", "empty")
COMMANDS = {
    "run": (
        ["run", "--no-build", "--build-dir", B, "--n", "1K"],
        {"--n": "text", "--steps": "text", "--out": "out", "--build-dir": "build", "--no-build": "flag"},
    ),
    "lecture": (
        ["lecture", "--no-build", "--build-dir", B, "--iters", "5"],
        {"--iters": "text", "--build-dir": "build", "--no-build": "flag"},
    ),
    "sweep": (
        ["sweep", "--no-build", "--build-dir", B, "--range", "10:11"],
        {"--range": "text", "--out": "out", "--build-dir": "build", "--add": "flag", "--no-build": "flag"},
    ),
    "measure": (
        ["measure", "12", "--build-dir", B, "--iters", "5"],
        {1: "text", "--n": "text", "--iters": "text", "--only": "text", "--out": "out", "--build-dir": "in"},
    ),
    "ab": (
        ["ab", "01", "--no-build", "--build-dir", B, "--rounds", "1", "--iters", "5"],
        {
            1: "text",
            "--against": "text",
            "--n": "text",
            "--range": "text",
            "--rounds": "text",
            "--iters": "text",
            "--build-dir": "build",
            "--aa": "flag",
            "--no-build": "flag",
        },
    ),
    "compare": (
        ["compare", R + ("h200",), R + ("h200",)],
        {1: "in", 2: "in", "--json": "flag", "--across-gpus": "flag"},
    ),
    "profile": (["profile", "--build-dir", B], {"--n": "text", "--out": "out", "--build-dir": "in"}),
    "readme": (["readme", "--dry-run"], {"--check": "flag", "--dry-run": "flag"}),
    "figures": (["figures", "--only", "nope"], {"--only": "text"}),
    "lesson": (
        ["lesson", "00", "01"],
        {
            1: "text",
            2: "text",
            "--no-comments": "flag",
            "--stat": "flag",
            "--check": "flag",
            "--any": "flag",
            "--pairs": "flag",
        },
    ),
    "skips": (["skips", B], {1: "in", "--allow": "regex"}),
    "gpu": (
        ["gpu", OUT, "--build-dir", EMPTY, "--parts", "table"],
        {1: "out", "--build-dir": "out", "--parts": "text", "--sanitizer-jobs": "text"},
    ),
    "runs": (["runs", "12"], {1: "text", "--cmake": "flag"}),
}
VALID = {
    "--n": "1K",
    "--steps": "01",
    "--iters": "5",
    "--range": "10:11",
    "--rounds": "1",
    "--against": "00",
    "--only": "float",
    "--parts": "table",
    "--sanitizer-jobs": "2",
    "--allow": "x",
    "--build-dir": B,
    "--out": OUT,
}


class Env:
    """One worker's world: the tree (REDUCE_ROOT), the paths handed out, an empty working folder and TMPDIR."""

    def __init__(self, top):
        self.top = Path(top)
        self.top.mkdir(exist_ok=True)
        self.tree = make_tree(self.top / "tree")
        p = self.top / "paths"
        p.mkdir()
        os.mkfifo(p / "fifo")
        (p / "file").write_text("not a record\n")
        os.symlink(p / "nowhere", p / "dangling")
        os.symlink(p / "loop", p / "loop")
        os.symlink(p / "fifo", p / "to_fifo")
        os.symlink("/dev/zero", p / "to_zero")
        for name in ("cwd", "tmp", "empty"):
            (self.top / name).mkdir()
        self.refs = {
            "build": self.tree / "build",
            "results": self.tree / "results",
            "out": self.top / "scratch" / "out",
            "empty": self.top / "empty",
            "paths": p,
        }

    def resolve(self, token):
        if isinstance(token, tuple):
            return str(self.refs[token[1]].joinpath(*token[2:]))
        return token

    def path(self, name):
        if name == "long":
            return str(self.refs["paths"] / (("a" * 200 + "/") * 40))
        return name if name.startswith("/") or not name else str(self.refs["paths"] / name)

    def snapshot(self):
        """(path, mode, size, mtime) of everything under the tree, the paths, cwd, tmp and empty."""
        out = []
        for top in ("tree", "paths", "cwd", "tmp", "empty"):
            for folder, dirs, files in os.walk(self.top / top):
                for name in dirs + files:
                    s = os.lstat(os.path.join(folder, name))
                    out.append(
                        (
                            os.path.join(folder, name),
                            s.st_mode,
                            s.st_size if not stat.S_ISDIR(s.st_mode) else 0,
                            s.st_mtime_ns,
                        )
                    )
        return sorted(out)

    def run(self, argv, stdout):
        """(exit code, stdout, stderr) of argv run in cwd; stdout "pipe", "full" (/dev/full) or "closed"."""
        env = dict(
            os.environ,
            REDUCE_ROOT=str(self.tree),
            TMPDIR=str(self.top / "tmp"),
            REDUCE_COMMIT="abcdef123456",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.pop("CMAKE_BUILD_PARALLEL_LEVEL", None)
        if stdout == "closed":
            argv = ["sh", "-c", 'exec "$@" >&-', "sh", *argv]
        out = open("/dev/full", "w") if stdout == "full" else subprocess.PIPE if stdout == "pipe" else None
        try:
            p = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.PIPE,
                cwd=self.top / "cwd",
                env=env,
                timeout=60,
            )
            return p.returncode, (p.stdout or b"").decode(errors="replace"), p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            return None, "", "(no exit within 60 s)"
        except OSError as e:
            return None, "", f"(cannot run it: {e})"
        finally:
            if stdout == "full":
                out.close()
            shutil.rmtree(self.top / "scratch", ignore_errors=True)


def check(env, case, tool):
    """The failures of one case (empty when it passed)."""
    argv, expect, stdout, label = case
    before = env.snapshot()
    real = [env.path(t[2]) if isinstance(t, tuple) and t[1] == "p" else env.resolve(t) for t in argv]
    rc, _, err = env.run([*tool, *real], stdout)
    lines = err.splitlines()
    why = []
    if rc not in expect:
        why.append(f"exit {rc}, expected {' or '.join(map(str, sorted(expect)))}")
    prog = "suite" if tool else Path(real[0]).name
    errors = [x for x in lines if x.startswith(prog + ": ")]
    if rc != 0 and (len(lines) != 1 if expect == {2} else len(errors) != 1 or lines[-1] != errors[0]):
        why.append(f"{len(lines)} lines on stderr")  # progress lines may come before a lost stdout's one line
    if (
        "Traceback" in err
        or re.search(r"^\S+: \w*(Error|Exception|Interrupt)\b", err, re.M)
        or "terminate called" in err
    ):
        why.append("a traceback or an internal exception")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", err):
        why.append("a control character on stderr")
    if len(err) > 1000:
        why.append(f"{len(err)} characters on stderr")
    if env.snapshot() != before:
        why.append("files changed")
    if why:
        return [
            f"{label}: {'; '.join(why)}\n    argv: {[str(a)[:80] for a in real]!r} stdout {stdout}\n"
            f"    stderr: {err[:300]!r}"
        ]
    return []


def run_cases(test, cases, tool, what):
    """Runs the cases on a worker per core (each its own Env); fails with every failing case and the seed."""
    workers = max(1, min(4, os.cpu_count() or 1))
    start = time.time()
    with tempfile.TemporaryDirectory() as top:
        envs = [Env(Path(top) / f"w{k}") for k in range(workers)]

        def worker(k):
            return [f for case in cases[k::workers] for f in check(envs[k], case, tool)]

        with ThreadPoolExecutor(workers) as pool:
            failures = [f for fs in pool.map(worker, range(workers)) for f in fs]
    print(
        f"\nfuzz {what}: {len(cases)} cases, seed {SEED}, {len(failures)} failed, {time.time() - start:.0f} s "
        f"(REDUCE_FUZZ_SEED={SEED} replays)",
        file=sys.stderr,
    )
    if failures:
        test.fail(
            f"{len(failures)} of {len(cases)} cases failed (REDUCE_FUZZ_SEED={SEED}):\n" + "\n".join(failures[:50])
        )


def mutate(rng, command, base, kinds):
    """One bad case from a base command: (argv, expected exit codes, mutation, the option or positional, value)."""
    argv = list(base)
    options = [k for k in kinds if isinstance(k, str)]
    with_value = [k for k in options if kinds[k] != "flag"]
    slots = [k for k in kinds if kinds[k] != "flag"]
    m = rng.choice(
        ["value"] * 3 * bool(slots)
        + ["unknown", "twice", "stray", "dashdash"]
        + ["missing", "empty"] * bool(with_value)
        + ["abbrev"] * any(len(o) > 5 for o in options)
        + ["flag_value"] * (len(with_value) < len(options))
    )
    if m == "value":
        slot = rng.choice(slots)
        kind = kinds[slot]
        paths = [p for p in PATHS if kind != "out" or p != "missing/x\ny"]  # a folder that can be made: a valid OUT
        value = rng.choice(paths) if kind in ("out", "in", "build") else rng.choice(REGEX if kind == "regex" else TEXT)
        token = ("ref", "p", value) if kind in ("out", "in", "build") else value
        if isinstance(slot, int):
            argv[slot] = token
        elif slot in argv:
            argv[argv.index(slot) + 1] = token
        else:
            argv += [slot, token]
        return argv, {1, 2} if kind == "in" else {2}, m, slot, value
    if m == "unknown":
        value = rng.choice(UNKNOWN)
        argv.insert(rng.randrange(1, len(argv) + 1), value)
    elif m == "twice":
        value = rng.choice(options)
        argv += [value] + ([VALID[value]] if kinds[value] != "flag" else [])
        if value not in base:
            argv += [value] + ([VALID[value]] if kinds[value] != "flag" else [])
    elif m == "missing":
        value = rng.choice(with_value)
        argv.append(value)
    elif m == "abbrev":
        value = rng.choice([o for o in options if len(o) > 5])
        argv.append(value[: rng.randrange(4, len(value) - 1)])
    elif m == "empty":
        value = rng.choice(with_value)
        argv.append(value + "=")
    elif m == "flag_value":
        value = rng.choice([o for o in options if kinds[o] == "flag"])
        argv.append(value + "=" + rng.choice(["1", "", "no"]))
    elif m == "stray":
        value = rng.choice(["stray", "00", "results"])
        argv.append(value)
    else:  # after --: an option no step takes (the fake steps refuse --bogus), or a word where no command takes one
        value = "--bogus" if command == "run" else rng.choice(["--bogus", "x"])
        argv += ["--", value]
    return argv, {2}, m, None, value


def suite_cases(rng, count, calibrated):
    """The suite's cases: each subcommand's base with a lost stdout, and bad inputs drawn from rng."""
    cases = [
        (["--help"], {1}, "full", "--help > /dev/full"),
        (["--version"], {1}, "full", "--version > /dev/full"),
        ([], {2}, "pipe", "no command"),
        (["--version"], {1}, "closed", "--version >&-"),
    ]
    for command, (base, _) in COMMANDS.items():
        rc, printed = calibrated[command]
        for stdout in ("full", "closed"):
            cases.append((base, {1} if rc == 0 and printed else {rc}, stdout, f"{command} base, stdout {stdout}"))
    names = sorted(COMMANDS)
    while len(cases) < count:
        if rng.random() < 0.03:
            value = rng.choice(TEXT + UNKNOWN)
            if value.startswith("-") or value == "":
                continue  # an option before the command, or no command: other cases
            cases.append(([value], {2}, "pipe", f"command {value[:20]!r}"))
            continue
        command = names[len(cases) % len(names)] if len(cases) < 4 * len(names) else rng.choice(names)
        base, kinds = COMMANDS[command]
        argv, expect, m, slot, value = mutate(rng, command, base, kinds)
        cases.append((argv, expect, "pipe", f"{command} {m} {slot or ''} {value[:40]!r}"))
    return cases


def executables():
    """[(path, {option: (its value's name or None, the words of its help)})] of the built executables with
    a usage text."""
    where = Path(os.environ.get("REDUCE_BIN") or REPO / "build" / "release" / "bin")
    found = []
    for exe in sorted(where.iterdir()) if where.is_dir() else []:
        if not exe.is_file() or not os.access(exe, os.X_OK) or exe.name.endswith("_mpi"):  # _mpi: under mpirun only
            continue
        try:
            text = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        if "usage:" not in text or "Google Test" in text:
            continue
        blocks = re.split(r"^(?=  --)", text, flags=re.M)[1:]  # each option's lines of the help
        options = {
            m.group(1): (m.group(2), set(re.findall(r"[\w-]+", b)))
            for b in blocks
            for m in [re.match(r"  (--[a-z][a-z0-9-]*)(?: ([A-Za-z]\S*))?", b)]
        }
        found.append((exe, options))
    return found


def exe_cases(rng, count, exes):
    cases = [([str(exe), "--help"], {1}, "full", f"{exe.name} --help > /dev/full") for exe, _ in exes]
    while len(cases) < count:
        exe, options = exes[len(cases) % len(exes)] if len(cases) < 4 * len(exes) else rng.choice(exes)
        names = sorted(options)
        valued = [o for o in names if options[o][0]]
        argv, m = (
            [str(exe)],
            rng.choice(
                ["value", "value", "value", "unknown", "twice", "missing", "abbrev", "empty", "flag_value", "stray"]
            ),
        )
        expect = {2}
        if m == "value":
            o = rng.choice(valued)
            files = options[o][0] == "FILE"
            writes = "write" in o  # a regular file, /dev/null or /dev/zero is a valid place to write
            value = rng.choice(
                [p for p in PATHS if not (writes and p in ("file", "/dev/null", "/dev/zero", "to_zero"))]
                if files
                else TEXT
            )
            if value in options[o][1]:  # a value the help names (12's --pattern takes nan and inf)
                continue
            argv += [o, ("ref", "p", value) if files else value]
            expect = {1, 2} if files else {2}
        elif m == "unknown":
            value = rng.choice(UNKNOWN)
            argv.append(value)
        elif m == "twice":
            value = rng.choice([o for o in names if o != "--help"])  # --help twice still prints the help
            argv += [value, "1"] * 2 if options[value][0] else [value] * 2
        elif m == "missing":
            value = rng.choice(valued)
            argv.append(value)
        elif m == "abbrev":
            value = rng.choice([o for o in names if len(o) > 5])
            argv.append(value[: rng.randrange(4, len(value) - 1)])
        elif m == "empty":
            value = rng.choice(valued)
            argv.append(value + "=")
        elif m == "flag_value":
            value = rng.choice(names)
            if options[value][0]:
                continue
            argv.append(value + "=1")
        else:
            value = rng.choice(["stray", "1", "-"])
            argv.append(value)
        cases.append((argv, expect, "pipe", f"{exe.name} {m} {str(value)[:20]!r}"))
    return cases


class Fuzz(unittest.TestCase):
    def setUp(self):
        if CASES <= 0:
            self.skipTest("REDUCE_FUZZ_CASES=0 (the CTest test scripts.fuzz runs it)")

    def test_suite(self):
        rng = random.Random(SEED)
        calibrated = {}
        with tempfile.TemporaryDirectory() as top:  # each base's exit code and whether it prints
            env = Env(top)
            for command, (base, _) in COMMANDS.items():
                rc, out, err = env.run([sys.executable, str(SUITE), *map(env.resolve, base)], "pipe")
                self.assertIn(rc, (0, 1, 2, 77), f"{command}: {err}")
                calibrated[command] = (rc, bool(out))
        run_cases(self, suite_cases(rng, CASES, calibrated), [sys.executable, str(SUITE)], "scripts/suite")

    def test_executables(self):
        exes = executables()
        if not exes:
            self.skipTest("no built executables (REDUCE_BIN, default build/release/bin)")
        rng = random.Random(SEED + 1)
        run_cases(self, exe_cases(rng, CASES if LONG else 200, exes), [], "executables")
