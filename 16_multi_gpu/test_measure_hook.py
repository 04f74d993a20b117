"""Step 14 under scripts/measure, without a GPU: measure.args (its mpi lines), the scaling tables of
measure_hook.py on made-up records (a fixture, not a measurement), and scripts/measure's exit code 77
where the step finds no GPU."""
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import measure_hook  # noqa: E402
import suite  # noqa: E402  (scripts/, on the path through measure_hook)


def record(mode, gpus, n, median, speedup, per_gpu=0, passed=True):
    return {"step": "16_multi_gpu", "mode": mode, "gpus": gpus, "n": n, "n_per_gpu": per_gpu, "median_ms": median,
            "min_ms": median * 0.99, "max_ms": median * 1.01, "gbps": n * 4 / (median * 1e-3) / 1e9,
            "collective_share": 0.01 / median, "vs_single_gpu": speedup, "passed": passed}


class MeasureArgs(unittest.TestCase):
    def test_runs_and_mpi_lines(self):
        measure = suite.load_script("measure")
        plan = measure.Plan(HERE / "measure.args")
        names = [name for name, _ in plan.runs]
        self.assertIn("all_large", names)
        self.assertEqual(plan.mpi.get("mpi_large"), "all")
        self.assertNotIn("all_large", plan.mpi)
        self.assertFalse(plan.ceiling)
        for name, args in plan.runs:
            # the ordinary runs time step 10 alone beside them; the reproducible ones (repro_*,
            # gpus2_repro_*) the ordinary mode
            self.assertIn("--reproducible" if "repro" in name else "--single-gpu", args, name)
            self.assertFalse(any("|" in a or a == "mpi" for a in args), name)
        self.assertEqual(plan.tables["reproducible"][0], "ranks")  # the records that have it, only

    def test_reproducible_table_lists_only_the_reproducible_records(self):
        measure = suite.load_script("measure")
        fields = measure.Plan(HERE / "measure.args").tables["reproducible"]
        repro = dict(record("reproducible_virtual", 1, 1000003, 1.0, 0), ranks=3, result_bits="0x3f800000",
                     step15_bits="0x3f800000", same_as_step15=True, tiles_per_rank=6, ordinary_median_ms=0.9,
                     vs_ordinary=0.9)
        meta = {"device": "GPU", "date": "2026-01-01", "commit": "abc"}
        md = measure.field_table("16_multi_gpu", meta, fields,
                                 [("one_gpu", [record("single_process", 1, 1 << 28, 1.0, 1.0)]), ("repro", [repro])])
        rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line][1:]
        self.assertEqual(len(rows), 1, md)
        self.assertIn("| 3 | reproducible_virtual | 1 |", rows[0])
        self.assertIn("| yes |", rows[0])

    def test_malformed_mpi_line_is_refused(self):
        measure = suite.load_script("measure")
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            bad = Path(d) / "measure.args"
            bad.write_text("x | mpirun 2 | --n 4\n")
            with self.assertRaises(measure.Failure):
                measure.Plan(bad)


class Tables(unittest.TestCase):
    def setUp(self):
        strong = []
        for mode in ("single_process", "mpi"):
            for k, (ms1, ms2) in zip(range(24, 33, 4), ((0.1, 0.12), (1.0, 0.6), (15.0, 7.6))):
                strong.append(record(mode, 1, 1 << k, ms1, 1.0))
                strong.append(record(mode, 2, 1 << k, ms2, ms1 / ms2))
        weak = [record("single_process", 1, 1 << 30, 1.0, 1.0, per_gpu=1 << 30),
                record("single_process", 2, 1 << 31, 1.02, 1.96, per_gpu=1 << 30)]
        self.md = measure_hook.tables([("sweep", strong), ("weak", weak)])

    def test_strong_scaling_at_the_largest_n(self):
        self.assertIn("Strong scaling at n = 2^32", self.md)
        self.assertIn("| one process | 2 |", self.md)
        self.assertIn("| MPI, one per GPU | 2 |", self.md)
        self.assertIn("1.97x", self.md)  # 15.0 / 7.6

    def test_targets_at_the_largest_n(self):
        self.assertIn("one process, 2 GPUs: 1.97x against a target of 1.9x (met); collective 0.13% against "
                      "under 5% (met).", self.md)  # 0.01 / 7.6 of the time
        md = measure_hook.tables([("x", [record("mpi", 2, 1 << 20, 1.0, 1.5), record("mpi", 3, 1 << 20, 0.1, 9.0)])])
        self.assertIn("MPI, one per GPU, 2 GPUs: 1.50x against a target of 1.9x (missed); collective 1.00% against "
                      "under 5% (met).", md)
        self.assertNotIn("3 GPUs:", md.split("Targets:")[1].split("\n")[0])  # no target for 3

    def test_crossover_is_where_two_gpus_stay_faster(self):
        self.assertIn("one process, 2 GPUs: faster than one GPU from n = 2^28 on", self.md)

    def test_weak_scaling_efficiency(self):
        self.assertIn("Weak scaling, 2^30 floats per GPU", self.md)
        self.assertIn("| 0.98 |", self.md)  # 1.0 / 1.02

    def test_a_failed_record_shows(self):
        md = measure_hook.tables([("x", [record("mpi", 2, 1 << 20, 1.0, 0.5, passed=False)])])
        self.assertIn("FAIL", md)
        self.assertIn("not faster than one GPU at any n measured", md)

    def test_reproducible_records_stay_out_of_the_scaling_tables(self):
        repro = record("reproducible", 2, 1 << 32, 1.0, 0.0)
        md = measure_hook.tables([("sweep", [record("single_process", 2, 1 << 28, 1.0, 1.5)]), ("repro", [repro])])
        self.assertIn("Strong scaling at n = 2^28", md)
        self.assertNotIn("reproducible", md)

    def test_nothing_to_tabulate(self):
        self.assertEqual(measure_hook.tables([]), "")


class NoGpu(unittest.TestCase):
    def test_measure_14_exits_77_where_the_step_finds_no_gpu(self):
        with tempfile.TemporaryDirectory() as build:
            exe = Path(build) / "bin" / "16_multi_gpu"
            exe.parent.mkdir()
            exe.write_text("#!/bin/sh\necho '16_multi_gpu: no usable CUDA device: no CUDA device found' >&2\nexit 77\n")
            exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
            p = subprocess.run([sys.executable, str(ROOT / "scripts" / "measure"), "14", build], capture_output=True,
                               text=True, env=dict(os.environ, PATH="/usr/bin:/bin"))
            self.assertEqual(p.returncode, 77, p.stderr)
            self.assertIn("no usable CUDA device", p.stderr)
            self.assertNotIn("Traceback", p.stderr)


if __name__ == "__main__":
    unittest.main()
