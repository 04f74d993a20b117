"""Every script on bad input (CTest: scripts.bad_input; or python3 -m unittest -v test_scripts).

Each case must end with its exit code (2 bad usage, 1 failure, 77 no GPU), say why in one line on
stderr, never print a traceback, and leave committed data alone. No GPU is needed: fake step
executables replay a committed record (results/h100/progression/table.json), or exit 77 as on a machine
without a GPU; a fake ncu stands in for Nsight Compute.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import suite
from test_suite import make_tmp

SCRIPTS = Path(__file__).resolve().parent
ROOT = suite.ROOT
STEPS = suite.read_steps()
H100 = suite.RESULTS / "h100" / "progression"
SWEEP = suite.RESULTS / "h200" / "progression" / "sweep.csv"

FAKE_EXE = r'''#!{python}
"""A fake step executable: checks its options as the real ones do, then replays a committed record.
FAKE_GPU=none: exit 77 as without a GPU. FAKE_FAIL=step,...: those steps fail with no record.
FAKE_REFUSE=text: refuse the usage (exit 2) with that text.
FAKE_MEMORY=bytes: the device memory it reports."""
import json, os, sys
sys.path.insert(0, {scripts!r})
import suite
name, args, opts, i = os.path.basename(sys.argv[0]), sys.argv[1:], {{}}, 0
known = {{"--n", "--iters", "--warmup", "--block", "--seed", "--pattern", "--format", "--device", "--cpu-runs"}}
while i < len(args):
    key, eq, value = args[i].partition("=")
    if key in ("--help", "-h"):
        print("usage: " + name); sys.exit(0)
    if key not in known:
        print(f"{{name}}: unknown option '{{key}}' (see --help)", file=sys.stderr); sys.exit(2)
    if not eq:
        if i + 1 >= len(args):
            print(f"{{name}}: option {{key}} needs a value", file=sys.stderr); sys.exit(2)
        i += 1
        value = args[i]
    if key in opts:
        print(f"{{name}}: option {{key}} given twice", file=sys.stderr); sys.exit(2)
    opts[key] = value
    i += 1
try:
    n = suite.parse_count(opts.get("--n", "2^26"))
except suite.UsageError as e:
    print(f"{{name}}: {{e}}", file=sys.stderr); sys.exit(2)
if opts.get("--pattern", "uniform") not in ("constant", "int", "uniform", "mixed"):
    print(f"{{name}}: invalid value for --pattern", file=sys.stderr); sys.exit(2)
if os.environ.get("FAKE_REFUSE"):
    print(f"{{name}}: {{os.environ['FAKE_REFUSE']}}", file=sys.stderr); sys.exit(2)
if os.environ.get("FAKE_GPU") == "none":
    print(f"{{name}}: no usable CUDA device: no CUDA-capable device is detected", file=sys.stderr); sys.exit(77)
if name in os.environ.get("FAKE_FAIL", "").split(","):
    print(f"{{name}}: CUDA error: an illegal memory access was encountered", file=sys.stderr); sys.exit(1)
r = json.load(open({template!r}))["records"][0]
ms = max(n, 1) * 4 / 3e12 * 1e3 * (1.0 + int(name[:2]) / 10 if name[:2].isdigit() else 1.0)
r.update(step=name, lesson="fake " + name, n=n, median_ms=ms, gbps=n * 4 / ms / 1e6, pct_peak=10.0,
         memory_bytes=int(os.environ.get("FAKE_MEMORY", r["memory_bytes"])), grid=132, launches=1, per_thread=8.0,
         cpu_parallel_ms=r["cpu_ms"] / 20, cpu_threads=16, speedup_vs_cpu_parallel=1.0)
if name == "read_ceiling":
    r = {{"tool": "read_ceiling", "device": r["device"], "n": n, "bytes": 4 * n, "median_ms": ms * 0.9,
         "min_ms": ms * 0.9, "max_ms": ms, "gbps": r["gbps"] / 0.9, "pct_peak": 11.0, "peak_gbps": 3352.32,
         "iters": 5}}
print(json.dumps(r))
'''

FAKE_NCU = r'''#!{python}
"""A fake ncu: FAKE_NCU=fail prints an error and exits 1, =empty prints nothing; else one CSV row."""
import os, sys
mode = os.environ.get("FAKE_NCU", "")
if mode == "fail":
    print("==ERROR== the profiler could not reach the device (fake)", file=sys.stderr); sys.exit(1)
if mode == "empty":
    sys.exit(0)
print('"ID","Kernel Name","Grid Size","Block Size","Metric Name","Metric Value"')
print('"0","reduce_fake(const float *)","(1, 1, 1)","(256, 1, 1)","gpu__time_duration.sum","1,000"')
'''


def write_exe(path, text):
    path.write_text(text)
    path.chmod(0o755)


def make_unwritable(case, path):
    """path read-only for the rest of the test; for root, which writes read-only files, immutable
    (chattr +i); the test skips where neither is possible."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        case.addCleanup(path.chmod, 0o644)
        return
    chattr = shutil.which("chattr")
    if not chattr or subprocess.run([chattr, "+i", path], capture_output=True).returncode != 0:
        case.skipTest("running as root where chattr +i is not allowed: no file can be made unwritable")
    case.addCleanup(subprocess.run, [chattr, "-i", path], capture_output=True)


# The environment variables the scripts read as settings: a test sets the ones it means.
SCRIPT_SETTINGS = ("FAKE_GPU", "PARTS", "SWEEP_RANGE", "DEADLINE", "JOBS", "TEST_JOBS", "TESTS_REGEX",
                   "TESTS_EXCLUDE", "SANITIZER_JOBS", "CHECKS", "PERF_SETS", "BEYOND", "LAUNCHES", "LOG_DIR",
                   "AB_VARIANTS", "AB_STEP", "AB_ROUNDS", "AB_ITERS", "AB_ONLY", "GPU_NAME")


class ScriptCase(unittest.TestCase):
    """Runs scripts and checks the exit code, the one line, and that there is no traceback."""

    def tmp(self):
        return make_tmp(self)

    def run_script(self, cmd, code, env=None, one_line=True, contains=None, check_traceback=True):
        full_env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        for name in SCRIPT_SETTINGS:  # a caller's own settings (gpu_session.sh exports PARTS) are not the test's
            full_env.pop(name, None)
        full_env.update(env or {})
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=full_env, timeout=120,
                              stdin=subprocess.DEVNULL)
        what = f"{' '.join(map(str, cmd))}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
        if check_traceback:
            self.assertNotIn("Traceback", proc.stdout + proc.stderr, what)
        self.assertEqual(proc.returncode, code, what)
        if code != 0 and one_line:
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, what)
        if contains:
            self.assertIn(contains, proc.stdout + proc.stderr, what)
        return proc

    def fake_build(self, with_ceiling=True, steps=STEPS):
        build = self.tmp()
        (build / "bin").mkdir()
        text = FAKE_EXE.format(python=sys.executable, scripts=str(SCRIPTS), template=str(H100 / "table.json"))
        for step in steps + ([suite.CEILING_TOOL] if with_ceiling else []):
            write_exe(build / "bin" / step, text)
        return build

    def tool_path(self, *extra_tools, without=()):
        """A PATH with only the tools the shell scripts need (so ncu, nvidia-smi, cmake can be absent).

        python3 is the interpreter running these tests, never what PATH calls python3: that can be a
        launcher (a pyenv shim, a wrapper script) that needs tools of its own which this PATH leaves
        out. Each other tool is linked by its resolved path, so a link to a link still works here."""
        folder = self.tmp()
        tools = ["bash", "head", "tail", "grep", "sed", "wc", "cat", "mktemp", "rm", "cp", "mkdir", "dirname",
                 "basename", "tr", "env", "tar", "gzip", "nproc", "sort", "ls", "mv", *extra_tools]
        if "python3" not in without:
            (folder / "python3").symlink_to(sys.executable)
        for tool in tools:
            found = shutil.which(tool)
            if found and tool not in without:
                (folder / tool).symlink_to(os.path.realpath(found))
        return str(folder)


RUN_ALL = [sys.executable, SCRIPTS / "run_all"]
PLOT = [sys.executable, SCRIPTS / "plot_sweep.py"]
UPDATE = [sys.executable, SCRIPTS / "update_readme"]
SHOW = [sys.executable, SCRIPTS / "show_lesson"]


class RunAll(ScriptCase):
    def run_all(self, build, *args, code, env=None, **kw):
        return self.run_script([*RUN_ALL, "--no-build", "--build-dir", build, *args], code, env, **kw)

    def test_bad_usage_before_the_gpu_check(self):
        build = self.fake_build()
        nogpu = {"FAKE_GPU": "none"}
        for args in (["--n", "abc"], ["--n", "2^37"], ["--n", "-5"], ["--steps", "99"], ["--steps", "07,7"],
                     ["--sweep-range", "30:10"], ["--sweep-range", "x"], ["--bogus"],
                     ["--", "--n", "5"], ["--", "--n=5"], ["--", "--format", "text"], ["--", "--help"],
                     ["--sweep", "--", "--iters", "5"], ["--sweep", "--", "--warmup", "1"],
                     ["--", "--bogus", "1"], ["--", "--pattern", "nonsense"], ["--steps", ""], ["--steps", "01,"],
                     ["--steps", " "], ["--", "--iters", "0"], ["--", "--block=100"], ["--", "x"], ["--", "--seed"]):
            with self.subTest(args=args):
                self.run_all(build, *args, code=2, env=nogpu)

    def test_n_is_checked_before_building(self):
        # Without --no-build, a bad --n must not start cmake (none on this PATH: that would be exit 1).
        self.run_script([*RUN_ALL, "--n", "abc", "--build-dir", self.tmp()], 2, {"PATH": self.tool_path()})

    def test_passthrough_and_steps_are_checked_before_building(self):
        # No cmake on this PATH: had run_all started to build, it would exit 1 ("cmake is not on PATH").
        path = {"PATH": self.tool_path(without=("cmake",))}
        for args in (["--", "--bogus"], ["--", "--n=abc"], ["--steps", ""], ["--build-dir", "/dev/null/x"]):
            with self.subTest(args=args):
                build = [] if "--build-dir" in args else ["--build-dir", self.tmp()]
                proc = self.run_script([*RUN_ALL, *build, *args], 2, path)
                self.assertNotIn("cmake", proc.stderr)

    def test_passthrough_timing_options_reach_the_steps_once(self):
        # The probe sets --iters, --warmup and --cpu-runs itself; the executables refuse an option twice.
        build = self.fake_build()
        self.run_all(build, "--steps", "01", "--out", build / "out", "--", "--iters", "7", "--warmup=2", code=0,
                     one_line=False)
        self.run_all(build, "--", "--iters", "7", "--iters", "8", code=2, contains="given twice")

    def test_a_refusal_names_the_step_once(self):
        proc = self.run_all(self.fake_build(), code=2, env={"FAKE_REFUSE": "invalid value 'x' for --seed"})
        self.assertEqual(proc.stderr.count(STEPS[0]), 1, proc.stderr)

    def test_cmake_not_on_path(self):
        self.run_script([*RUN_ALL, "--build-dir", self.tmp()], 1, {"PATH": self.tool_path(without=("cmake",))},
                        contains="cmake is not on PATH")

    def test_no_gpu(self):
        self.run_all(self.fake_build(), code=77, env={"FAKE_GPU": "none"}, contains="no GPU")

    def test_not_built(self):
        self.run_all(self.tmp(), code=2, contains="not built")

    def test_out_is_a_file_or_cannot_be_made(self):
        build = self.fake_build()
        a_file = build / "bin" / STEPS[0]
        for out in (a_file, "/dev/null/x", a_file / "sub"):
            with self.subTest(out=out):
                self.run_all(build, "--out", out, code=2)

    def test_help_documents_the_passthrough(self):
        proc = self.run_script([*RUN_ALL, "-h"], 0)
        self.assertIn("after --", proc.stdout)

    def test_committed_results_keep_their_steps(self):
        # results/h100/progression holds every step: a run of one step may not write there (refused
        # before running).
        self.run_all(self.fake_build(), "--steps", "01", "--out", H100, code=2, env={"FAKE_GPU": "none"},
                     contains="--force")

    def test_out_under_results_follows_the_layout(self):
        for out in (suite.RESULTS / "h100", suite.RESULTS / "h200" / "12_types_ops", suite.RESULTS):
            with self.subTest(out=out):
                self.run_all(self.fake_build(), "--out", out, code=2, env={"FAKE_GPU": "none"},
                             contains="results/<gpu>/progression")

    def test_an_older_record_is_read_by_todays_names(self):
        # The older H100 record names the library 08_cub: a run of every step loses nothing there (it
        # goes on to the GPU check), and a refusal names today's step, never 08_cub.
        old = suite.RESULTS / "h100" / "earlier" / "eb211d9ace37"
        build = self.fake_build()
        self.run_all(build, "--out", old, code=77, env={"FAKE_GPU": "none"})
        proc = self.run_all(build, "--steps", "01", "--out", old, code=2, env={"FAKE_GPU": "none"})
        self.assertNotIn("08_cub", proc.stderr)
        self.assertIn(suite.library_step(STEPS), proc.stderr)

    def test_sweep_range_takes_ascii_digits_only(self):
        build = self.fake_build()
        for bad in ("1_0:12", "\uff11\uff10:12", "10:1_2", "10:", ":12", "10:12:14", "-1:12", "10:37"):
            with self.subTest(bad=bad):
                self.run_all(build, "--sweep", "--sweep-range", bad, code=2, env={"FAKE_GPU": "none"},
                             contains="--sweep-range")

    def test_repeated_options_are_refused(self):
        build = self.fake_build()
        for args in (["--n", "2^20", "--n", "2^22"], ["--steps", "01", "--steps=02"], ["--sweep", "--sweep"],
                     ["--out", build / "a", "--out", build / "b"]):
            with self.subTest(args=args):
                self.run_all(build, *args, code=2, env={"FAKE_GPU": "none"}, contains="given twice")

    def test_help_after_the_separator_says_where_help_is(self):
        proc = self.run_all(self.fake_build(), "--", "--help", code=2, env={"FAKE_GPU": "none"})
        self.assertIn("scripts/run_all --help", proc.stderr)
        self.assertNotIn("run_all sets it", proc.stderr)

    def test_debug_shows_the_traceback(self):
        proc = self.run_script([*RUN_ALL, "--debug", "--n", "abc"], 2, one_line=False, check_traceback=False)
        self.assertIn("Traceback", proc.stderr)
        self.assertNotIn("NoneType: None", proc.stderr)
        self.assertTrue(proc.stderr.strip().splitlines()[-1].startswith("run_all: "), proc.stderr)

    def test_the_docstring_runs_the_progression_only(self):
        import re as regex
        for text in ((SCRIPTS / "run_all").read_text(), (ROOT / "beyond.txt").read_text()):
            for spec in regex.findall(r"run_all[^\n]*--steps ([0-9a-z_,]+)", text):
                for item in spec.split(","):
                    suite.resolve_step(item, STEPS)  # a step of steps.txt, else UsageError

    def test_table_in_suite_order_with_ceiling_and_both_cpu_columns(self):
        build = self.fake_build()
        out = build / "out"
        self.run_all(build, "--n", "2^20", "--steps", f"{suite.library_step(STEPS)},07", "--out", out, code=0)
        table = json.loads((out / "table.json").read_text())
        self.assertEqual([r["step"] for r in table["records"]], ["07_cooperative_grid", suite.library_step(STEPS)])
        self.assertEqual(table["ceiling"]["tool"], suite.CEILING_TOOL)
        header = (out / "table.md").read_text().splitlines()[0]
        for name in ("% ceiling", "vs 1 CPU thread", "vs all CPU cores", "vs 07", "vs prev"):
            self.assertIn(name, header)
        self.assertNotIn("vs 01", header)

    def test_a_step_without_result_writes_nothing(self):
        build = self.fake_build()
        out = build / "out"
        out.mkdir()
        (out / "table.json").write_text("old\n")
        self.run_all(build, "--n", "1K", "--out", out, code=1, env={"FAKE_FAIL": STEPS[2]}, one_line=False,
                     contains="not written")
        self.assertEqual((out / "table.json").read_text(), "old\n")

    def test_sweep_above_the_memory_cap(self):
        build = self.fake_build()
        self.run_all(build, "--sweep", "--sweep-range", "20:22", "--out", build / "out", code=1,
                     env={"FAKE_MEMORY": "1000000"}, contains="no size fits")
        self.assertFalse((build / "out").exists())

    def test_sweep_writes_steps_and_ceiling(self):
        build = self.fake_build(steps=STEPS)
        out = build / "out"
        self.run_all(build, "--sweep", "--sweep-range", "10:11", "--steps", "01,02", "--out", out, code=0,
                     one_line=False)
        rows = suite.read_sweep_csv(out / "sweep.csv")
        self.assertEqual(sorted({r["step"] for r in rows}), ["01_interleaved", "02_sequential", suite.CEILING_TOOL])
        self.assertEqual(sorted({r["n"] for r in rows}), [1024, 2048])


class StepOptions(ScriptCase):
    """run_all checks the options after -- with suite.STEP_OPTIONS, a copy of common/options.cpp's
    grammar; a built step executable (REDUCE_STEP_EXE, which CTest sets) must agree with it."""

    # Values each option must accept and refuse; the accepted ones are cheap to run on a GPU.
    VALUES = {
        "--n": (["0", "1", "1000", "4K", "2^10", "007"], ["abc", "-5", "+5", "1.5", "2^37", "1K5", "", "2^", "5k"]),
        "--iters": (["1", "3"], ["0", "100001", "-1", "x", "1e3"]),
        "--warmup": (["0", "2"], ["10001", "-1", "x"]),
        "--block": (["32", "128", "1024"], ["16", "100", "2048", "0", "x"]),
        "--seed": (["0", "18446744073709551615"], ["-1", "18446744073709551616", "x"]),
        "--pattern": (list(suite.PATTERNS), ["nonsense", "INT", ""]),
        "--format": (["text", "csv", "json"], ["xml", ""]),
        "--device": (["0"], ["-1", "1024", "x"]),
        "--cpu-runs": (["0", "1"], ["1001", "-1", "x"]),
    }

    def executable(self):
        exe = os.environ.get("REDUCE_STEP_EXE", "")
        if not exe or not os.access(exe, os.X_OK):
            self.skipTest("REDUCE_STEP_EXE names no built step executable (CTest's scripts.bad_input sets it)")
        return exe

    def python_accepts(self, tokens):
        try:
            suite.check_step_options(tokens)
            return True
        except suite.UsageError:
            return False

    def test_values_table_covers_every_option(self):
        self.assertEqual(set(self.VALUES), set(suite.STEP_OPTIONS))
        for name, (good, bad) in self.VALUES.items():
            for value in good:
                self.assertTrue(self.python_accepts([name, value]), (name, value))
                self.assertTrue(self.python_accepts([f"{name}={value}"]), (name, value))
            for value in bad:
                self.assertFalse(self.python_accepts([name, value]), (name, value))
        for tokens in (["--bogus", "1"], ["x"], ["--n"], ["--n", "1", "--iters"], ["--n", "1", "--n=2"]):
            self.assertFalse(self.python_accepts(tokens), tokens)
        self.assertTrue(self.python_accepts(["-h", "--n", "1", "--help"]))

    def test_help_lists_the_same_options(self):
        proc = subprocess.run([self.executable(), "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        listed = {m for m in re.findall(r"^  (--[a-z-]+)", proc.stdout, re.M)} - set(suite.HELP_OPTIONS)
        self.assertEqual(listed, set(suite.STEP_OPTIONS), "suite.STEP_OPTIONS differs from the executable's --help")

    def test_the_executable_accepts_and_refuses_the_same_values(self):
        exe = self.executable()
        cheap = {"--n": "1", "--iters": "1", "--warmup": "0", "--cpu-runs": "0", "--format": "json"}
        cases = [([name, v], True) for name, (good, _) in self.VALUES.items() for v in good]
        cases += [([name, v], False) for name, (_, bad) in self.VALUES.items() for v in bad]
        cases += [(["--bogus", "1"], False), (["x"], False), (["--n"], False), (["--seed", "1", "--seed=2"], False)]
        for tokens, accepted in cases:
            # Small values for the options the case does not give (each option once): a run that
            # starts is small.
            args = [x for k, v in cheap.items() if k != tokens[0] for x in (k, v)] + tokens
            with self.subTest(tokens=tokens):
                self.assertEqual(self.python_accepts(tokens), accepted)
                proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120,
                                      stdin=subprocess.DEVNULL)
                self.assertEqual(proc.returncode == 2, not accepted,
                                 f"{exe} {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}")


class ToolPath(ScriptCase):
    def test_a_python3_launcher_on_path_is_not_what_the_shell_scripts_run(self):
        # A pyenv shim is a launcher that runs the real interpreter through tools of its own; in the
        # reduced PATH those are missing. Here a stand-in launcher that always fails comes first in PATH.
        shims = self.tmp()
        write_exe(shims / "python3", "#!/bin/sh\nexec no-such-launcher-tool python3 \"$@\"\n")
        old = os.environ["PATH"]
        os.environ["PATH"] = f"{shims}{os.pathsep}{old}"
        self.addCleanup(os.environ.__setitem__, "PATH", old)
        path = self.tool_path()
        proc = subprocess.run(["python3", "-c", "import sys; print(sys.version_info[0])"], capture_output=True,
                              text=True, env=dict(os.environ, PATH=path))
        self.assertEqual(proc.stdout.strip(), "3", proc.stderr)
        self.run_script(["bash", SCRIPTS / "check_gpu.sh", self.tmp()], 77, {"PATH": path})

    def test_gzip_is_there_for_tar(self):
        tools = Path(self.tool_path())
        self.assertTrue((tools / "gzip").exists() or not shutil.which("gzip"))


FAKE_GTEST = r'''#!{python}
"""A fake GoogleTest binary: FAKE_CASES=ok,skip,fail,... one case each, in that order; exit 1 on a failure."""
import os, sys
cases = [c for c in os.environ.get("FAKE_CASES", "").split(",") if c]
print("[==========] Running %d tests from 1 test suite." % len(cases))
for i, c in enumerate(cases):
    name = "Fake/Case.Run/%d" % i
    print("[ RUN      ] " + name)
    if c == "ok":
        print("[       OK ] %s (0 ms)" % name)
    elif c == "fail":
        print("/w/test.cu:9: Failure\nExpected equality")
        print("[  FAILED  ] %s (1 ms)" % name)
    else:
        why = "needs 2 GPUs, this machine shows 0" if c == "two" else "no usable CUDA device: none here; truly"
        print("/w/test.cu:5: Skipped\n" + why)
        print("[  SKIPPED ] %s (0 ms)" % name)
print("[  PASSED  ] %d tests." % cases.count("ok"))
if "fail" in cases:
    print("[  FAILED  ] Fake/Case.Run/%d, where GetParam() = 1" % cases.index("fail"))
sys.exit(1 if "fail" in cases else 0)
'''


class TestGroups(ScriptCase):
    """cmake/run_test_group.cmake: where no GPU is seen, all GPU test binaries are one CTest test
    (gpu.all) and all smoke runs another (smoke.all). Skipped only when nothing failed; each reason
    once, with its count."""

    SKIP_LINE = re.compile(r"nothing failed, [0-9]+ could not run here")  # cmake/GpuTests.cmake's regex

    def group(self, runs, env):
        cmake = shutil.which("cmake")
        if not cmake:
            self.skipTest("cmake is not on PATH")
        folder = self.tmp()
        write_exe(folder / "fake_gtest", FAKE_GTEST.format(python=sys.executable))
        write_exe(folder / "fake_step", FAKE_EXE.format(python=sys.executable, scripts=str(SCRIPTS),
                                                        template=str(H100 / "table.json")))
        (folder / "00_atomic").symlink_to(folder / "fake_step")
        lines = [f"reduce_run({kind} [==[{name}]==] {' '.join(f'[==[{a}]==]' for a in args)})"
                 for kind, name, *args in runs]
        text = "\n".join(lines).replace("GTEST", str(folder / "fake_gtest")).replace("STEP", str(folder / "00_atomic"))
        (folder / "runs.cmake").write_text(text + "\n")
        return subprocess.run([cmake, "-DGROUP=gpu.all", f"-DRUNS={folder / 'runs.cmake'}", "-P",
                               ROOT / "cmake" / "run_test_group.cmake"], capture_output=True, text=True,
                              env=dict(os.environ, **env), timeout=120)

    def test_all_skipped_is_a_skip_with_each_reason_once(self):
        proc = self.group([("gtest", "gpu.a", "GTEST"), ("gtest", "gpu.b", "GTEST"),
                           ("exe", "smoke.00_atomic.n1", "STEP", "--n", "1")],
                          {"FAKE_CASES": "skip,skip,two", "FAKE_GPU": "none"})
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 0, out)
        self.assertIn("gpu.all: 3 runs, 7 test cases: 0 passed, 7 skipped, 0 failed", out)
        self.assertIn("skipped 4: no usable CUDA device: none here; truly", out)
        self.assertIn("skipped 2: needs 2 GPUs, this machine shows 0", out)
        self.assertIn("skipped 1: no usable CUDA device: no CUDA-capable device is detected", out)
        self.assertRegex(out, self.SKIP_LINE)

    def test_a_failure_fails_and_is_not_a_skip(self):
        proc = self.group([("gtest", "gpu.a", "GTEST")], {"FAKE_CASES": "ok,skip,fail"})
        out = proc.stdout + proc.stderr
        self.assertNotEqual(proc.returncode, 0, out)
        self.assertIn("1 passed, 1 skipped, 1 failed", out)
        self.assertIn("Expected equality", out)  # the failing binary's output is shown
        self.assertNotRegex(out, self.SKIP_LINE)

    def test_a_smoke_run_that_fails_or_a_binary_without_cases_fails(self):
        for runs, env in (([("exe", "smoke.x", "STEP", "--n", "1")], {"FAKE_FAIL": "00_atomic"}),
                          ([("gtest", "gpu.a", "GTEST")], {"FAKE_CASES": ""})):
            with self.subTest(env=env):
                proc = self.group(runs, env)
                self.assertNotEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertNotRegex(proc.stdout + proc.stderr, self.SKIP_LINE)

    def test_all_passed_passes(self):
        proc = self.group([("gtest", "gpu.a", "GTEST"), ("exe", "smoke.x", "STEP", "--n", "1")],
                          {"FAKE_CASES": "ok,ok"})
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 0, out)
        self.assertIn("3 passed, 0 skipped, 0 failed", out)
        self.assertNotRegex(out, self.SKIP_LINE)


class PlotSweep(ScriptCase):
    def test_bad_input(self):
        tmp = self.tmp()
        header = suite.records_to_csv([])
        files = {"empty.csv": "", "header.csv": header, "garbage.csv": "this is not\na sweep,at all\n",
                 "badrow.csv": header + "01_a,x,abc,uniform\n"}
        for name, text in files.items():
            (tmp / name).write_text(text)
        good = SWEEP
        cases = [([], 2), ([good], 2), ([tmp / "missing.csv", tmp / "a.png"], 2), ([good, tmp / "a.txt"], 2),
                 ([good, tmp / "no" / "such" / "a.png"], 2)]
        cases += [([tmp / name, tmp / "out.png"], 1) for name in files]
        for args, code in cases:
            with self.subTest(args=args):
                self.run_script([*PLOT, *args], code)
        self.assertFalse((tmp / "out.png").exists())

    def test_without_matplotlib(self):
        fake = self.tmp()
        (fake / "matplotlib").mkdir()
        (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here (test)')\n")
        out = self.tmp() / "sweep.png"
        self.run_script([*PLOT, SWEEP, out], 77, {"PYTHONPATH": str(fake)}, contains="matplotlib")
        self.assertFalse(out.exists())


class ShellScripts(ScriptCase):
    def test_measure_gpu_usage(self):
        self.run_script(["bash", SCRIPTS / "measure_gpu.sh"], 2, contains="usage")
        self.run_script(["bash", SCRIPTS / "measure_gpu.sh", "a", "b", "c"], 2)
        self.run_script(["bash", SCRIPTS / "measure_gpu.sh", "--frob"], 2)
        self.run_script(["bash", SCRIPTS / "measure_gpu.sh", H100 / "table.json"], 2)

    def test_measure_gpu_without_gpu_leaves_out_alone(self):
        out = self.tmp()
        (out / "table.json").write_text("old\n")
        self.run_script(["bash", SCRIPTS / "measure_gpu.sh", out, self.tmp()], 77,
                        {"PATH": self.tool_path(without=("nvidia-smi",))}, one_line=False)
        self.assertEqual([p.name for p in out.iterdir()], ["table.json"])
        self.assertEqual((out / "table.json").read_text(), "old\n")

    def test_check_gpu_usage_and_no_gpu(self):
        self.run_script(["bash", SCRIPTS / "check_gpu.sh", "a", "b"], 2)
        self.run_script(["bash", SCRIPTS / "check_gpu.sh", "--frob"], 2)
        self.run_script(["bash", SCRIPTS / "check_gpu.sh", self.tmp()], 77, {"PATH": self.tool_path()})

    def test_folders_that_cannot_be_made_and_nothing_to_do(self):
        """One line and exit 2 before anything runs (no raw mkdir error first), GPU or not."""
        path = {"PATH": self.tool_path()}
        a_file = self.tmp() / "a_file"
        a_file.write_text("x\n")
        for bad in ("/dev/null/x", a_file):
            with self.subTest(bad=bad):
                self.run_script(["bash", SCRIPTS / "check_gpu.sh", bad], 2, path, contains=str(bad))
                self.run_script(["bash", SCRIPTS / "check_gpu.sh", self.tmp()], 2, dict(path, LOG_DIR=str(bad)),
                                contains=str(bad))
                self.run_script(["bash", SCRIPTS / "measure_gpu.sh", bad], 2, path, contains=str(bad))
                self.run_script(["bash", SCRIPTS / "measure_gpu.sh", self.tmp(), bad], 2, path, contains=str(bad))
                self.run_script(["bash", SCRIPTS / "profile_steps.sh", self.fake_build()], 2,
                                dict(path, LOG_DIR=str(bad)), contains=str(bad))
        self.run_script(["bash", SCRIPTS / "profile_steps.sh", "-o", self.tmp(), self.fake_build()], 2, path,
                        contains="is a folder")
        self.run_script(["bash", SCRIPTS / "check_gpu.sh", self.tmp()], 2, dict(path, CHECKS=" "), contains="empty")
        out = self.tmp() / "out"
        self.run_script(["bash", SCRIPTS / "measure_gpu.sh", out], 2, dict(path, PARTS=""), contains="empty")
        self.assertFalse(out.exists())

    def profile(self, build, code, env=None, out=None, **kw):
        args = ["-o", out] if out else []
        return self.run_script(["bash", SCRIPTS / "profile_steps.sh", *args, build], code,
                               dict(env or {}, LOG_DIR=str(self.tmp())), **kw)

    def test_profile_steps_bad_build(self):
        self.profile("/nonexistent/build", 2, contains="no such build folder")
        self.profile(self.tmp(), 2, contains="not built")
        self.run_script(["bash", SCRIPTS / "profile_steps.sh", "a", "b", "c"], 2)
        self.run_script(["bash", SCRIPTS / "profile_steps.sh", "-o", "/no/such/folder/p.csv"], 2)

    def test_profile_steps_no_gpu_no_ncu_ncu_fails_or_says_nothing(self):
        build = self.fake_build()
        fake_ncu = self.tmp()
        write_exe(fake_ncu / "ncu", FAKE_NCU.format(python=sys.executable))
        path = self.tool_path()
        out = self.tmp() / "profile.csv"
        self.profile(build, 77, {"FAKE_GPU": "none", "PATH": path}, out)
        self.profile(build, 1, {"PATH": path}, out, contains="ncu")
        with_ncu = f"{fake_ncu}:{path}"
        self.profile(build, 1, {"PATH": with_ncu, "FAKE_NCU": "fail"}, out, contains="==ERROR== the profiler")
        self.profile(build, 1, {"PATH": with_ncu, "FAKE_NCU": "empty"}, out, contains="no counters")
        self.assertFalse(out.exists())
        self.assertFalse((out.parent / "profile.meta.json").exists())
        self.profile(build, 0, {"PATH": with_ncu, "REDUCE_COMMIT": "0123456789ab"}, out)
        lines = out.read_text().splitlines()
        self.assertEqual(len(lines), 1 + len(STEPS))
        self.assertTrue(lines[1].startswith(f'"{STEPS[0]}",'))
        meta = suite.read_provenance(out.parent / "profile.meta.json")  # what the fake step reports
        record = json.loads((H100 / "table.json").read_text())["records"][0]
        self.assertEqual((meta["commit"], meta["device"], meta["cuda_runtime"], meta["by"]),
                         ("0123456789ab", record["device"], record["cuda_runtime"], "scripts/profile_steps.sh"))
        self.assertEqual(sorted(p.name for p in out.parent.iterdir()), ["profile.csv", "profile.meta.json"])


FAKE_SANITIZER = r'''#!{python}
"""A fake compute-sanitizer: --tool T ... EXE ARGS; runs EXE, fails (99) where FAKE_SAN_FAIL names T/EXE."""
import os, subprocess, sys, time, zlib
args = sys.argv[1:]
tool = args[args.index("--tool") + 1]
exe = next(a for a in args if "/" in a)
time.sleep((zlib.crc32(" ".join(args).encode()) % 5) / 100)  # finish out of order
rc = subprocess.run([exe, *args[args.index(exe) + 1:]], capture_output=True).returncode
print(f"========= fake {{tool}} {{os.path.basename(exe)}}")
print("========= RACECHECK SUMMARY: 0 hazards displayed" if tool == "racecheck" else "========= ERROR SUMMARY: 0 errors")
sys.exit(99 if f"{{tool}}/{{os.path.basename(exe)}}" in os.environ.get("FAKE_SAN_FAIL", "").split(",") else rc)
'''


class CheckGpuSanitizer(ScriptCase):
    """check_gpu.sh's compute-sanitizer pass with SANITIZER_JOBS runs at a time: the log in the runs'
    order, every run counted, a failing run named (fake cmake, nvidia-smi, nvcc and compute-sanitizer)."""

    def fakes(self):
        folder = self.tmp()
        write_exe(folder / "cmake", "#!/bin/sh\nexit 0\n")
        write_exe(folder / "nvidia-smi", "#!/bin/sh\necho 'Fake GPU, 1.0'\n")
        write_exe(folder / "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.0'\n")
        write_exe(folder / "compute-sanitizer", FAKE_SANITIZER.format(python=sys.executable))
        return f"{folder}:{self.tool_path('printf')}"

    def check(self, jobs, code, fail=""):
        logs = self.tmp()
        proc = self.run_script(["bash", SCRIPTS / "check_gpu.sh", self.fake_build()], code,
                               {"PATH": self.fakes(), "CHECKS": "sanitizer", "SANITIZER_JOBS": str(jobs),
                                "LOG_DIR": str(logs), "FAKE_SAN_FAIL": fail}, one_line=False)
        return proc.stdout, (logs / "sanitizer.log").read_text(), logs

    def test_parallel_runs_log_as_the_serial_ones(self):
        runs = len(STEPS) * 4 * 2
        out1, log1, _ = self.check(1, 0)
        out4, log4, logs = self.check(4, 0)
        self.assertEqual(log1, log4)
        self.assertIn(f"({runs} runs,", out4)
        self.assertEqual(log4.count("ERROR SUMMARY: 0 errors") + log4.count("RACECHECK SUMMARY: 0 hazards"), runs)
        headers = [line for line in log4.splitlines() if line.startswith("=== ")]
        self.assertEqual(headers[:2], [f"=== memcheck {STEPS[0]} --n 1", f"=== memcheck {STEPS[0]} --n 100003"])
        self.assertFalse((logs / "sanitizer_runs").exists())

    def test_a_failing_run_is_named(self):
        out, _, _ = self.check(3, 1, fail=f"racecheck/{STEPS[2]}")
        self.assertIn(f"racecheck/{STEPS[2]}/n=1(rc=99)", out)
        self.assertIn(f"racecheck/{STEPS[2]}/n=100003(rc=99)", out)

    def test_bad_jobs(self):
        for bad in ("0", "x", "-1"):
            self.run_script(["bash", SCRIPTS / "check_gpu.sh", self.tmp()], 2,
                            {"PATH": self.fakes(), "SANITIZER_JOBS": bad}, contains="SANITIZER_JOBS")


class MergeSweep(ScriptCase):
    """scripts/merge_sweep: the parts of one sweep (run_all --sweep --sweep-range) into one."""

    MERGE = [sys.executable, SCRIPTS / "merge_sweep"]

    def parts(self, split=2 ** 25, dates=("2026-11-22", "2026-11-22")):
        rows = SWEEP.read_text().splitlines(True)
        header, body = rows[0], rows[1:]
        n = next(csv.reader([header])).index("n")
        folders = []
        for keep, date in ((lambda k: k < split, dates[0]), (lambda k: k >= split, dates[1])):
            folder = self.tmp()
            (folder / "sweep.csv").write_text(header + "".join(r for r in body
                                                               if keep(int(float(next(csv.reader([r]))[n])))))
            meta = json.loads((SWEEP.parent / "sweep_meta.json").read_text())
            meta.pop("parts", None)  # the committed sweep may itself be joined from parts: these are new ones
            meta["date"] = date
            (folder / "sweep_meta.json").write_text(json.dumps(meta))
            folders.append(folder)
        return folders

    def test_the_parts_give_the_whole_sweep_back(self):
        a, b = self.parts(dates=("2026-11-22", "2026-11-23"))
        out = self.tmp() / "out"
        self.run_script([*self.MERGE, out, b, a], 0, one_line=False)
        self.assertEqual((out / "sweep.csv").read_text(), SWEEP.read_text())
        meta = json.loads((out / "sweep_meta.json").read_text())
        self.assertEqual(meta["date"], "2026-11-22 to 2026-11-23")
        self.assertEqual([r["range"] for r in meta["parts"]], ["2^10..2^24", "2^25..2^30"])
        # a part added to a sweep already there: OUT named as a part too; a point twice is refused
        c, d = self.parts(split=2 ** 28)
        (out / "sweep.csv").write_text("".join(SWEEP.read_text().splitlines(True)[:-39]))  # 2^28..2^30 gone
        self.run_script([*self.MERGE, out, out, d], 0, one_line=False)
        self.assertEqual((out / "sweep.csv").read_text(), SWEEP.read_text())
        self.run_script([*self.MERGE, out, out, c], 1, contains="in both")

    def test_parts_that_do_not_belong_together(self):
        a, b = self.parts()
        out = self.tmp() / "out"
        for key, value in (("commit", "0123456789ab"), ("device", "NVIDIA H100"), ("args", ["--pattern", "int"])):
            with self.subTest(key=key):
                meta = json.loads((b / "sweep_meta.json").read_text())
                kept = dict(meta)
                meta[key] = value
                (b / "sweep_meta.json").write_text(json.dumps(meta))
                self.run_script([*self.MERGE, out, a, b], 1, contains=key)
                (b / "sweep_meta.json").write_text(json.dumps(kept))
        for commit in ("unknown", "683f81d55927+dirty"):
            meta = json.loads((a / "sweep_meta.json").read_text())
            meta["commit"] = commit
            (a / "sweep_meta.json").write_text(json.dumps(meta))
            self.run_script([*self.MERGE, out, a, b], 1, contains=commit)
        self.run_script([*self.MERGE, out, b, b], 2, contains="twice")
        self.run_script([*self.MERGE, out, b, self.tmp()], 1, contains="sweep.csv")
        self.run_script([*self.MERGE, out], 2)
        self.assertFalse(out.exists())

    def test_under_results_points_are_not_dropped(self):
        a, _ = self.parts()
        out = suite.RESULTS / "h200" / "progression"
        before = SWEEP.read_text()
        self.run_script([*self.MERGE, out, a], 2, contains="--force")
        self.assertEqual(SWEEP.read_text(), before)


class Provenance(ScriptCase):
    def test_bad_usage_and_a_failing_exe(self):
        cli = [sys.executable, SCRIPTS / "suite.py", "provenance"]
        out = self.tmp() / "x.meta.json"
        self.run_script(cli, 2)
        self.run_script([*cli, "/no/such/exe", out, "--by", "me"], 2, contains="not an executable")
        build = self.fake_build()
        self.run_script([*cli, build / "bin" / STEPS[0], out, "--by", "me"], 77, {"FAKE_GPU": "none"})
        self.run_script([*cli, build / "bin" / STEPS[0], out, "--by", "me"], 1, {"FAKE_FAIL": STEPS[0]})
        self.assertFalse(out.exists())
        self.run_script([*cli, build / "bin" / STEPS[0], out, "--by", "me"], 0, {"REDUCE_COMMIT": "abc"})
        self.assertEqual(suite.read_provenance(out)["commit"], "abc")
        self.assertEqual(suite.provenance_path(Path("a/profile.csv")), Path("a/profile.meta.json"))


class ResultsLayout(unittest.TestCase):
    """results/ as README.md's Layout section describes it: one folder per GPU (<gpu> or <gpu>_x<N>);
    in it progression/, figures/, earlier/<commit>/ and the steps of beyond.txt, nothing else; no code
    saved as text, no machine's folder names in any file."""

    def test_folders(self):
        allowed = {"progression", "figures", "earlier", *suite.read_beyond()}
        for gpu in sorted(p for p in suite.RESULTS.iterdir() if p.name != "tmp"):
            with self.subTest(gpu=gpu.name):
                self.assertTrue(gpu.is_dir(), f"{gpu}: a file where a GPU folder belongs")
                self.assertRegex(gpu.name, r"^[a-z]+[0-9]+(_x[0-9]+)?$")
                for entry in gpu.iterdir():
                    self.assertTrue(entry.is_dir() and entry.name in allowed, f"{entry}: not in the layout")
                for old in (gpu / "earlier").glob("*") if (gpu / "earlier").is_dir() else []:
                    self.assertRegex(old.name, r"^[0-9a-f]{12}$", f"{old}: earlier/<12-digit commit>/")
        self.assertEqual(list(suite.RESULTS.rglob("explore")), [])
        self.assertEqual([p for p in suite.RESULTS.rglob("*.cu*")], [])

    def test_no_machine_paths(self):
        machine = re.compile(r"(?<![\w.])/(root|home|work|tmp|scratch)/")
        for path in suite.RESULTS.rglob("*"):
            if path.is_file() and path.suffix in (".txt", ".md", ".json", ".csv", ".jsonl"):
                m = machine.search(path.read_text(errors="replace"))
                self.assertIsNone(m, f"{path}: a machine path ({m and m.group(0)})")


class SweepRatio(ScriptCase):
    def test_bad_input(self):
        ratio = [sys.executable, SCRIPTS / "sweep_ratio"]
        for args in ([], [SWEEP, "09"], [SWEEP, "09", "99"], [SWEEP, "09", "10", "--from", "1_0"],
                     [SWEEP, "09", "10", "--to", "\uff13\uff10"], [SWEEP, "09", "10", "--from", "37"],
                     [SWEEP, "09", "10", "--from", "10", "--from", "12"], [self.tmp() / "none.csv", "09", "10"]):
            with self.subTest(args=args):
                self.run_script([*ratio, *args], 2)
        self.run_script([*ratio, SWEEP, "09", "10", "--from", "20", "--to", "21"], 0)


class AB(ScriptCase):
    """scripts/ab: its bad usage and a patch that does not apply exit 2, with nothing left behind; a
    machine without a GPU exits 77 once the patches are known to apply."""
    AB = [sys.executable, SCRIPTS / "ab"]

    def patches(self):
        folder = self.tmp()
        good, bad = folder / "good.patch", folder / "bad.patch"
        good.write_text("--- /dev/null\n+++ b/ab_test_file.txt\n@@ -0,0 +1 @@\n+a new file\n")
        bad.write_text("--- a/steps.txt\n+++ b/steps.txt\n@@ -1,1 +1,1 @@\n-no such line in steps.txt\n+x\n")
        return good, bad

    def test_bad_usage(self):
        good, _ = self.patches()
        out = self.tmp() / "out"
        for args in ([], ["13", out], ["13", out, "--variant", "x"], ["13", out, "--variant", f"head={good}"],
                     ["13", out, "--variant", f"a={good}", "--variant", f"a={good}"],
                     ["13", out, "--variant", "a=/no/such.patch"], ["99", out, "--variant", f"a={good}"],
                     ["13", out, "--variant", f"a={good}", "--rounds", "0"],
                     ["13", out, "--variant", f"a={good}", "--rounds", "2", "--rounds", "3"],
                     ["13", out, "--variant", f"a={good}", "--only", "nope"],
                     ["13", good, "--variant", f"a={good}"]):
            with self.subTest(args=args):
                self.run_script([*self.AB, *args], 2)
                self.assertFalse(out.exists())

    def test_gpu_session_part(self):
        """gpu_session.sh's ab part needs AB_VARIANTS, said before it looks for a GPU."""
        out = self.tmp()
        self.run_script(["bash", SCRIPTS / "gpu_session.sh", out], 2, {"PARTS": "table ab"}, contains="AB_VARIANTS")
        self.run_script(["bash", SCRIPTS / "gpu_session.sh", out], 77,
                        {"PARTS": "ab", "AB_VARIANTS": "a=x.patch", "PATH": self.tool_path()})
        self.assertIn("AB_VARIANTS", self.run_script(["bash", SCRIPTS / "gpu_session.sh", "--help"], 0).stdout)

    def test_gpu_name_not_this_machines(self):
        """GPU_NAME that the GPU's name does not hold: exit 77 naming both, before anything is built."""
        folder = self.tmp()
        write_exe(folder / "nvidia-smi", "#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'\n")
        out = self.tmp() / "out"
        proc = self.run_script(["bash", SCRIPTS / "gpu_session.sh", out], 77,
                               {"PARTS": "table", "GPU_NAME": "H200", "PATH": f"{folder}:{self.tool_path()}"},
                               contains="GPU_NAME=H200")
        self.assertIn("NVIDIA H100 80GB HBM3", proc.stderr)
        self.assertFalse((out / "work").exists())

    def test_a_patch_that_does_not_apply_then_no_gpu(self):
        good, bad = self.patches()
        out = self.tmp() / "out"
        path = {"PATH": self.tool_path("patch")}  # no nvidia-smi
        self.run_script([*self.AB, "13", out, "--variant", f"a={good}", "--variant", f"b={bad}"], 2, path,
                        contains="does not apply")
        self.run_script([*self.AB, "13", out, "--variant", f"a={good}"], 77, path)
        self.assertFalse(out.exists())
        self.assertFalse((ROOT / "ab_test_file.txt").exists())  # the patches touch copies only


class ShowLesson(ScriptCase):
    def test_bad_input(self):
        for args in ([], ["01"], ["01", "99"], ["01", "01"], ["01", "03"], ["02", "01"], ["01", "02", "--bogus"]):
            with self.subTest(args=args):
                self.run_script([*SHOW, *args], 2)

    def test_the_library_pair_has_no_budget(self):
        steps = suite.read_steps()
        proc = self.run_script([*SHOW, steps[-2], steps[-1], "--stat"], 0)
        self.assertIn("no budget", proc.stdout)
        self.assertNotIn("OVER", proc.stdout)

    def test_stat_names_the_budget(self):
        pairs = [(a, b) for a, b in zip(STEPS, STEPS[1:]) if (ROOT / a).is_dir() and (ROOT / b).is_dir()]
        if not pairs:
            self.skipTest("no neighbouring step folders yet")
        proc = self.run_script([*SHOW, *pairs[0], "--stat"], 0)
        self.assertIn(f"budget of {suite.LESSON_BUDGET}", proc.stdout)
        proc = self.run_script([*SHOW, *pairs[0], "--no-comments"], 0)
        self.assertNotIn("//", "".join(line for line in proc.stdout.splitlines() if line[:1] in "+-"
                                       and '"' not in line))


class SkipReasons(ScriptCase):
    JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="4" failures="0" disabled="0" skipped="3">
 <testcase name="smoke.01_interleaved.n1" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
  <system-out>01_interleaved: no usable CUDA device: no CUDA-capable device is detected
</system-out></testcase>
 <testcase name="smoke.02_sequential.n1" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
  <system-out>02_sequential: no usable CUDA device: no CUDA-capable device is detected
</system-out></testcase>
 <testcase name="gpu.Steps/Matrix.Sum/0  # GetParam() = 0" status="notrun">
  <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
  <system-out>[ RUN      ] Steps/Matrix.Sum/0
/w/tests/test_steps.cu:40: Skipped
no usable CUDA device: CUDA driver version is insufficient
[  SKIPPED ] Steps/Matrix.Sum/0 (0 ms)
</system-out></testcase>
 <testcase name="cpu.Options.Defaults" status="run"><system-out>[  PASSED  ] 1 test.</system-out></testcase>
</testsuite>
"""
    LAST_TEST = """Start testing: Nov 22 07:05 UTC
----------------------------------------------------------
1/2 Testing: gpu.Steps/Matrix.Sum/0  # GetParam() = 0
1/2 Test: gpu.Steps/Matrix.Sum/0  # GetParam() = 0
Output:
----------------------------------------------------------
[ RUN      ] Steps/Matrix.Sum/0
/w/tests/test_steps.cu:40: Skipped
no usable CUDA device: CUDA driver version is insufficient
[  SKIPPED ] Steps/Matrix.Sum/0 (0 ms)
<end of output>
Test time =   0.00 sec
----------------------------------------------------------
Test Pass Reason:
Skip regular expression found in output. Regex=[\\[  SKIPPED \\]]
----------------------------------------------------------

2/2 Testing: cpu.Options.Defaults
2/2 Test: cpu.Options.Defaults
Output:
----------------------------------------------------------
[  PASSED  ] 1 test.
<end of output>
Test Passed.
----------------------------------------------------------
"""

    def build_with_junit(self, text):
        """A build folder whose last ctest run wrote text as its JUnit file."""
        build = self.tmp()
        (build / "Testing").mkdir()
        (build / "Testing" / "junit.xml").write_text(text)
        return build

    def test_groups_reasons_from_junit(self):
        build = self.build_with_junit(self.JUNIT)
        proc = self.run_script([sys.executable, SCRIPTS / "skip_reasons", build], 0)
        self.assertIn("3 of 4 tests skipped", proc.stdout)
        self.assertIn("   2  no usable CUDA device: no CUDA-capable device is detected", proc.stdout)
        self.assertIn("   1  no usable CUDA device: CUDA driver version is insufficient  (e.g. gpu.Steps/Matrix.Sum/0)",
                      proc.stdout)
        self.assertNotIn("cpu.Options", proc.stdout)

    GROUPS = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="3" failures="0" disabled="0" skipped="2">
 <testcase name="gpu.all" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
  <system-out>gpu.all: 2 runs, 700 test cases: 0 passed, 700 skipped, 0 failed
skipped 690: no usable CUDA device: the CUDA runtime reports cudaErrorNoDevice (none); is a GPU there?
skipped 10: needs 2 GPUs, this machine shows 0
gpu.all: nothing failed, 700 could not run here
</system-out></testcase>
 <testcase name="smoke.all" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
  <system-out>smoke.all: 48 runs, 48 test cases: 0 passed, 48 skipped, 0 failed
skipped 48: no usable CUDA device: the CUDA runtime reports cudaErrorNoDevice (none); is a GPU there?
smoke.all: nothing failed, 48 could not run here
</system-out></testcase>
 <testcase name="cpu.Options.Defaults" status="run"><system-out>[  PASSED  ] 1 test.</system-out></testcase>
</testsuite>
"""

    def test_groups_count_case_by_case_one_line_per_reason(self):
        build = self.build_with_junit(self.GROUPS)
        proc = self.run_script([sys.executable, SCRIPTS / "skip_reasons", build], 0)
        lines = proc.stdout.splitlines()
        self.assertIn("2 of 3 tests skipped", lines[0])
        self.assertIn("gpu.all holds 700, smoke.all holds 48", lines[0])
        self.assertEqual(len(lines), 3, proc.stdout)
        self.assertIn(" 738  no usable CUDA device: the CUDA runtime reports cudaErrorNoDevice (none); is a GPU there?"
                      "  (e.g. gpu.all, ... 1 more)", proc.stdout)
        self.assertIn("  10  needs 2 GPUs, this machine shows 0  (e.g. gpu.all)", proc.stdout)
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", build, "--allow", "needs [0-9]+ GPUs"], 1)

    def test_no_test_recorded(self):
        empty = self.tmp() / "junit.xml"
        empty.write_text('<?xml version="1.0"?><testsuite tests="0"></testsuite>\n')
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", empty], 1, contains="no test recorded")

    def test_last_test_log_when_there_is_no_junit(self):
        build = self.tmp()
        log = build / "Testing" / "Temporary" / "LastTest.log"
        log.parent.mkdir(parents=True)
        log.write_text(self.LAST_TEST)
        proc = self.run_script([sys.executable, SCRIPTS / "skip_reasons", build], 0)
        self.assertIn("1 of 2 tests skipped", proc.stdout)
        self.assertIn("CUDA driver version is insufficient", proc.stdout)

    def test_the_first_line_has_no_machine_path_and_no_dangling_colon(self):
        build = self.build_with_junit(self.JUNIT)
        first = self.run_script([sys.executable, SCRIPTS / "skip_reasons", build], 0).stdout.splitlines()[0]
        self.assertTrue(first.endswith(", for these reasons:"), first)
        self.assertNotIn(str(build.parent), first)
        none = self.build_with_junit('<?xml version="1.0"?><testsuite tests="1"><testcase name="a" status="run">'
                                     '</testcase></testsuite>\n')
        first = self.run_script([sys.executable, SCRIPTS / "skip_reasons", none], 0).stdout.splitlines()[0]
        self.assertFalse(first.endswith(":"), first)
        run = (ROOT / ".ci" / "run").read_text()
        self.assertIn("${first%, for these reasons:}", run)

    def test_bad_input(self):
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", ""], 2)
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", self.tmp(), "--allow", "a", "--allow", "b"], 2,
                        contains="given twice")
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", "/nonexistent"], 2)
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", "a", "b"], 2)
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", self.tmp()], 1)
        garbage = self.tmp() / "junit.xml"
        garbage.write_text("<not xml")
        self.run_script([sys.executable, SCRIPTS / "skip_reasons", garbage], 1)


class UpdateReadme(ScriptCase):
    """update_readme in a copy of the repository's documents, scripts and results."""

    def setUp(self):
        self.repo = self.tmp() / "repo"
        shutil.copytree(SCRIPTS, self.repo / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(suite.RESULTS, self.repo / "results", ignore=shutil.ignore_patterns("earlier", "*.png"))
        for name in ("steps.txt", "beyond.txt", "README.md", "PERF_NOTES.md"):
            shutil.copy(ROOT / name, self.repo / name)
        for step in STEPS + suite.read_beyond():
            (self.repo / step).mkdir()
            shutil.copy(ROOT / step / "README.md", self.repo / step / "README.md")

    def docs(self):
        return {p: p.read_text() for p in self.repo.rglob("*.md") if "results" not in p.parts}

    def update(self, *args, code, **kw):
        return self.run_script([sys.executable, self.repo / "scripts" / "update_readme", *args], code, **kw)

    def refused(self, *args, contains=None):
        before = self.docs()
        self.update(*args, code=1, contains=contains)
        self.assertEqual(self.docs(), before, "a refused update changed a README")

    def main_record(self):
        return self.repo / "results" / "h200" / "progression"

    def new_commit(self):
        """Every README's blocks out of date: the first GPU's record names another commit."""
        path = self.main_record() / "table.json"
        table = json.loads(path.read_text())
        table["meta"]["commit"] = "0123456789ab"
        path.write_text(json.dumps(table))

    def test_usage(self):
        self.update("--help", code=0)
        self.update(self.repo / "results" / "nothing", code=2)
        self.update(self.tmp(), code=2, contains="progression")
        self.update("--check", "--dry-run", code=2)
        self.update("--check", "--check", code=2, contains="given twice")
        self.update("--bogus", code=2)

    def test_the_committed_readmes_match_the_committed_results(self):
        self.update("--check", code=0)

    def test_writes_then_matches(self):
        readme = self.repo / "README.md"
        readme.write_text(readme.read_text().replace("| 01_interleaved |", "| 01_edited |", 1))
        before = readme.read_text()
        proc = self.update("--check", code=1, one_line=False)
        self.assertIn("-| 01_edited", proc.stdout)
        self.assertEqual(readme.read_text(), before)
        self.update(code=0, one_line=False)
        self.update("--check", code=0)
        self.assertEqual([p.name for p in self.repo.rglob("*.tmp")], [])

    def test_check_fails_on_a_changed_table_of_a_step_beyond(self):
        for step in suite.read_beyond():
            table = self.repo / "results" / "h200" / step / "table.md"
            if table.is_file():
                table.write_text(table.read_text().replace("PASS", "PASS ", 1))
                self.update("--check", code=1, one_line=False)
                return
        self.skipTest("no table of a step beyond the progression is committed")

    def test_a_profile_table_needs_its_block_and_fills_it(self):
        step = suite.read_beyond()[1]
        profile = self.repo / "results" / "h200" / step / "profile"
        profile.mkdir(parents=True, exist_ok=True)
        (profile / "profile.md").write_text("Nsight Compute on a fake GPU.\n\n| run | kernel |\n|---|---|\n| a | `k` |\n")
        readme = self.repo / step / "README.md"
        text = readme.read_text()
        if f"<!-- {step}:profile:begin -->" in text:  # the README has the block already: take it out first
            a = text.index(f"<!-- {step}:profile:begin -->")
            b = text.index(f"<!-- {step}:profile:end -->") + len(f"<!-- {step}:profile:end -->")
            readme.write_text(text[:a] + text[b:])
        self.refused(contains=f"{step}:profile")  # the table exists, its block does not
        readme.write_text(readme.read_text() + f"\n<!-- {step}:profile:begin -->\n<!-- {step}:profile:end -->\n")
        self.update(code=0, one_line=False)
        text = readme.read_text()
        self.assertIn("| a | `k` |", text)
        self.assertIn(f"`profile/profile.md` that `scripts/profile_beyond {step}`", text)
        self.update("--check", code=0)

    def break_marker(self, path, old, new):
        text = path.read_text()
        self.assertIn(old, text)
        path.write_text(text.replace(old, new, 1))

    def test_check_fails_on_a_missing_or_misspelled_marker(self):
        beyond = suite.read_beyond()[0]
        cases = [(self.repo / "README.md", "<!-- results:end -->", ""),
                 (self.repo / "README.md", "<!-- results:begin -->", ""),
                 (self.repo / STEPS[3] / "README.md", "<!-- measured:end -->", "<!-- measured:ned -->"),
                 (self.repo / STEPS[3] / "README.md", "<!-- gain:begin -->", "<!-- gian:begin -->"),
                 (self.repo / beyond / "README.md", f"<!-- {beyond}:end -->", f"<!-- {beyond}:edn -->"),
                 (self.repo / beyond / "README.md", f"<!-- {beyond}:begin -->", "")]
        for path, old, new in cases:
            with self.subTest(path=path.name, old=old, new=new):
                saved = path.read_text()
                self.break_marker(path, old, new)
                for mode in ("--check", "--dry-run", None):
                    before = self.docs()
                    self.update(*([mode] if mode else []), code=1)
                    self.assertEqual(self.docs(), before)
                path.write_text(saved)
        self.update("--check", code=0)

    def test_check_fails_on_a_missing_readme(self):
        for step in (STEPS[5], suite.read_beyond()[-1]):
            with self.subTest(step=step):
                readme = self.repo / step / "README.md"
                saved = readme.read_text()
                readme.unlink()
                self.update("--check", code=1, contains=f"{step}/README.md")
                self.refused(contains="no such README")
                readme.write_text(saved)

    def test_a_full_disk_midway_changes_no_readme(self):
        """The fifth temporary file fails as on a full disk: every README is left as it was."""
        self.new_commit()
        before = self.docs()
        driver = ("import runpy, sys, tempfile\n"
                  "real, calls = tempfile.mkstemp, []\n"
                  "def mkstemp(*a, **k):\n"
                  "    calls.append(1)\n"
                  "    if len(calls) == 5:\n"
                  "        raise OSError(28, 'No space left on device')\n"
                  "    return real(*a, **k)\n"
                  "tempfile.mkstemp = mkstemp\n"
                  f"sys.argv = ['update_readme']\n"
                  f"runpy.run_path({str(self.repo / 'scripts' / 'update_readme')!r}, run_name='__main__')\n")
        self.run_script([sys.executable, "-c", driver], 1, contains="No space left on device")
        self.assertEqual(self.docs(), before)
        self.assertEqual([p.name for p in self.repo.rglob("*.tmp")], [])
        self.update(code=0, one_line=False)
        self.assertNotEqual(self.docs(), before)

    def test_one_unwritable_readme_changes_no_readme(self):
        self.new_commit()
        readme = self.repo / STEPS[6] / "README.md"
        make_unwritable(self, readme)
        before = self.docs()
        self.update(code=1, contains=f"{STEPS[6]}/README.md")
        self.assertEqual(self.docs(), before)

    def test_missing_sweep_files(self):
        (self.main_record() / "sweep.csv").unlink()
        self.refused(contains="sweep.csv")

    def test_malformed_table(self):
        (self.main_record() / "table.json").write_text('{"meta": ')
        self.refused(contains="table.json")

    def test_empty_or_header_only_profile(self):
        profile = self.main_record() / "profile.csv"
        header = profile.read_text().splitlines()[0] + "\n"
        for text in ("", header):
            with self.subTest(text=text):
                profile.write_text(text)
                self.refused(contains="profile.csv")

    def test_each_block_keeps_its_own_files_provenance(self):
        """A table.json measured at a newer commit changes the blocks made from it and no other: the
        profile, variants and ablation blocks keep the commit in their own files' provenance."""
        own = {name: suite.read_provenance(self.main_record() / name)["commit"]
               for name in ("profile.meta.json", "variants.meta.json", "ablation.meta.json")}
        self.new_commit()
        self.update(code=0, one_line=False)
        self.update("--check", code=0)
        step = STEPS[1]
        text = (self.repo / step / "README.md").read_text()
        self.assertIn("`0123456789ab`", suite.block_between_markers(text, "measured"))
        profile = suite.block_between_markers(text, "profile").split("\n\n")[0]
        self.assertIn(f"commit `{own['profile.meta.json']}`", profile)
        self.assertNotIn("0123456789ab", profile)
        notes = (self.repo / "PERF_NOTES.md").read_text()
        variants = suite.block_between_markers(notes, "variants:atomics")
        self.assertIn(f"commit `{own['variants.meta.json']}`", variants)
        self.assertNotIn("0123456789ab", variants)
        tiles = (self.repo / "10_loads_in_flight" / "README.md").read_text()
        ablation = suite.block_between_markers(tiles, "ablation:h200")
        self.assertIn(f"commit `{own['ablation.meta.json']}`", ablation)
        self.assertNotIn("0123456789ab", ablation)

    def test_a_data_file_without_its_provenance_is_refused(self):
        for name in ("profile.meta.json", "variants.meta.json", "ablation.meta.json"):
            with self.subTest(name=name):
                path = self.main_record() / name
                kept = path.read_text()
                path.unlink()
                self.refused(contains=name)
                path.write_text('{"commit": "abc"}\n')
                self.refused(contains="lacks")
                path.write_text(kept)

    def test_unknown_provenance_is_said_so(self):
        path = self.main_record() / "profile.meta.json"
        meta = json.loads(path.read_text())
        meta.update(commit=None, date=None, cuda_runtime=None)
        path.write_text(json.dumps(meta))
        self.update(code=0, one_line=False)
        profile = suite.block_between_markers((self.repo / STEPS[0] / "README.md").read_text(), "profile")
        self.assertIn("(`scripts/profile_steps.sh`), date unknown, commit unknown.", profile)

    def test_fewer_sizes_need_force(self):
        sweep = self.main_record() / "sweep.csv"
        sweep.write_text("".join(line for line in sweep.read_text().splitlines(True) if ",1024," not in line))
        self.refused(contains="shrink")
        self.update("--force", code=0, one_line=False)

    def test_both_gpus_side_by_side_without_special_cases(self):
        readme = (self.repo / "README.md").read_text()
        gpus = suite.block_between_markers(readme, "gpus")
        self.assertIn("H200 GB/s", gpus)
        self.assertIn("H100 80GB HBM3 GB/s", gpus)
        for stale in ("08_cub", "Not measured", "Left out"):
            self.assertNotIn(stale, gpus)
        results = suite.block_between_markers(readme, "results")
        self.assertIn("NVIDIA H100", results)
        self.assertIn("NVIDIA H200", results)
        for step in STEPS:
            measured = suite.block_between_markers((self.repo / step / "README.md").read_text(), "measured")
            self.assertIn("NVIDIA H100", measured, step)
            self.assertIn(f"| {step} |", measured)

    def test_the_gain_blocks_use_the_compare_method(self):
        compare = suite.load_script("compare")
        rows, meta, why = __import__("plot_sweep").current_sweep(self.main_record(), STEPS)
        if rows is None:
            self.skipTest(f"no current sweep: {why}")
        points = __import__("plot_sweep").sweep_points(rows)
        gain = suite.block_between_markers((self.repo / STEPS[10] / "README.md").read_text(), "gain")
        for line in gain.splitlines():
            if line.startswith("| 2^"):
                k = int(line.split("|")[1].strip()[2:])
                n = 1 << k
                pair = [dict(points[s][n], iters=suite.sweep_iters(n)) for s in (STEPS[9], STEPS[10])]
                v = compare.ratio_interval(*pair)
                verdict = line.split("|")[4]  # the main record's GPU comes first: n, gain, interval, verdict
                self.assertIn(v.verdict, verdict, line)
                self.assertEqual("**faster**" in verdict, v.verdict == "faster", line)


def record(step, n, median, q1, q3, iters=50):
    return {"step": step, "n": n, "median_ms": median, "q1_ms": q1, "q3_ms": q3, "min_ms": q1 * 0.9,
            "max_ms": q3 * 1.1, "iters": iters}


class Compare(ScriptCase):
    COMPARE = [sys.executable, SCRIPTS / "compare"]

    def write_records(self, folder, records):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "run.json").write_text("".join(json.dumps(r) + "\n" for r in records))
        return folder

    def test_method(self):
        compare = suite.load_script("compare")
        old, new = record("09", 1 << 26, 1.0, 0.99, 1.01), record("09", 1 << 26, 0.8, 0.79, 0.81)
        v = compare.ratio_interval(old, new)
        self.assertAlmostEqual(v.ratio, 1.25)
        self.assertLess(v.low, 1.25)
        self.assertGreater(v.high, 1.25)
        self.assertEqual(v.verdict, "faster")
        self.assertEqual(compare.ratio_interval(new, old).verdict, "slower")
        # 1% faster with a tight interval: inside the noise floor between two runs, not claimed
        self.assertEqual(compare.ratio_interval(old, record("09", 1 << 26, 0.99, 0.989, 0.991)).verdict,
                         "within noise")
        # a wide spread: no claim even at 1.1x
        self.assertEqual(compare.ratio_interval(record("09", 1, 1.1, 0.5, 1.7, iters=5),
                                                record("09", 1, 1.0, 0.5, 1.5, iters=5)).verdict, "within noise")
        # no quartiles: min and max stand in (a wider interval)
        bare = {"median_ms": 1.0, "min_ms": 0.9, "max_ms": 1.1, "iters": 20}
        self.assertIsNotNone(compare.ratio_interval(bare, bare).low)

    def test_a_known_faster_pair(self):
        tmp = self.tmp()
        old = self.write_records(tmp / "old", [record("12_types_ops", 1 << 28, 1.0, 0.99, 1.01)])
        new = self.write_records(tmp / "new", [record("12_types_ops", 1 << 28, 0.5, 0.49, 0.51)])
        proc = self.run_script([*self.COMPARE, old, new], 0)
        self.assertIn("2.000x", proc.stdout)
        self.assertIn("1 faster, 0 slower, 0 within noise", proc.stdout)
        proc = self.run_script([*self.COMPARE, new / "run.json", old / "run.json"], 0)
        self.assertIn("0 faster, 1 slower", proc.stdout)

    def test_a_known_equal_pair(self):
        same = suite.RESULTS / "h200" / "progression"
        proc = self.run_script([*self.COMPARE, same, same], 0)
        self.assertIn(" 0 faster, 0 slower", proc.stdout)
        self.assertNotIn("| faster", proc.stdout)
        proc = self.run_script([*self.COMPARE, same.parent, same.parent], 0)  # a GPU folder: every current step
        for step in (STEPS[0], suite.read_beyond()[0]):
            self.assertIn(step, proc.stdout)
        proc = self.run_script([*self.COMPARE, same / "table.json", same / "table.json", "--format", "markdown"], 0)
        self.assertIn("| 1.000x |", proc.stdout)

    def test_bad_input(self):
        tmp = self.tmp()
        (tmp / "garbage.json").write_text("not json\n")
        (tmp / "empty.json").write_text("")
        (tmp / "a.txt").write_text("x\n")
        other = self.write_records(tmp / "other", [record("01_interleaved", 1 << 10, 1.0, 0.9, 1.1)])
        good = suite.RESULTS / "h200" / "progression" / "table.json"
        for args in ([], [good], [good, tmp / "nothing"], [good, good, "--noise", "x"], [good, good, "--noise", "2"],
                     [good, good, "--noise", "0_1"], [good, good, "--noise", "\uff10.1"], [good, good, "--noise", "nan"],
                     [good, good, "--bogus"], [good, good, "--noise", "0.1", "--noise", "0.2"], [good, tmp / "a.txt"]):
            with self.subTest(args=args):
                self.run_script([*self.COMPARE, *args], 2)
        for args in ([good, tmp / "garbage.json"], [good, tmp / "empty.json"], [other, suite.RESULTS / "h200" / "12_types_ops"]):
            with self.subTest(args=args):
                self.run_script([*self.COMPARE, *args], 1)


FAKE_BEYOND = r'''#!{python}
"""A fake step beyond the progression (or read_ceiling): one JSON record for --n and --kind;
FAKE_GBPS sets its speed."""
import json, os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
n = int(args["--n"])
gbps = float(os.environ.get("FAKE_GBPS", "100"))
r = {{"device": "NVIDIA H200", "cuda_runtime": "13.0", "cuda_driver": "13.0", "peak_gbps": 4814.3, "n": n,
      "bytes": 4 * n, "iters": 5, "median_ms": 4 * n / gbps / 1e6, "gbps": gbps, "pct_peak": gbps / 48.143}}
if os.path.basename(sys.argv[0]) == "read_ceiling":
    r.update(tool="read_ceiling", gbps=2 * gbps)
else:
    r.update(step="12_fake", lesson="a fake step", kind=args.get("--kind"), passed=True)
print(json.dumps(r))
'''


class Measure(ScriptCase):
    MEASURE = [sys.executable, SCRIPTS / "measure"]

    def fake_repo(self):
        """A copy of the scripts with one step beyond the progression, 12_fake, and its build."""
        repo = self.tmp() / "repo"
        shutil.copytree(SCRIPTS, repo / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "steps.txt", repo / "steps.txt")
        (repo / "beyond.txt").write_text("12_fake\n")
        (repo / "12_fake").mkdir()
        (repo / "12_fake" / "measure.args").write_text(
            "title: a fake step\ncolumns: kind\ntable extra: n, kind, gbps\n"
            "a | --n 1024 --kind a\nb | --n 2048 --kind b\n")
        (repo / "build" / "bin").mkdir(parents=True)
        for name in ("12_fake", suite.CEILING_TOOL):
            write_exe(repo / "build" / "bin" / name, FAKE_BEYOND.format(python=sys.executable))
        return repo

    def test_writes_the_layout_all_or_nothing(self):
        repo = self.fake_repo()
        measure = [sys.executable, repo / "scripts" / "measure", "12", repo / "build"]
        self.run_script(measure, 0, one_line=False)
        out = repo / "results" / "h200" / "12_fake"  # results/<gpu>/<step>, the GPU named from the device
        self.assertEqual(sorted(p.name for p in out.iterdir()),
                         ["a.json", "b.json", "extra.md", "meta.json", "read_ceiling_4096.json",
                          "read_ceiling_8192.json", "table.md"])
        self.assertIn("| 2^10 | a | 100 |", (out / "extra.md").read_text())
        self.assertIn("| a | 2^10 | 100.0 |", (out / "table.md").read_text())
        before = {p.name: p.read_text() for p in out.iterdir()}
        make_unwritable(self, out / "table.md")
        self.run_script(measure, 1, {"FAKE_GBPS": "200"}, one_line=False, contains="nothing written")
        self.assertEqual({p.name: p.read_text() for p in out.iterdir()}, before)
        self.assertEqual([p.name for p in out.iterdir() if p.name.startswith(".")], [])

    def test_bad_usage(self):
        step = suite.read_beyond()[0]
        build = self.fake_build()
        for args in ([step, build, "--iters", "\u00b2"], [step, build, "--iters", "\uff15"], [step, build, "--iters", "0"],
                     [step, build, "--n", "1", "--n", "2"], [step, build, "--only", "a", "--only", "b"],
                     [step, build, "--readme", "--readme"], ["99", build]):
            with self.subTest(args=args):
                self.run_script([*self.MEASURE, *args], 2)

    def test_all_or_nothing(self):
        """A file that cannot be written leaves every other file as it was."""
        out = self.tmp() / "out"
        out.mkdir()
        (out / "a.txt").write_text("old a\n")
        (out / "b.txt").mkdir()  # a folder where a file should go: its rename fails ... before any rename
        with self.assertRaises(suite.Failure):
            suite.write_files({out / "a.txt": "new a\n", out / "sub" / "c.txt": "c\n", out / "b.txt" / "x" / "y": "",
                               Path("/proc/version"): "no\n"})
        self.assertEqual((out / "a.txt").read_text(), "old a\n")
        self.assertEqual(sorted(p.name for p in out.rglob("*") if p.is_file()), ["a.txt"])


FAKE_NCU_DETAILS = r'''#!{python}
"""A fake ncu --page details: runs nothing; prints the program's report, then two launches' metrics.
FAKE_NCU=fail prints an error and exits 1, =empty prints only the report."""
import os, sys
mode = os.environ.get("FAKE_NCU", "")
if mode == "fail":
    print("==ERROR== the profiler could not reach the device (fake)", file=sys.stderr); sys.exit(1)
print("==PROF== Connected to process 1 (fake)")
print("12_fake: a report the program itself prints")
if mode == "empty":
    sys.exit(0)
print('"ID","Process ID","Kernel Name","Block Size","Grid Size","Section Name","Metric Name","Metric Unit","Metric Value"')
rows = [("0", "void ns::(anonymous namespace)::sum_fake<ns::Kind>(const float *, long)", [
            ("Duration", "usecond", "12.50"), ("DRAM Throughput", "%", "88.13"), ("Registers Per Thread", "register/thread", "40"),
            ("Grid Size", "", "16,384"), ("Block Size", "", "256"), ("Theoretical Occupancy", "%", "75"),
            ("Achieved Occupancy", "%", "72.81"), ("Waves Per SM", "", "20.69")]),
        ("1", "void ns::<unnamed>::finish_fake<ns::<unnamed>::Kind>(float *)", [("Duration", "msecond", "0.25"), ("Registers Per Thread", "register/thread", "n/a")])]
for id_, kernel, metrics in rows:
    for name, unit, value in metrics:
        print(",".join('"' + x + '"' for x in (id_, "1", kernel, "(256, 1, 1)", "(1, 1, 1)", "S", name, unit, value)))
'''


class ProfileBeyond(Measure):
    def setup_repo(self):
        repo = self.fake_repo()
        (repo / "12_fake" / "profile.args").write_text("# NAME | KERNELS | ARGUMENTS\na | regex:sum_fake|finish_fake | --n 1024\n")
        tools = self.tmp()
        write_exe(tools / "ncu", FAKE_NCU_DETAILS.format(python=sys.executable))
        return repo, [sys.executable, repo / "scripts" / "profile_beyond", "12", repo / "build"], \
            {"PATH": f"{tools}:{os.environ['PATH']}", "REDUCE_COMMIT": "0123456789ab"}

    def test_the_table_from_ncus_rows(self):
        repo, cmd, env = self.setup_repo()
        self.run_script(cmd, 0, env, one_line=False)
        out = repo / "results" / "h200" / "12_fake" / "profile"
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["meta.json", "profile.csv", "profile.md"])
        table = (out / "profile.md").read_text()
        self.assertIn("| a | `sum_fake<Kind>` | 16384 | 256 | 40 | 75 | 72.81 | 20.69 | 88.13 | 12.50 |", table)
        self.assertIn("| a | `finish_fake<Kind>` | - | - | - | - | - | - | - | 250 |", table)  # ncu's <unnamed>::
        self.assertIn("NVIDIA H200", table)
        self.assertEqual(suite.read_provenance(out / "meta.json")["commit"], "0123456789ab")
        self.assertTrue((out / "profile.csv").read_text().startswith("run,ID,"))

    def test_failures_write_nothing(self):
        repo, cmd, env = self.setup_repo()
        out = repo / "results" / "h200" / "12_fake" / "profile"
        # The run's progress line comes first, then the one line that says why.
        self.run_script(cmd, 1, {**env, "FAKE_NCU": "fail"}, one_line=False, contains="==ERROR== the profiler")
        self.run_script(cmd, 1, {**env, "FAKE_NCU": "empty"}, one_line=False, contains="no counters")
        self.assertFalse(out.exists())
        self.run_script(cmd, 1, {**env, "PATH": self.tool_path()}, contains="ncu")
        (repo / "12_fake" / "profile.args").write_text("a | regex:two words | --n 1024\n")
        self.run_script(cmd, 2, env, contains="KERNELS without spaces")
        (repo / "12_fake" / "profile.args").unlink()
        self.run_script(cmd, 2, env, contains="lists no runs to profile")
        self.assertFalse(out.exists())


if __name__ == "__main__":
    unittest.main()
