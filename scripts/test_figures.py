"""The lecture's figures and the gain blocks (CTest: scripts.figures; or python3 -m unittest -v test_figures).

The data behind them is tested everywhere: shares of the read ceiling, each step's gain over the
previous one with scripts/compare's interval, which gains are claimed, which records are current,
the ablation of steps 09 and 10 and its verdicts, what 09 and 10 launch, the toy launches of the
diagrams against the kernels' loops, and the script's refusals (missing data: exit 2 and one line;
an older record: exit 1). Drawing needs matplotlib: those tests skip with the reason where it is
absent (CI), and otherwise check that the same data gives the same files. Without matplotlib
scripts/figures must exit 77 with one line and write nothing.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import plot_sweep as ps
import suite
from test_suite import make_tmp as tmp

SCRIPTS = Path(__file__).resolve().parent
STEPS = suite.read_steps()


def committed(gpu, name):
    """A committed file of a GPU's progression, results/<gpu>/progression/<name>; None where absent."""
    path = suite.RESULTS / gpu / "progression" / name
    return path if path.is_file() else None


H200 = suite.RESULTS / "h200" / "progression"
figures = suite.load_script("figures")
update_readme = suite.load_script("update_readme")
compare = suite.load_script("compare")

try:
    import matplotlib  # noqa: F401
    HAVE_MATPLOTLIB = True
except ImportError:
    HAVE_MATPLOTLIB = False


def row(step, n, median, low, high, gbps=1.0, q1=None, q3=None):
    """A sweep row as read_sweep_csv gives it (strings); quartiles only where given."""
    r = {"step": step, "n": n, "gbps": gbps, "median_ms": str(median), "min_ms": str(low), "max_ms": str(high)}
    if q1 is not None:
        r.update(q1_ms=str(q1), q3_ms=str(q3))
    return r




class Gains(unittest.TestCase):
    def test_gain_is_the_ratio_of_medians_with_compares_interval(self):
        n = 1 << 20
        points = ps.sweep_points([row("a", n, 2.0, 1.8, 2.4, q1=1.9, q3=2.1), row("b", n, 1.0, 0.9, 1.2, q1=0.95, q3=1.05)])
        (g,) = ps.gains(points, "a", "b")
        self.assertAlmostEqual(g.gain, 2.0)
        # The sweep's CSV does not say how many runs a point timed: run_all's count for that n.
        v = compare.ratio_interval(dict(points["a"][n], iters=suite.sweep_iters(n)),
                                   dict(points["b"][n], iters=suite.sweep_iters(n)))
        self.assertEqual((g.low, g.high, g.verdict), (v.low, v.high, v.verdict))
        self.assertLess(g.low, 2.0)
        self.assertGreater(g.high, 2.0)
        self.assertEqual(g.verdict, "faster")

    def test_no_gain_is_claimed_within_noise(self):
        n = 1 << 20
        # 2% faster with a tight interval: inside the noise floor between two runs, not a gain.
        points = ps.sweep_points([row("a", n, 1.02, 1.01, 1.03, q1=1.019, q3=1.021),
                                  row("b", n, 1.00, 0.99, 1.01, q1=0.999, q3=1.001)])
        (g,) = ps.gains(points, "a", "b")
        self.assertGreater(g.low, 1.0)
        self.assertEqual(g.verdict, "within noise")
        # 10% faster at the medians, but an interval wide enough to reach below the floor.
        points = ps.sweep_points([row("a", n, 1.10, 0.5, 2.0, q1=0.8, q3=1.5), row("b", n, 1.00, 0.5, 2.0, q1=0.7, q3=1.4)])
        (g,) = ps.gains(points, "a", "b")
        self.assertLess(g.low, 1 + compare.NOISE)
        self.assertEqual(g.verdict, "within noise")

    def test_a_loss_beyond_the_noise(self):
        points = ps.sweep_points([row("a", 1 << 20, 1.0, 0.99, 1.01, q1=0.995, q3=1.005),
                                  row("b", 1 << 20, 1.2, 1.1, 1.3, q1=1.19, q3=1.21)])
        self.assertEqual(ps.gains(points, "a", "b")[0].verdict, "slower")

    def test_verdict_edges(self):
        """No spread at all: the interval is the ratio itself, and the verdict turns at the noise floor."""
        def verdict(old):
            points = ps.sweep_points([row("a", 1 << 20, old, old, old, q1=old, q3=old), row("b", 1 << 20, 1, 1, 1, q1=1, q3=1)])
            return ps.gains(points, "a", "b")[0].verdict
        floor = 1 + compare.NOISE
        self.assertEqual(verdict(floor * 1.001), "faster")
        self.assertEqual(verdict(floor * 0.999), "within noise")
        self.assertEqual(verdict(1 / floor * 1.001), "within noise")
        self.assertEqual(verdict(1 / floor * 0.999), "slower")

    def test_only_the_sizes_of_the_gain_range_that_both_steps_hold(self):
        rows = [row(s, 1 << k, 1.0, 1.0, 1.0) for s in ("a", "b") for k in range(10, 31)]
        rows = [r for r in rows if not (r["step"] == "b" and r["n"] == 1 << 20)]
        ns = [g.n for g in ps.gains(ps.sweep_points(rows), "a", "b")]
        self.assertEqual(ns, [1 << k for k in range(16, 31) if k != 20])

    def test_an_older_csv_without_min_and_max_has_the_median_ratio_as_range(self):
        points = ps.sweep_points([dict(row("a", 1 << 16, 2.0, 0, 0), min_ms="", max_ms=""),
                                  dict(row("b", 1 << 16, 1.0, 0, 0), min_ms="", max_ms="")])
        (g,) = ps.gains(points, "a", "b")
        self.assertEqual((g.low, g.high), (2.0, 2.0))

    def test_size_ranges(self):
        self.assertEqual(ps.size_ranges([1 << 16, 1 << 17, 1 << 18, 1 << 22]), "2^16-2^18, 2^22")
        self.assertEqual(ps.size_ranges([1 << 30]), "2^30")

    def test_committed_sweep(self):
        """The committed H200 sweep: step 02 beats 01 beyond the noise at large n, and 06 against 05
        (the same loop, a different tree) claims nothing at 2^26."""
        rows, _, why = ps.current_sweep(H200, STEPS)
        if rows is None:
            self.skipTest(f"results/h200 is not a current record: {why}")
        points = ps.sweep_points(rows)
        by_n = {g.n: g for g in ps.gains(points, "01_interleaved", "02_sequential")}
        self.assertEqual(by_n[1 << 28].verdict, "faster")
        by_n = {g.n: g for g in ps.gains(points, "05_multi_element", "06_warp_shuffle")}
        self.assertEqual(by_n[1 << 26].verdict, "within noise")


class CeilingShare(unittest.TestCase):
    def test_share_is_the_step_over_the_ceiling_at_the_same_n(self):
        points = ps.sweep_points([row("a", 1024, 1, 1, 1, gbps=50.0), row("a", 2048, 1, 1, 1, gbps=80.0),
                                  row(suite.CEILING_TOOL, 1024, 1, 1, 1, gbps=100.0)])
        self.assertEqual(ps.ceiling_share(points, "a"), [(1024, 0.5)])  # 2048 has no ceiling: left out

    def test_panels_overlap_and_cover_every_step(self):
        first, second = figures.panels(STEPS)
        self.assertEqual(set(first) | set(second), set(STEPS))
        self.assertEqual(first[0], STEPS[0])
        self.assertEqual(second[-1], STEPS[-1])
        self.assertTrue(set(first) & set(second), "the panels share the steps at the hand-over")

    def test_bar_whiskers_from_the_slowest_and_fastest_run(self):
        table = {"meta": {"peak_gbps": 5000.0}, "ceiling": {"gbps": 4000.0},
                 "records": [{"step": STEPS[0], "n": 1000, "bytes": 4000, "gbps": 2.0, "median_ms": 0.002,
                              "min_ms": 0.001, "max_ms": 0.004}]}
        bars, ceiling, peak = figures.bar_data(table, STEPS)
        self.assertEqual((ceiling, peak), (4000.0, 5000.0))
        step, gbps, low, high = bars[0]
        self.assertAlmostEqual(low, 1.0)   # 4000 bytes in 0.004 ms
        self.assertAlmostEqual(high, 4.0)  # in 0.001 ms

    def test_styles_differ_for_every_step(self):
        styles = ps.step_styles(STEPS)
        looks = {(s["color"], s["marker"], s["linestyle"]) for s in styles.values()}
        self.assertEqual(len(looks), len(STEPS))
        self.assertEqual(len({s["color"] for s in styles.values()}), len(STEPS), "a colour shared by two steps")


def fixture(case, gpus=("h200", "h100"), names=("table.json", "sweep.csv", "sweep_meta.json", "ablation.txt"),
            several=True):
    """A results folder in the layout, from the committed data: <gpu>/progression/ with the files of
    `names` that are committed, and h200_x2/16_multi_gpu/ when `several`."""
    root = tmp(case) / "results"
    for gpu in gpus:
        dst = root / gpu / "progression"
        dst.mkdir(parents=True)
        for name in names:
            src = committed(gpu, name)
            if src is not None:
                shutil.copyfile(src, dst / name)
    if several:
        src = suite.RESULTS / "h200_x2" / "16_multi_gpu"
        if (src / "sweep.jsonl").is_file():
            dst = root / "h200_x2" / "16_multi_gpu"
            dst.mkdir(parents=True)
            for name in ("sweep.jsonl", "meta.json"):
                shutil.copyfile(src / name, dst / name)
    return root


class Current(unittest.TestCase):
    def copy(self, folder, name="progression"):
        dst = tmp(self) / name
        dst.mkdir(parents=True)
        for name in ("table.json", "sweep.csv", "sweep_meta.json"):
            shutil.copyfile(folder / name, dst / name)
        return dst

    def test_committed_h200_is_current(self):
        table, why = ps.current_record(H200, STEPS)
        self.assertIsNotNone(table, why)

    def test_an_older_progression_is_not(self):
        folder = self.copy(H200, "earlier/0123456789ab")  # changed_steps.txt lies only under earlier/
        (folder / "changed_steps.txt").write_text(f"{STEPS[7]}: other code then\n")
        table, why = ps.current_record(folder, STEPS)
        self.assertIsNone(table)
        self.assertIn("changed_steps.txt", why)

    def test_a_table_without_ceiling_or_with_other_steps_is_not(self):
        folder = self.copy(H200)
        table = json.loads((folder / "table.json").read_text())
        del table["ceiling"]
        (folder / "table.json").write_text(json.dumps(table))
        self.assertIn("no read ceiling", ps.current_record(folder, STEPS)[1])
        table["ceiling"] = {"gbps": 1.0}
        table["records"] = table["records"][1:]
        (folder / "table.json").write_text(json.dumps(table))
        self.assertIn(STEPS[0], ps.current_record(folder, STEPS)[1])

    def test_a_sweep_without_ceiling_rows_is_not(self):
        folder = self.copy(H200)
        sweep = folder / "sweep.csv"
        sweep.write_text("".join(line for line in sweep.read_text().splitlines(True)
                                 if not line.startswith(suite.CEILING_TOOL)))
        rows, _, why = ps.current_sweep(folder, STEPS)
        self.assertIsNone(rows)
        self.assertIn("no read ceiling", why)


class GainBlock(unittest.TestCase):
    def sweeps(self, *labels):
        rows, meta, why = ps.current_sweep(H200, STEPS)
        if rows is None:
            self.skipTest(f"results/h200 is not a current record: {why}")
        return [(label, "results/h200/progression", ps.sweep_points(rows), meta) for label in labels]

    def test_one_group_of_columns_per_gpu_and_a_summary_each(self):
        block = update_readme.gain_block(STEPS[2], STEPS, self.sweeps("H200", "H100"))
        header = next(line for line in block.splitlines() if line.startswith("| n |"))
        self.assertEqual(header.count("gain"), 2)
        self.assertIn("H100 verdict", header)
        self.assertIn("95% interval", header)
        self.assertIn(f"noise floor of {100 * compare.NOISE:g}%", block)
        self.assertEqual(sum(line.startswith(("H200:", "H100:")) for line in block.splitlines()), 2)

    def test_claims_follow_the_verdicts(self):
        block = update_readme.gain_block(STEPS[2], STEPS, self.sweeps("H200"))
        rows, _, _ = ps.current_sweep(H200, STEPS)
        gains = ps.gains(ps.sweep_points(rows), STEPS[1], STEPS[2])
        table = [line for line in block.splitlines() if line.startswith("| 2^")]
        self.assertEqual(len(table), len(gains))
        for line, g in zip(table, gains):
            self.assertEqual("**faster**" in line, g.verdict == "faster", line)

    def test_first_step_has_none_and_no_sweep_says_so(self):
        self.assertIsNone(update_readme.gain_block(STEPS[0], STEPS, self.sweeps("H200")))
        self.assertIn("No current sweep", update_readme.gain_block(STEPS[1], STEPS, []))


class CheckDigest(unittest.TestCase):
    SUMMARY = """--- call 1 (every test)
GPU: NVIDIA H100 80GB HBM3, 580.159.04; nvcc 13.0; commit 0123456789ab; 2026-11-25
build: exit 0 (46 s)
tests: exit 8 (301 s)
    \t540 - gpu.Gpus/MultiGpuSizes.SumMatchesTheReference/4gpus_n65537_mixed (Skipped)
    \t1125 - scripts.bad_input (Failed)                        cpu
99% tests passed, 1 tests failed out of 1137
47 of 1137 tests skipped (build/gpu/Testing/Temporary/LastTest.log), for these reasons:
    24  needs 2 GPUs, this machine shows 1
sanitizer: exit 0 (76 s)
compute-sanitizer: memcheck, racecheck, synccheck, initcheck clean on every step (186 runs)
gpu_session: FAIL"""

    def test_keeps_what_ran_how_it_ended_and_every_failure(self):
        digest = update_readme.check_digest(self.SUMMARY).splitlines()
        self.assertEqual([line.strip().split(" ")[0] for line in digest],
                         ["---", "GPU:", "tests:", "1125", "99%", "compute-sanitizer:", "gpu_session:"])
        self.assertFalse(any("(Skipped)" in line or "build:" in line for line in digest), digest)


class Links(unittest.TestCase):
    def test_every_image_a_readme_shows_is_committed(self):
        """The figures block is written from the data, not from the files present: each image it or a
        step README links must lie in the repository (scripts/figures draws it)."""
        import re
        readmes = [suite.ROOT / "README.md"] + [suite.ROOT / s / "README.md" for s in STEPS + suite.read_beyond()]
        linked = 0
        for readme in (r for r in readmes if r.is_file()):
            for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme.read_text()):
                if "://" not in target:
                    linked += 1
                    self.assertTrue((readme.parent / target).is_file(), f"{readme}: no file {target}")
        self.assertGreater(linked, 0)


class Diagrams(unittest.TestCase):
    """The toy launches follow the kernels' loops: every chunk read exactly once."""

    def test_owners_follow_the_kernels_loops(self):
        """Each layout's owner function against the loop of the kernel run over the toy launch: every
        chunk read once, by the block and thread (and in the round or load) the picture labels."""
        blocks, threads, loads, chunks = (figures.TOY_BLOCKS, figures.TOY_THREADS, figures.TOY_LOADS,
                                          figures.TOY_CHUNKS)
        gridstride, tiles = {}, {}
        for b in range(blocks):
            for t in range(threads):
                i, r = b * threads + t, 0  # step 09: i = blockIdx.x * Block + threadIdx.x; i += stride
                while i < chunks:
                    gridstride.setdefault(i, []).append((b, t, r))
                    i, r = i + blocks * threads, r + 1
                base = b * threads * loads  # step 10: base += kTile * gridDim.x; v = base + k * Block + t
                while base < chunks:
                    for k in range(loads):
                        tiles.setdefault(base + k * threads + t, []).append((b, t, k))
                    base += threads * loads * blocks
        for name, walked, owner in (("09", gridstride, figures.gridstride_owner), ("10", tiles, figures.tile_owner)):
            self.assertEqual(sorted(walked), list(range(chunks)), name)
            for i in range(chunks):
                self.assertEqual(walked[i], [owner(i)], f"step {name}, chunk {i}")

    def test_gridstride_and_tiles_differ_where_the_lesson_says(self):
        threads, blocks = figures.TOY_THREADS, figures.TOY_BLOCKS
        # 09: block 1 starts right after block 0's first Block chunks.
        self.assertEqual(figures.gridstride_owner(threads)[0], 1)
        # 10: block 0 owns a whole tile of Block x loads chunks before block 1 starts.
        tile = threads * figures.TOY_LOADS
        self.assertEqual({figures.tile_owner(i)[0] for i in range(tile)}, {0})
        self.assertEqual(figures.tile_owner(tile)[0], 1 % blocks)

    def test_timeline_only_block_0_waits_in_08(self):
        waits = {b for b, seg in figures.timeline(handover=True) for _, _, what in seg if what == "wait"}
        self.assertEqual(waits, {0})
        waits = {b for b, seg in figures.timeline(handover=False) for _, _, what in seg if what == "wait"}
        self.assertEqual(waits, set(range(len(figures.LOOP))))


class Script(unittest.TestCase):
    def run_figures(self, *args, env=None):
        full = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
        return subprocess.run([sys.executable, str(SCRIPTS / "figures"), *map(str, args)], capture_output=True,
                              text=True, env=full, timeout=300, stdin=subprocess.DEVNULL)

    def test_bad_usage(self):
        for args in (["--gpu", "nosuchgpu"], ["--bogus"]):
            proc = self.run_figures(*args)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)

    def test_an_older_record_named_alone_is_refused(self):
        results = fixture(self, gpus=("h200",), several=False)
        path = results / "h200" / "progression" / "table.json"
        table = json.loads(path.read_text())
        table["records"] = [r for r in table["records"] if r["step"] != STEPS[7]]  # another list of steps
        path.write_text(json.dumps(table))
        out = tmp(self)
        proc = self.run_figures("--results", results, "--gpu", "h200", "--out", out)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"no {STEPS[7]}", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertEqual(list(out.iterdir()), [])

    def test_missing_data_is_named_in_one_line_and_nothing_is_drawn(self):
        results = fixture(self, names=("table.json",), several=False)
        out = tmp(self)
        proc = self.run_figures("--results", results, "--out", out)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        for name in ("h200/progression/sweep.csv", "h200/progression/ablation.txt", "h100/progression/sweep.csv"):
            self.assertIn(name, proc.stderr)
        self.assertEqual(list(out.iterdir()), [])
        empty = tmp(self)
        proc = self.run_figures("--results", empty, "--gpu", "h200")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("no h200/progression", proc.stderr)

    def test_several_gpus_without_their_records(self):
        results = fixture(self, gpus=(), several=True)
        if not (results / "h200_x2").is_dir():
            self.skipTest("no committed records of step 14 on several GPUs")
        (results / "h200_x2" / "16_multi_gpu" / "meta.json").unlink()
        proc = self.run_figures("--results", results, "--gpu", "h200_x2", "--out", tmp(self))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("h200_x2/16_multi_gpu/meta.json", proc.stderr)
        (results / "h200_x2" / "16_multi_gpu" / "meta.json").write_text("{")
        (results / "h200_x2" / "16_multi_gpu" / "sweep.jsonl").write_text("not json\n")
        proc = self.run_figures("--results", results, "--gpu", "h200_x2", "--out", tmp(self))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)

    def test_a_malformed_ablation_is_refused_before_drawing(self):
        results = fixture(self, gpus=("h100",), names=("table.json", "ablation.txt"), several=False)
        (results / "h100" / "progression" / "ablation.txt").write_text("set ablation: X\n")
        out = tmp(self)
        proc = self.run_figures("--results", results, "--gpu", "h100", "--only", "steps_bar,ablation", "--out", out)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("ablation.txt", proc.stderr)
        self.assertEqual(list(out.iterdir()), [])

    def test_bad_only(self):
        proc = self.run_figures("--only", "steps_bar,nosuchfigure")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("nosuchfigure", proc.stderr)

    def test_without_matplotlib(self):
        fake = tmp(self)
        (fake / "matplotlib").mkdir()
        (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here (test)')\n")
        out = tmp(self) / "out"
        proc = self.run_figures("--results", fixture(self, gpus=("h200",)), "--out", out, env={"PYTHONPATH": str(fake)})
        self.assertEqual(proc.returncode, 77, proc.stderr)
        self.assertIn("matplotlib", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertFalse(out.exists() and any(out.rglob("*.png")))

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed (python3 -m pip install matplotlib)")
    def test_same_data_same_files(self):
        results = fixture(self, gpus=("h200",))
        a, b = tmp(self), tmp(self)
        for out in (a, b):
            proc = self.run_figures("--results", results, "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
        files = sorted(p.relative_to(a) for p in a.rglob("*.png"))
        self.assertIn(Path(figures.TIMELINE), files)
        self.assertIn(Path(figures.ADDRESSES), files)
        for figure in figures.SINGLE:
            self.assertIn(Path("h200") / f"{figure}.png", files)
        if (results / "h200_x2").is_dir():
            self.assertIn(Path("h200_x2") / "scaling.png", files)
        for name in files:
            digest = [hashlib.sha256((root / name).read_bytes()).hexdigest() for root in (a, b)]
            self.assertEqual(digest[0], digest[1], name)
            self.assertNotIn(b"Matplotlib", (a / name).read_bytes()[:4096], f"{name}: the tool's version in it")

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed (python3 -m pip install matplotlib)")
    def test_only_some_figures_where_the_rest_is_not_measured(self):
        results = fixture(self, gpus=("h100",), names=("table.json", "ablation.txt"), several=False)
        out = tmp(self)
        proc = self.run_figures("--results", results, "--gpu", "h100", "--only", "steps_bar,ablation", "--out", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in out.rglob("*.png")), ["ablation.png", "steps_bar.png"])


class Scaling(unittest.TestCase):
    """Step 14's records for scaling.png, as scripts/measure writes them (meta.json names the runs)."""

    def record(self, n, speedup, per_gpu=0):
        return {"step": "16_multi_gpu", "mode": "single_process", "gpus": 2, "n": n, "n_per_gpu": per_gpu,
                "gbps": 1.0, "median_ms": 1.0, "device": "GPU X", "vs_single_gpu": speedup}

    def test_the_runs_meta_names_without_the_weak_ones(self):
        folder = tmp(self)
        (folder / "sweep_a.json").write_text(json.dumps(self.record(1 << 20, 0.5)) + "\n")
        (folder / "weak.json").write_text(json.dumps(self.record(1 << 31, 1.9, per_gpu=1 << 30)) + "\n")
        records = figures.scaling_records(folder, {"runs": ["sweep_a", "weak"]})
        self.assertEqual([r["n"] for r in records], [1 << 20])
        self.assertEqual(figures.speedup(records[0]), 0.5)
        with self.assertRaises(suite.Failure) as e:
            figures.scaling_records(folder, {"runs": ["sweep_a", "absent"]})
        self.assertIn("absent.json", str(e.exception))
        with self.assertRaises(suite.Failure):
            figures.scaling_records(folder, {"runs": ["weak"]})  # nothing to draw against n

    def test_speedup_of_a_record_from_before_the_rename(self):
        self.assertEqual(figures.speedup({"single_gpu_ms": 3.0, "median_ms": 1.5}), 2.0)
        self.assertIsNone(figures.speedup({"median_ms": 1.5}))


class Ablation(unittest.TestCase):
    """The ablation of steps 09 and 10 (perf/variants.cu, set ablation) as the README and the chart read it."""

    def read(self, gpu):
        path = committed(gpu, "ablation.txt")
        if path is None:
            self.skipTest(f"no committed ablation.txt of {gpu}")
        return ps.read_ablation(path)

    def test_committed_findings(self):
        """What step 10's README says, on the committed data: at 2^20 the tile-sized grid alone (b) is
        beyond the rounds and within 1% of step 10 (f) on both GPUs; at 2^22 no single change to step 09
        gives what step 10 does; at 2^28 the H200's alone-change is 512 threads (c), the H100's the tile layout (d)."""
        for gpu in ("h200", "h100"):
            effects = {(e.log2n, e.row): e for e in ps.ablation_effects(self.read(gpu))}
            self.assertEqual(effects[(20, "b")].verdict, "faster", gpu)
            self.assertLess(abs(effects[(20, "b")].vs_a - effects[(20, "f")].vs_a), 0.01, gpu)
        for gpu in ("h200", "h100"):  # 256 threads beat 512 at 2^20: e's slowest round above f's fastest
            rows = self.read(gpu)["rows"]
            self.assertGreater(rows[(20, "e")]["round_lo"], rows[(20, "f")]["round_hi"], gpu)
        for gpu in ("h200", "h100"):  # 2^22: no change to step 09 alone reaches 1.035x, step 10 does 1.07x
            effects = {(e.log2n, e.row): e for e in ps.ablation_effects(self.read(gpu))}
            self.assertLess(max(effects[(22, r)].vs_a for r in ("b", "c", "d")), 1.035, gpu)
            self.assertGreater(effects[(22, "f")].vs_a, 1.07, gpu)
            self.assertEqual(effects[(22, "f")].verdict, "faster", gpu)
        h100 = {(e.log2n, e.row): e for e in ps.ablation_effects(self.read("h100"))}
        self.assertEqual(h100[(28, "d")].verdict, "faster")
        h200 = {(e.log2n, e.row): e for e in ps.ablation_effects(self.read("h200"))}
        self.assertEqual(h200[(28, "c")].verdict, "faster")
        self.assertEqual(h200[(28, "d")].verdict, "within the rounds")

    def test_interval_from_the_rounds(self):
        text = "set ablation: GPU X, 1 SM\n" + " ".join(ps.ABLATION_COLUMNS) + "\n" + \
            "20 a 09 stride 256 n/4B 4 100 90 110 99 101 1.000 PASS\n" + \
            "20 b x stride 256 n/16B 1 120 100 130 118 122 1.200 PASS\n" + \
            "20 c x stride 512 n/4B 2 101 90 110 100 102 1.010 PASS\n"
        path = tmp(self) / "ablation.txt"
        path.write_text(text)
        effects = {e.row: e for e in ps.ablation_effects(ps.read_ablation(path))}
        self.assertAlmostEqual(effects["b"].low, 118 / 101)
        self.assertAlmostEqual(effects["b"].high, 122 / 99)
        self.assertEqual(effects["b"].verdict, "faster")
        self.assertEqual(effects["c"].verdict, "within the rounds")
        table = ps.ablation_table(ps.read_ablation(path), "here")
        self.assertIn("**1.200x", table)
        self.assertIn("| 2^20 |", table)

    def test_malformed_or_failed_is_refused(self):
        head = "set ablation: GPU X\n" + " ".join(ps.ABLATION_COLUMNS) + "\n"
        for body in ("20 a 09 stride 256 n/4B 4 100 90 110 99 101 1.000 FAIL\n",
                     "20 a 09 stride 256 n/4B 4 100 90 110 99 1.000 PASS\n",
                     "20 a 09 stride 256 n/4B four 100 90 110 99 101 1.000 PASS\n", ""):
            path = tmp(self) / "ablation.txt"
            path.write_text(head + body)
            with self.assertRaises(suite.Failure, msg=body):
                ps.read_ablation(path)


class Grid(unittest.TestCase):
    def test_what_09_and_10_launch(self):
        """From the committed H200 sweep: at 2^20 step 09's threads have one float4 each and step 10 has
        an eighth of its blocks; at 2^21 and 2^22 09's threads have about 2 and 3.9 float4s."""
        rows, meta, why = ps.current_sweep(H200, STEPS)
        if rows is None:
            self.skipTest(f"results/h200 is not a current record: {why}")
        data = {suite.log2(d[0]): d for d in figures.grid_data(rows, STEPS)}
        n, b09, b10, f09, f10, gain = data[20]
        self.assertEqual((b09, b10 * 8, f09, f10), (1024, 1024, 1.0, 4.0))
        self.assertAlmostEqual(data[21][3], 1.94, places=2)
        self.assertAlmostEqual(data[22][3], 3.88, places=2)


if __name__ == "__main__":
    unittest.main()
