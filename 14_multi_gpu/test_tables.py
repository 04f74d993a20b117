"""tables.py on made-up records (a fixture, not a measurement): the tables, the crossover rule, and the
README block that is replaced only when every folder has its records."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tables  # noqa: E402


def record(mode, gpus, n, median, single):
    return {"step": "14_multi_gpu", "mode": mode, "gpus": gpus, "n": n, "median_ms": median, "min_ms": median,
            "max_ms": median, "gbps": n * 4 / (median * 1e-3) / 1e9, "collective_ms": 0.01,
            "collective_share": 0.01 / median, "single_gpu_ms": single, "passed": True, "device": "GPU",
            "cuda_runtime": "13.0", "cuda_driver": "13.0", "nccl_version": "2.28.3", "pattern": "int"}


def write(folder, name, records):
    with open(os.path.join(folder, name), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


class Tables(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        sweep = []
        for k in range(16, 33):
            n = 2**k
            one = 0.01 + n / 4e9
            sweep += [record("single_process", 1, n, one + 0.01, one), record("single_process", 2, n, 0.03 + n / 8e9, one)]
        sweep[-3]["single_gpu_ms"] = sweep[-3]["median_ms"] / 2  # 2^31, N = 2 slower than one GPU: crossover above
        write(self.dir, "sweep.jsonl", sweep)
        write(self.dir, "weak.jsonl", [record("single_process", g, g * 2**30, 0.3, None) for g in (1, 2)])

    def test_tables_and_crossover(self):
        text = tables.markdown(self.dir)
        self.assertIn("Strong scaling, n = 2^32", text)
        self.assertIn("Weak scaling, 2^30 floats per GPU", text)
        self.assertIn("| one process | 2 | 2^32 |", text)  # the crossover: 2^31 lost, so 2^32
        self.assertIn("Targets: one process, 2 GPUs:", text)

    def test_readme_block_replaced_and_refused_without_records(self):
        readme = os.path.join(self.dir, "README.md")
        with open(readme, "w") as f:
            f.write("a\n<!-- multigpu:begin -->\n(not measured yet)\n<!-- multigpu:end -->\nb\n")
        script = os.path.join(HERE, "tables.py")
        ok = subprocess.run([sys.executable, script, self.dir, "--readme", readme], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        with open(readme) as f:
            self.assertIn("Strong scaling", f.read())
        os.remove(os.path.join(self.dir, "weak.jsonl"))
        before = open(readme).read()
        bad = subprocess.run([sys.executable, script, self.dir, "--readme", readme], capture_output=True, text=True)
        self.assertEqual(bad.returncode, 1)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1)
        self.assertEqual(open(readme).read(), before)


if __name__ == "__main__":
    unittest.main()
