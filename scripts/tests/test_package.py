"""The package as users meet it: python -m reduce_tools, --version, help for every option, compare
across GPUs, and what run and gpu build."""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from reduce_tools import __version__, cli
from tests.fixture import SUITE, TreeCase

REPO = SUITE.parent.parent


class Package(unittest.TestCase):
    def test_module_runs_as_the_script(self):
        env = dict(os.environ, PYTHONPATH=str(SUITE.parent))
        got = [
            subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
            for cmd in (
                [sys.executable, "-m", "reduce_tools", "runs", "12"],
                [sys.executable, str(SUITE), "runs", "12"],
            )
        ]
        self.assertEqual(got[0].returncode, 0, got[0].stderr)
        self.assertEqual(got[0].stdout, got[1].stdout)
        self.assertEqual(
            subprocess.run([sys.executable, "-m", "reduce_tools", "bogus"], env=env, capture_output=True).returncode, 2
        )

    def test_version_and_commit(self):
        cmake = (REPO / "CMakeLists.txt").read_text()
        self.assertIn(f"VERSION {__version__} ", cmake)
        out = subprocess.run([sys.executable, str(SUITE), "--version"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, rf"^suite {re.escape(__version__)} \(commit ([0-9a-f]{{40}}|unknown)\)\n$")
        with tempfile.TemporaryDirectory() as d:  # outside git: the commit is unknown
            shutil.copytree(SUITE.parent, Path(d) / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy(REPO / "CMakeLists.txt", d)
            out = subprocess.run(
                [sys.executable, "-B", str(Path(d) / "scripts" / "suite"), "--version"], capture_output=True, text=True
            )
            self.assertEqual(out.stdout, f"suite {__version__} (commit unknown)\n", out.stderr)

    def test_every_option_has_help(self):
        def actions(p, where):
            for a in p._actions:
                yield where, a
                if isinstance(a, argparse._SubParsersAction):
                    for name, sub in a.choices.items():
                        yield from actions(sub, name)

        for where, a in actions(cli.parser(), "suite"):
            with self.subTest(command=where, option=a.option_strings or a.dest):
                self.assertTrue(a.help and a.help != argparse.SUPPRESS)
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    self.assertIn("usage: suite " + name, sub.format_help())  # argparse formats help with %


class AcrossGpus(TreeCase):
    def test_compare_refuses_two_gpus_unless_asked(self):
        r = self.root / "results"
        old, new = r / "h100" / "progression" / "table.json", r / "h200" / "progression" / "table.json"
        rc, out, err = self.suite("compare", old, new)
        self.assertOneLine(2, (rc, out, err))
        self.assertIn("--across-gpus", err)
        self.assertEqual(out, "")
        rc, out, err = self.suite("compare", old, new, "--across-gpus")
        self.assertEqual(rc, 0, err)
        self.assertIn("of 3 points", out)


# cmake as the tests see it: logs its arguments; configure writes a cache, a build copies the fake
# executables of the targets named (the tree's build/bin) into BUILD/bin.
FAKE_CMAKE = r"""#!/bin/sh
echo "$*" >> "$CMAKE_LOG"
if [ "$1" = "--build" ]; then
  mkdir -p "$2/bin"
  for t in "$@"; do [ -f "$FAKE_BIN/$t" ] && cp "$FAKE_BIN/$t" "$2/bin/"; done
else
  while [ "$1" != "-B" ]; do shift; done
  mkdir -p "$2" && : > "$2/CMakeCache.txt"
fi
exit 0
"""


class Builds(TreeCase):
    def cmake_calls(self, *args, env=None):
        """scripts/suite with a fake cmake, nvidia-smi (one GPU) and compute-sanitizer (clean) on PATH:
        its exit code, stderr and cmake's calls."""
        tools = self.tmp.parent / "tools"
        tools.mkdir(exist_ok=True)
        for name, text in (
            ("cmake", FAKE_CMAKE),
            ("nvidia-smi", "#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: x)'\n"),
            ("compute-sanitizer", "#!/bin/sh\nexit 0\n"),
        ):
            (tools / name).write_text(text)
            (tools / name).chmod(0o755)
        log = self.tmp.parent / "cmake.log"
        log.unlink(missing_ok=True)
        env = {
            "PATH": f"{tools}:{os.environ['PATH']}",
            "CMAKE_LOG": str(log),
            "FAKE_BIN": str(self.root / "build" / "bin"),
            **(env or {}),
        }
        rc, out, err = self.suite(*args, env=env)
        return rc, err, log.read_text().splitlines() if log.exists() else []

    def test_gpu_shows_progress_and_takes_the_parallel_level(self):
        out = self.tmp.parent / "out"
        rc, err, calls = self.cmake_calls("gpu", out, "--parts", "build")
        self.assertEqual(rc, 0, err)
        self.assertIn("configure: running", err)
        self.assertIn("build: running", err)
        self.assertTrue(calls[1].endswith(f"--parallel {os.cpu_count()}"), calls)
        rc, err, calls = self.cmake_calls("gpu", out, "--parts", "build", env={"CMAKE_BUILD_PARALLEL_LEVEL": "3"})
        self.assertEqual(rc, 0, err)
        self.assertEqual(calls[1], f"--build {out / 'build'}")  # cmake reads the level itself
        rc, err, _ = self.cmake_calls("gpu", out, "--parts", "sanitizer", "--build-dir", self.root / "build")
        self.assertEqual(rc, 0, err)
        lines = [x for x in err.splitlines() if x.startswith("compute-sanitizer [")]
        self.assertEqual(len(lines), 28, err)  # 3 steps x 4 tools x 2 sizes, and 12_types' sanitize line x 4 tools
        self.assertIn("compute-sanitizer [28/28] ", err)
        self.assertTrue(all(x.endswith(": clean") for x in lines), lines)

    def test_gpu_says_a_failed_part_in_one_line(self):  # its summary may go to a lost stdout
        empty = self.tmp.parent / "empty"
        empty.mkdir(exist_ok=True)
        rc, err, _ = self.cmake_calls("gpu", self.tmp.parent / "o", "--build-dir", empty, "--parts", "table")
        self.assertEqual(rc, 1, err)
        self.assertRegex(err.splitlines()[-1], r"^suite: FAIL: table \(see '.*summary\.txt'\)$")
        self.assertEqual(len([x for x in err.splitlines() if x.startswith("suite: ")]), 1, err)

    def test_run_builds_only_what_it_runs(self):
        b = self.tmp.parent / "b"
        rc, err, calls = self.cmake_calls("run", "--build-dir", b, "--steps", "00,02")
        self.assertEqual(rc, 0, err)
        self.assertIn("-DCMAKE_BUILD_TYPE=Release", calls[0])
        self.assertRegex(calls[1], rf"^--build {re.escape(str(b))} .*--target 00_atomic 02_fast read_ceiling$")
        rc, err, calls = self.cmake_calls("run", "--build-dir", b)  # configured once: only the build
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(calls), 1)
        self.assertTrue(calls[0].endswith("--target 00_atomic 01_tree 02_fast read_ceiling"), calls)
        rc, err, calls = self.cmake_calls("ab", "02", "--build-dir", b, "--rounds", "1", "--iters", "5")
        self.assertEqual(rc, 0, err)
        self.assertTrue(calls[0].endswith("--target 01_tree 02_fast"), calls)
