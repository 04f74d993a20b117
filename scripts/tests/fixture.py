"""A small tree laid out like the repository (steps.txt, beyond.txt, records, READMEs and fake step
executables), made in a temporary folder; scripts/suite runs on it through REDUCE_ROOT."""

import json
import os
import random
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SUITE = Path(__file__).resolve().parent.parent / "suite"
STEPS = [("00_atomic", 1 << 12), ("01_tree", 1 << 12), ("02_fast", 1 << 10)]
GPUS = {"h200": ("NVIDIA H200", 4800.0), "h100": ("NVIDIA H100 80GB HBM3", 3350.0)}

# A step executable without a GPU: FAKE=nogpu exits 77, FAKE=fail prints a record that did not pass;
# otherwise one record per run, its speed from the step's number, its samples drawn with a fixed seed.
# FAKE_LOG=FILE: each run adds its name and arguments to FILE.
FAKE_EXE = r"""#!/usr/bin/env python3
import json, os, random, sys
args = sys.argv[1:]
mode = os.environ.get("FAKE", "")
if os.environ.get("FAKE_LOG"):
    open(os.environ["FAKE_LOG"], "a").write(" ".join([os.path.basename(sys.argv[0])] + args) + "\n")
if mode == "nogpu":
    sys.exit(print("STEP: no usable CUDA device: none found", file=sys.stderr) or 77)
if "--bogus" in args:
    sys.exit(print("STEP: unknown option --bogus", file=sys.stderr) or 2)
opt = lambda k, d: args[args.index(k) + 1] if k in args else d
n = opt("--n", "67108864"); n = 1 << int(n[2:]) if n.startswith("2^") else int(n)
name = os.path.basename(sys.argv[0]); speed = 1 + int(name[:2]) if name[:2].isdigit() else 10
rng = random.Random(n * 31 + speed)
ms = [(4 * n / 1e9 / (100 * speed) + 1e-3) * rng.uniform(0.99, 1.01) for _ in range(int(opt("--iters", "30")))]
med = sorted(ms)[len(ms) // 2]
rec = {"step": name, "lesson": "lesson " + name, "device": "NVIDIA H200", "n": n, "bytes": 4 * n, "median_ms": med,
       "min_ms": min(ms), "max_ms": max(ms), "gbps": 4 * n / med / 1e6, "pct_peak": 50.0, "peak_gbps": 4800.0,
       "passed": mode != "fail", "iters": len(ms), "memory_bytes": 80e9, "cuda_runtime": "13.0", "samples_ms": ms}
if "--type" in args:
    rec["type"] = opt("--type", "")
if name == "read_ceiling":
    rec.update(tool="read_ceiling", step=None, passed=True)
print(json.dumps(rec))
"""


def record(step, n, gpu, speed, rng, samples=True):
    ms = [(4 * n / 1e9 / (100 * speed) + 1e-3) * rng.uniform(0.99, 1.01) for _ in range(20)]
    med = sorted(ms)[10]
    r = {
        "step": step,
        "lesson": f"lesson {step}",
        "device": GPUS[gpu][0],
        "n": n,
        "bytes": 4 * n,
        "median_ms": med,
        "min_ms": min(ms),
        "max_ms": max(ms),
        "gbps": 4 * n / med / 1e6,
        "pct_peak": 10.0,
        "peak_gbps": GPUS[gpu][1],
        "cpu_ms": 5.0,
        "passed": True,
        "iters": 20,
        "cuda_runtime": "13.0",
    }
    return dict(r, samples_ms=ms) if samples else r


# 12_types's README layout (scripts/reduce_tools/runlist.py): its tables' title, columns and second table.
LAYOUT = "<!-- 12_types:layout\ntitle: every type\ncolumns: type\ntable bits: type, result_bits\n-->\n"


def make_tree(root):
    """Writes the tree under root; returns root."""
    root = Path(root)
    root.mkdir()
    rng = random.Random(7)

    def meta(gpu):
        return {
            "device": GPUS[gpu][0],
            "cuda_runtime": "13.0",
            "date": "2026-11-27",
            "commit": "abcdef123456",
            "n": 1 << 12,
        }

    (root / "steps.txt").write_text("# steps\n" + "".join(f"{s} 2^{n.bit_length() - 1}\n" for s, n in STEPS))
    (root / "beyond.txt").write_text("12_types\n")
    (root / "12_types").mkdir()
    (root / "12_types" / "runs.txt").write_text(
        "for type in float double\nsmoke {type}.n1 | --type {type} --n 1\n"
        "measure {type} | --type {type} --n 2^12\nend\n"
        "cli bad | 2 | --type | --type half\nsanitize all | --n 5\n"
    )
    for gpu in GPUS:
        prog = root / "results" / gpu / "progression"
        prog.mkdir(parents=True)
        recs = [record(s, 1 << 12, gpu, k + 1, rng, samples=gpu == "h200") for k, (s, _) in enumerate(STEPS)]
        ceiling = {"tool": "read_ceiling", "n": 1 << 12, "gbps": 3000.0, "median_ms": 0.01}
        (prog / "table.json").write_text(json.dumps({"meta": meta(gpu), "records": recs, "ceiling": ceiling}))
        sweep = [record(s, n, gpu, k + 1, rng) for n in (1 << 10, 1 << 11, 1 << 12) for k, (s, _) in enumerate(STEPS)]
        sweep += [dict(ceiling, step="read_ceiling", n=n, passed=True) for n in (1 << 10, 1 << 11, 1 << 12)]
        (prog / "sweep.json").write_text(json.dumps({"meta": meta(gpu), "records": sweep}))
        (prog / "profile.csv").write_text(
            '"step","ID","Kernel Name","Block Size","Grid Size","Metric Name","Metric Unit","Metric Value"\n'
            + "".join(
                f'"{s}","0","k_{s}(float*)","(256, 1, 1)","(64, 1, 1)",'
                f'"dram__throughput.avg.pct_of_peak_sustained_elapsed","%","{k}"\n'
                for k, (s, _) in enumerate(STEPS)
            )
        )
        beyond = root / "results" / gpu / "12_types"
        beyond.mkdir()
        (beyond / "meta.json").write_text(json.dumps(dict(meta(gpu), runs=["float", "double"])))
        for t in ("float", "double"):
            (beyond / f"{t}.json").write_text(
                json.dumps(dict(record("12_types", 1 << 12, gpu, 3, rng), type=t, result_bits="0x1")) + "\n"
            )
    for s, _ in STEPS:
        (root / s).mkdir()
        (root / s / "kernel.cu").write_text(f"// {s}\n__global__ void reduce_{s[3:]}() {{}}\n")
        blocks = ["measured", "profile", "footer"] + (["gain"] if s != STEPS[0][0] else [])
        (root / s / "README.md").write_text(
            f"# {s}\n\n" + "".join(f"<!-- {b}:begin -->\n<!-- {b}:end -->\n\n" for b in blocks)
        )
    (root / "12_types" / "README.md").write_text(
        LAYOUT + "".join(f"<!-- {b}:begin -->\n<!-- {b}:end -->\n" for b in ("12_types", "12_types:bits", "footer"))
    )
    (root / "README.md").write_text(
        "# suite\n\n<!-- results:begin -->\n<!-- results:end -->\n\ntext\n\n"
        "<!-- footer:begin -->\nold\n<!-- footer:end -->\n"
    )
    bindir = root / "build" / "bin"
    bindir.mkdir(parents=True)
    (root / "build" / "CMakeCache.txt").write_text("")
    for name in [s for s, _ in STEPS] + ["12_types", "read_ceiling"]:
        (bindir / name).write_text(FAKE_EXE)
        (bindir / name).chmod(0o755)
    return root


class TreeCase(unittest.TestCase):
    """A test with its own tree (self.root) and its own empty TMPDIR, checked empty again afterwards."""

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.root = make_tree(Path(self._dir.name) / "tree")
        self.tmp = Path(self._dir.name) / "tmp"
        self.tmp.mkdir()

    def tearDown(self):
        leaked = list(self.tmp.iterdir())
        self._dir.cleanup()
        self.assertEqual(leaked, [], "a command left files in TMPDIR")

    def suite(self, *args, env=None, stdout=subprocess.PIPE):
        """scripts/suite on the tree: (exit code, stdout, stderr)."""
        inherited = {k: v for k, v in os.environ.items() if k != "CMAKE_BUILD_PARALLEL_LEVEL"}  # a test sets its own
        e = dict(
            inherited, REDUCE_ROOT=str(self.root), TMPDIR=str(self.tmp), REDUCE_COMMIT="abcdef123456", **(env or {})
        )
        p = subprocess.run(
            [sys.executable, str(SUITE), *map(str, args)],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            env=e,
            timeout=120,
        )
        return p.returncode, p.stdout or "", p.stderr

    def assertOneLine(self, code, result):
        rc, _, err = result
        self.assertEqual(rc, code, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertNotIn("Traceback", err)

    def snapshot(self):
        return {p: p.read_bytes() for p in self.root.rglob("*") if p.is_file()}
