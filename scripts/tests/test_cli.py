"""scripts/suite as a user runs it, on a small tree (fixture.py) with fake step executables."""

import importlib.util
import json
import os
import subprocess
import sys
import unittest

from tests.fixture import LAYOUT, SUITE, TreeCase

BIG = "9" * 5000


class Readme(TreeCase):
    def test_write_then_check(self):
        self.assertEqual(self.suite("readme")[0], 0)
        rc, out, err = self.suite("readme", "--check")
        self.assertEqual(rc, 0, out + err)
        text = (self.root / "01_tree" / "README.md").read_text()
        self.assertIn("| H200 | 2^12 |", text)
        self.assertIn("gain_01_tree.png", text)
        self.assertIn("[`results/h100/progression`](../results/h100/progression), commit `abcdef1`", text)
        self.assertIn("docs/results.md", (self.root / "README.md").read_text())
        self.assertIn("## H100 80GB HBM3", (self.root / "docs" / "results.md").read_text())
        self.assertIn("| float | 0x1 |", (self.root / "12_types" / "README.md").read_text())

    def edit(self, path, old, new):
        p = self.root / path
        p.write_text(p.read_text().replace(old, new, 1))

    def test_check_fails_on_an_edit_a_marker_or_a_lost_block(self):
        self.suite("readme")
        cases = [
            ("01_tree/README.md", "| H200 |", "| H201 |"),
            ("01_tree/README.md", "<!-- measured:begin -->", "<!--measured:begin-->"),
            ("01_tree/README.md", "<!-- gain:end -->", ""),
            ("12_types/README.md", "<!-- 12_types:bits:begin -->", "<!-- 12_types:bits:begin -->x<!-- nope:end -->"),
            ("docs/results.md", "H100", "H1OO"),
        ]
        for path, old, new in cases:
            with self.subTest(path=path, old=old):
                before = (self.root / path).read_text()
                self.edit(path, old, new)
                self.assertOneLine(1, self.suite("readme", "--check"))
                (self.root / path).write_text(before)
        text = (self.root / "01_tree" / "README.md").read_text()
        start, end = text.index("<!-- profile:begin -->"), text.index("<!-- profile:end -->") + 20
        (self.root / "01_tree" / "README.md").write_text(text[:start] + text[end:])  # the whole block gone
        rc, _, err = self.suite("readme", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("lacks the block profile", err)

    def test_check_fails_on_process_text_outside_the_blocks(self):
        self.suite("readme")
        self.assertEqual(self.suite("readme", "--check")[0], 0)  # the footers' commits and dates are rendered
        for text, found in (
            ("fixed at c0cc5f0 on the H200", "'c0cc5f0'"),
            ("see 1a91397e2b", "'1a91397e2b'"),
            ("measured 2026-11-25", "'2026-11-25'"),
            ("run git show HEAD", "'git show'"),
        ):
            with self.subTest(text=text):
                self.edit("01_tree/README.md", "# 01_tree", f"# 01_tree\n\n{text}")
                rc, _, err = self.suite("readme", "--check")
                self.assertOneLine(1, (rc, _, err))
                self.assertIn(f"01_tree/README.md:3: {found} is process text", err)
                self.edit("01_tree/README.md", f"\n\n{text}", "")
        for text in ("a deadline of 2^26 floats", "1234567 floats", "0x7fffffff", "abcdefab", "stride 64 KB"):
            self.edit("01_tree/README.md", "# 01_tree", f"# 01_tree {text}")
            self.assertEqual(self.suite("readme", "--check")[0], 0, text)
            self.edit("01_tree/README.md", f" {text}", "")

    def test_a_demo_table_and_the_full_tables_in_the_results_page(self):
        (self.root / "beyond.txt").write_text("12_types 2^12\n")
        layout = LAYOUT.replace("columns: type\n", "columns: type\ndemo: double\n")
        (self.root / "12_types" / "README.md").write_text(
            layout + "<!-- 12_types:demo:begin -->\n<!-- 12_types:demo:end -->\n"
            "<!-- footer:begin -->\n<!-- footer:end -->\n"
        )
        self.assertEqual(self.suite("readme")[0], 0)
        self.assertEqual(self.suite("readme", "--check")[0], 0)
        text = (self.root / "12_types" / "README.md").read_text()
        self.assertIn("**H200**, n = 2^12:", text)
        self.assertIn("| double |", text)
        self.assertNotIn("| float |", text)
        page = (self.root / "docs" / "results.md").read_text()
        self.assertIn("## 12_types", page)
        self.assertIn("| float | 0x1 |", page)  # the named table, whole
        records = self.root / "results" / "h200" / "12_types" / "double.json"
        record = json.loads(records.read_text())
        records.write_text(records.read_text() + json.dumps(dict(record, n=1 << 14)) + "\n")
        self.suite("readme")
        demo = (self.root / "12_types" / "README.md").read_text().split("12_types:demo:begin")[1]
        self.assertEqual(demo.split("12_types:demo:end")[0].count("| double |"), 2)  # one a GPU: at the demo n
        self.edit("12_types/README.md", "columns: type\n", "columns: type, n\n")  # every n, each row's
        self.assertEqual(self.suite("readme")[0], 0)
        text = (self.root / "12_types" / "README.md").read_text()
        self.assertIn("**H200**:", text)
        self.assertIn("| double | 2^12 |", text)
        self.assertIn("| double | 2^14 |", text)
        (self.root / "12_types" / "README.md").write_text(layout + "<!-- footer:begin -->\n<!-- footer:end -->\n")
        rc, _, err = self.suite("readme", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("lacks the block 12_types:demo", err)

    def test_gains_from_the_interleaved_records(self):
        self.edit(
            "README.md",
            "text",
            "<!-- path:begin -->\n<!-- path:end -->\n\n<!-- ab:begin -->\n<!-- ab:end -->\n\n"
            "<!-- ab:02_fast:begin -->\n<!-- ab:02_fast:end -->",
        )
        self.assertEqual(self.suite("readme")[0], 0)  # no record yet: said so
        self.assertIn("Not recorded yet: `scripts/suite ab 01 02 --out results`", (self.root / "README.md").read_text())
        ab = {
            "meta": {"device": "NVIDIA H200", "commit": "1234abc9", "date": "2026-11-28", "rounds": 5, "iters": 30},
            "records": [
                {
                    "step": "01_tree",
                    "against": "00_atomic",
                    "n": 1 << 12,
                    "ratio": 0.5,
                    "low": 0.48,
                    "high": 0.52,
                    "verdict": "faster",
                },
                {
                    "step": "02_fast",
                    "against": "01_tree",
                    "n": 1 << 10,
                    "ratio": 0.99,
                    "low": 0.97,
                    "high": 1.01,
                    "verdict": "within noise",
                },
            ],
        }
        (self.root / "results" / "h200" / "ab").mkdir()
        (self.root / "results" / "h200" / "ab" / "ab.json").write_text(json.dumps(ab))
        rc, _, err = self.suite("readme")
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.suite("readme", "--check")[0], 0)
        text = (self.root / "README.md").read_text()
        self.assertIn("| 2^12 | 2.00x (1.92-2.08) | - |", text)  # the H100 has no record
        self.assertIn("| 2^10 | within noise (0.99-1.03) | - |", text)
        self.assertIn("Not recorded yet on the H100 80GB HBM3", text)
        self.assertIn("02_fast against 01_tree at n = 2^10: on the H200 within noise (0.99-1.03).", text)
        self.assertIn("ab.json: commit `1234abc`, 2026-11-28", text)  # the footer names the records' commit
        ab["records"][0]["verdict"] = "sideways"
        (self.root / "results" / "h200" / "ab" / "ab.json").write_text(json.dumps(ab))
        rc, _, err = self.suite("readme", "--check")
        self.assertOneLine(1, (rc, _, err))
        self.assertIn("has no valid verdict", err)

    def test_a_block_held_at_head_and_lost(self):
        self.edit("README.md", "text", "<!-- check:begin -->\n<!-- check:end -->")
        (self.root / "results" / "h200" / "progression" / "check.json").write_text(
            json.dumps({"tests": "all passed", "sanitizer": "clean", "commit": "abcdef1234", "date": "2026-11-27"})
        )
        self.suite("readme")
        git = lambda *a: subprocess.run(["git", *a], cwd=self.root, capture_output=True)  # noqa: E731
        git("init", "-q")
        git("add", "-A")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
        self.edit("README.md", "<!-- check:begin -->", "")
        self.edit("README.md", "<!-- check:end -->", "")
        rc, _, err = self.suite("readme", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("README.md: lacks the block check", err)

    def test_nothing_is_written_when_one_file_cannot_be(self):
        before = self.snapshot()
        (self.root / "docs" / "results.md").mkdir(parents=True)  # a folder where the page goes
        rc, _, err = self.suite("readme")
        self.assertEqual(rc, 1)
        self.assertIn("docs/results.md", err)
        self.assertEqual(before, self.snapshot())

    def test_code_follows_the_sources(self):
        """excerpt and diff blocks render named regions of the sources; --check fails when a source moves on."""
        k0, k1 = self.root / "00_atomic" / "kernel.cu", self.root / "01_tree" / "kernel.cu"
        k0.write_text(
            "// 00\nconstexpr int kWays = 1;\n\n// One pass.\n"
            "__global__ void reduce_atomic(float* x) {\n  x[0] = 1;\n}\n"
        )
        k1.write_text(
            "// 01\n\n// One pass.\n__global__ void reduce_tree(float* x) {\n  // excerpt: store\n  x[0] = 2;\n"
            "  // end excerpt\n}\n"
        )
        blocks = ("diff:00_atomic:01_tree:reduce_STEP", "excerpt:01_tree/kernel.cu:store")
        self.edit(
            "01_tree/README.md",
            "# 01_tree\n",
            "# 01_tree\n" + "".join(f"<!-- {b}:begin -->\n<!-- {b}:end -->\n" for b in blocks),
        )
        rc, _, err = self.suite("readme")
        self.assertEqual(rc, 0, err)
        text = (self.root / "01_tree" / "README.md").read_text()
        self.assertIn(
            "```diff\n // One pass.\n-__global__ void reduce_atomic(float* x) {\n-  x[0] = 1;\n"
            "+__global__ void reduce_tree(float* x) {\n"
            "+  x[0] = 2;\n }\n```",
            text,
        )
        self.assertIn("```cuda\n  x[0] = 2;\n```", text)
        self.assertEqual(self.suite("readme", "--check")[0], 0)
        cases = [
            (k1, "x[0] = 2", "x[0] = 3", "differ"),
            (k0, "x[0] = 1", "x[0] = 5", "differ"),
            (k1, "excerpt: store", "excerpt: other", "no region 'store'"),
            (k0, "reduce_atomic", "reduce_other", "differ"),
        ]  # a region one side lacks: all added
        for source, old, new, said in cases:
            with self.subTest(said=said, source=source.parent.name):
                before = source.read_text()
                source.write_text(before.replace(old, new))
                rc, _, err = self.suite("readme", "--check")
                source.write_text(before)
                self.assertOneLine(1, (rc, "", err))
                self.assertIn(said, err)

    def test_unknown_block(self):
        self.edit("README.md", "text", "<!-- nothing:begin -->\n<!-- nothing:end -->")
        rc, _, err = self.suite("readme", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("no block is called 'nothing'", err)


class Running(TreeCase):
    def test_run_prints_the_table_and_writes_only_with_out(self):
        before = self.snapshot()
        rc, out, err = self.suite("run", "--no-build", "--build-dir", self.root / "build")
        self.assertEqual(rc, 0, err)
        self.assertIn("02_fast", out)
        self.assertIn("[3/3] 02_fast", err)
        self.assertEqual(before, self.snapshot())
        rc, _, err = self.suite("run", "--no-build", "--build-dir", self.root / "build", "--out", self.root / "new")
        self.assertEqual(rc, 0, err)
        table = json.loads((self.root / "new" / "h200" / "progression" / "table.json").read_text())
        self.assertEqual(len(table["records"][0]["samples_ms"]), 30)

    def test_the_build_is_bounded(self):
        log = self.tmp.parent / "cmake.log"
        fake = self.tmp.parent / "bin"
        fake.mkdir()
        (fake / "cmake").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
        (fake / "cmake").chmod(0o755)
        path = f"{fake}:{os.environ['PATH']}"
        self.suite("run", "--build-dir", self.root / "build", env={"PATH": path})
        self.suite("run", "--build-dir", self.root / "build", env={"PATH": path, "CMAKE_BUILD_PARALLEL_LEVEL": "2"})
        first, second = log.read_text().splitlines()
        jobs = int(first.split("--parallel ")[1].split()[0])
        self.assertTrue(1 <= jobs <= 8, first)
        self.assertNotIn("--parallel", second)

    def test_no_gpu_is_77_and_makes_no_folder(self):
        for args in (["run"], ["lecture"], ["sweep"], ["ab", "01"]):
            with self.subTest(args=args):
                rc, _, err = self.suite(
                    *args,
                    "--no-build",
                    "--build-dir",
                    self.root / "build",
                    *(["--out", self.root / "new"] if args[0] in ("run", "sweep") else []),
                    env={"FAKE": "nogpu"},
                )
                self.assertOneLine(77, (rc, "", err))
                self.assertIn("no usable CUDA device", err)
                self.assertFalse((self.root / "new").exists())
        rc, _, err = self.suite("gpu", self.root / "session", env={"PATH": str(self.tmp)})
        self.assertOneLine(77, (rc, "", err))
        self.assertFalse((self.root / "session").exists())

    def test_the_gpu_session(self):
        fake = self.tmp.parent / "bin"
        fake.mkdir()
        (fake / "nvidia-smi").write_text('#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: x)"\n')
        (fake / "compute-sanitizer").write_text('#!/bin/sh\necho "ERROR SUMMARY: 0 errors"\n')
        (fake / "ctest").write_text(
            '#!/bin/sh\nargs="$*"; echo "$args" >> "$(dirname "$0")/ctest.args"\n'  # writes its JUnit file
            'while [ $# -gt 0 ]; do [ "$1" = --output-junit ] && j=$2; shift; done\n'
            'echo \'<testsuite><testcase name="a"/></testsuite>\' > "$j"\n'
            'case "$args" in *"-L huge"*) printf "50%% tests passed, 1 tests failed out of 2\\n'
            'The following tests FAILED:\\n\\t  7 - gpu.Huge.One (Failed)   gpu huge\\n"; exit 8;; esac\n'
            'echo "100% tests passed, 0 tests failed out of 1"\n'
        )
        for f in fake.iterdir():
            f.chmod(0o755)
        out = self.tmp.parent / "session"
        rc, text, err = self.suite(
            "gpu",
            out,
            "--build-dir",
            self.root / "build",
            "--parts",
            "sanitizer,table,measure",
            env={"PATH": f"{fake}:{os.environ['PATH']}"},
        )
        self.assertEqual(rc, 0, text + err)
        self.assertIn("compute-sanitizer: 28 of 28 runs clean", (out / "summary.txt").read_text())
        check = json.loads((out / "results" / "h200" / "progression" / "check.json").read_text())
        self.assertEqual(check["sanitizer"], "clean (28 runs)")
        # A later call into the same OUT at the same commit adds its parts to check.json.
        rc, text, err = self.suite(
            "gpu",
            out,
            "--build-dir",
            self.root / "build",
            "--parts",
            "tests,huge",
            env={"PATH": f"{fake}:{os.environ['PATH']}"},
        )
        self.assertEqual(rc, 1, text + err)  # a Huge test failed: named in the record
        check = json.loads((out / "results" / "h200" / "progression" / "check.json").read_text())
        self.assertEqual(check["sanitizer"], "clean (28 runs)")
        self.assertEqual(check["tests"], "100% tests passed, 0 tests failed out of 1")
        self.assertEqual(check["huge"], "50% tests passed, 1 tests failed out of 2 (failed: gpu.Huge.One)")
        self.assertEqual(
            [line.split()[4:6] for line in (fake / "ctest.args").read_text().splitlines()],
            [["-LE", "huge"], ["-L", "huge"]],
        )
        self.assertTrue((out / "results" / "h200" / "12_types" / "float.json").is_file())
        self.assertTrue((out / "logs" / "table.log").is_file())
        rc, _, err = self.suite("profile", "--build-dir", self.root / "build", env={"PATH": str(fake)})
        self.assertOneLine(1, (rc, "", err))
        self.assertIn("ncu", err)

    def test_lecture_prints_each_row_and_writes_nothing(self):
        before = self.snapshot()
        rc, out, err = self.suite("lecture", "--no-build", "--build-dir", self.root / "build", "--iters", "5")
        self.assertEqual(rc, 0, err)
        self.assertIn("[3/3] 02_fast at n = 2^10", err)
        rows = [line for line in out.splitlines() if line.startswith("0")]
        self.assertEqual(
            [r.split()[:2] for r in rows], [["00_atomic", "2^12"], ["01_tree", "2^12"], ["02_fast", "2^10"]]
        )
        self.assertEqual(
            [line for line in out.splitlines() if line.startswith("-- n changes")],
            ["-- n changes to 2^10: 02_fast's lesson shows there; the previous step runs again at it"],
        )
        self.assertEqual(before, self.snapshot())

    def test_a_failed_step_is_exit_1(self):
        rc, _, _ = self.suite("run", "--no-build", "--build-dir", self.root / "build", env={"FAKE": "fail"})
        self.assertEqual(rc, 1)

    def test_sweep_and_measure_write_records(self):
        rc, _, err = self.suite(
            "sweep", "--no-build", "--build-dir", self.root / "build", "--range", "10:11", "--out", self.root / "r"
        )
        self.assertEqual(rc, 0, err)
        points = json.loads((self.root / "r" / "h200" / "progression" / "sweep.json").read_text())["records"]
        self.assertEqual(len(points), 2 * 4)
        self.suite(
            "sweep",
            "--no-build",
            "--build-dir",
            self.root / "build",
            "--range",
            "11:12",
            "--out",
            self.root / "r",
            "--add",
        )
        points = json.loads((self.root / "r" / "h200" / "progression" / "sweep.json").read_text())["records"]
        self.assertEqual(sorted({p["n"] for p in points}), [1 << 10, 1 << 11, 1 << 12])
        self.assertEqual(len(points), 3 * 4)
        stale = self.root / "r" / "h200" / "12_types" / "old.json"
        stale.parent.mkdir(parents=True)
        stale.write_text("{}\n")
        rc, out, err = self.suite("measure", "12", "--build-dir", self.root / "build", "--out", self.root / "r")
        self.assertEqual(rc, 0, err)
        self.assertIn("| float | 2^12 |", out)
        self.assertEqual(
            sorted(p.name for p in stale.parent.iterdir()),
            ["double.json", "float.json", "meta.json", "read_ceiling_16384.json"],
        )
        self.assertOneLine(2, self.suite("measure", "12", "--build-dir", self.root / "build", "--only", "half"))
        # A partial run never replaces a fuller one: nothing is written, and the records stay.
        before = self.snapshot()
        rc, _, err = self.suite(
            "measure", "12", "--build-dir", self.root / "build", "--only", "float", "--out", self.root / "r"
        )
        self.assertEqual(rc, 1, err)
        self.assertIn("double.json", err.strip().splitlines()[-1])
        rc, _, err = self.suite(
            "sweep", "--no-build", "--build-dir", self.root / "build", "--range", "10:10", "--out", self.root / "r"
        )
        self.assertOneLine(2, (rc, "", err))
        self.assertIn("--add", err)
        self.assertEqual(before, self.snapshot())

    def test_ab_and_aa(self):
        rc, out, err = self.suite(
            "ab", "01", "02", "--no-build", "--build-dir", self.root / "build", "--rounds", "2", "--iters", "10"
        )
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"01_tree +00_atomic +2\^12 .*(faster|slower|within noise)")
        rc, out, err = self.suite(
            "ab",
            "02",
            "--aa",
            "--range",
            "10:12",
            "--no-build",
            "--build-dir",
            self.root / "build",
            "--rounds",
            "3",
            "--iters",
            "10",
        )
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"A/A: [0-3] of 3 points within noise: false-positive rate")

    def test_ab_writes_its_records_for_the_readmes(self):
        run = (
            "--no-build",
            "--build-dir",
            self.root / "build",
            "--rounds",
            "2",
            "--iters",
            "10",
            "--out",
            self.root / "results",
        )
        rc, _, err = self.suite("ab", "01", "02", *run)
        self.assertEqual(rc, 0, err)
        f = self.root / "results" / "h200" / "ab" / "ab.json"
        got = json.loads(f.read_text())
        self.assertEqual(
            [(r["step"], r["against"], r["n"]) for r in got["records"]],
            [("01_tree", "00_atomic", 1 << 12), ("02_fast", "01_tree", 1 << 10)],
        )
        self.assertEqual(got["meta"]["rounds"], 2)
        self.assertTrue(all(r["low"] <= r["ratio"] <= r["high"] for r in got["records"]))
        rc, _, err = self.suite("ab", "02", "--n", "2^11", *run)  # another size is added, the others kept
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(json.loads(f.read_text())["records"]), 3)
        readme = self.root / "README.md"
        readme.write_text(readme.read_text().replace("text", "<!-- path:begin -->\n<!-- path:end -->"))
        self.assertEqual(self.suite("readme")[0], 0)
        self.assertRegex((self.root / "README.md").read_text(), r"\| 2\^10 \| (within noise \(|[0-9.]+x \()")
        before = self.snapshot()
        self.assertOneLine(2, self.suite("ab", "02", "--aa", *run))  # an A/A is no gain: nothing written
        self.assertEqual(before, self.snapshot())

    def test_compare(self):
        r = self.root / "results"
        rc, out, err = self.suite("compare", r / "h200", r / "h200")
        self.assertEqual(rc, 0, err)
        self.assertIn("within noise", out)
        self.assertNotIn("faster", out)
        rc, out, _ = self.suite(
            "compare",
            r / "h100" / "progression" / "table.json",
            r / "h200" / "progression" / "table.json",
            "--across-gpus",
        )
        self.assertIn("no samples", out)
        for bad in (
            '{"step": "x", "n": [1], "median_ms": 1}',
            '{"step": "x", "n": 5, "median_ms": 1, "samples_ms": [0]}',
            '{"step": "x", "n": "2^5", "median_ms": 1}',
            '{"step": 7, "n": 5, "median_ms": 1}',
        ):
            with self.subTest(record=bad):
                f = self.tmp.parent / "bad.json"
                f.write_text(bad + "\n")
                rc, _, err = self.suite("compare", f, f)
                self.assertOneLine(1, (rc, "", err))
                self.assertIn("bad.json", err)


class BadInput(TreeCase):
    def test_one_line_and_exit_2(self):
        b = ["--no-build", "--build-dir", self.root / "build"]
        cases = [
            ["run", "--n", BIG],
            ["run", "--n", "2^40"],
            ["run", "--steps", "07"],
            ["run", "--steps", "1,01"],
            ["run", "--n", "1", "--n", "2"],
            ["lecture", "--iters", BIG],
            ["sweep", "--range", "20:10"],
            ["sweep", "--range", BIG],
            ["measure", "13"],
            ["measure", "12", "--iters", BIG],
            ["ab", "00"],
            ["ab", "01", "--rounds", BIG],
            ["ab", "01", "--aa", "--against", "00"],
            ["compare", "nope", "nope"],
            ["figures", "--only", ""],
            ["figures", "--only", "gain_99"],
            ["lesson", "00", "02"],
            ["lesson", "00"],
            ["gpu", "out", "--sanitizer-jobs", BIG],
            ["gpu", "out", "--parts", ""],
            ["skips", ""],
            ["skips", "nowhere"],
            ["skips", "--allow", "("],
            ["runs", "13"],
            ["bogus"],
            [],
            ["readme", "--frobnicate"],
            ["run", "--steps="],
            ["run", "01"],
            ["run", "--steps", "01", "--out", "x"],
            # an empty value is an error, never "absent"
            ["ab", "01", "--n", ""],
            ["ab", "01", "--range", ""],
            ["ab", "01", "--against", ""],
            ["profile", ""],
            ["compare", "", self.root / "results"],
            ["compare", self.root / "results", " "],
            ["run", "--build-dir", ""],
            ["gpu", ""],
            ["measure", "12", "--only", ""],
            ["skips", "--allow", ""],
            # values that are not what they say: a regex too large, control characters
            ["skips", "--allow", "a{99999999999}"],
            ["skips", "--allow", "(" * 5000],
            ["runs", "12\n\x1b[31mred\u2028"],
            ["ab", "01", "--n", "1\r\x1b[2J"],
            ["figures", "--only", "\x1b]0;title\x07"],
            ["measure", "12", "--only", "\x1b[1m"],
            ["gpu", "out", "--parts", "x\ny"],
        ]
        for args in cases:
            with self.subTest(args=[str(a)[:12] for a in args]):
                extra = b if args[:1] in (["run"], ["lecture"], ["sweep"], ["ab"]) else []
                rc, out, err = self.suite(*args, *extra)
                self.assertOneLine(2, (rc, out, err))
                self.assertTrue(err.startswith("suite: "), err)
                self.assertFalse(any(c in err for c in "\x1b\r\x07\u2028"), err)
                if BIG in args:
                    self.assertIn("--", err)
                    self.assertLess(len(err), 300)
        rc, _, err = self.suite("run", "--no-build", "--build-dir", self.root / "build", "--", "--bogus")
        self.assertOneLine(2, (rc, "", err))

    def test_a_closed_stdout_is_no_traceback(self):
        self.suite("readme")
        (self.root / "01_tree" / "README.md").write_text(
            (self.root / "01_tree" / "README.md").read_text().replace("H200", "X")
        )
        for args in (
            ["compare", self.root / "results" / "h200", self.root / "results" / "h100", "--across-gpus"],
            ["readme", "--check"],
            ["lesson", "00", "01"],
            ["runs", "12"],
            ["--help"],
        ):
            with self.subTest(args=args[0]):
                env = dict(os.environ, REDUCE_ROOT=str(self.root), TMPDIR=str(self.tmp))
                p = subprocess.Popen(
                    [sys.executable, str(SUITE), *map(str, args)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                )
                p.stdout.close()
                err = p.stderr.read().decode()
                p.stderr.close()
                p.wait()
                self.assertNotIn("Traceback", err)
                self.assertLessEqual(len(err.strip().splitlines()), 1, err)

    def test_lost_output_is_exit_1(self):
        r, junit = self.root / "results", self.tmp.parent / "junit.xml"
        junit.write_text('<testsuite><testcase name="a"/></testsuite>')
        env = dict(os.environ, REDUCE_ROOT=str(self.root), TMPDIR=str(self.tmp))
        cases = [
            ["runs", "12"],
            ["compare", r / "h200", r / "h200"],
            ["skips", junit],
            ["lesson", "00", "01"],
            ["lesson", "--pairs"],
            ["run", "--no-build", "--build-dir", self.root / "build"],
            ["--help"],
        ]
        for args in cases:
            with self.subTest(args=args[:2]):  # stdout closed outright (>&-)
                p = subprocess.run(
                    ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, str(SUITE), *map(str, args)],
                    capture_output=True,
                    text=True,
                    env=env,
                )
                err = p.stderr if args[0] != "run" else p.stderr.splitlines()[-1]  # after run's progress lines
                self.assertOneLine(1, (p.returncode, "", err))
                self.assertIn("standard output", err)
        if os.path.exists("/dev/full"):
            for args in (["--help"], ["runs", "12"], ["readme"]):
                with self.subTest(full=args[0]), open("/dev/full", "w") as full:
                    rc, _, err = self.suite(*args, stdout=full)
                    self.assertOneLine(1, (rc, "", err))
                    self.assertIn("No space left on device", err)
            self.assertEqual(self.suite("readme", "--check")[0], 0)  # the files were written all the same


class Small(TreeCase):
    def test_runs_and_lesson(self):
        rc, out, _ = self.suite("runs", "12", "--cmake")
        self.assertEqual(
            out.splitlines(),
            [
                "smoke|float.n1|--type float --n 1",
                "smoke|double.n1|--type double --n 1",
                "cli|bad|2|--type|--type half",
            ],
        )
        self.assertEqual(self.suite("lesson", "--pairs")[1].split(), ["00_atomic", "01_tree"])
        rc, out, _ = self.suite("lesson", "00", "01", "--check")
        self.assertEqual(rc, 0)
        self.assertIn("within the budget of 40", out)
        self.assertIn("+__global__ void reduce_tree", self.suite("lesson", "00", "01")[1])
        self.assertEqual(self.suite("runs", "12")[1].splitlines()[0][:2], "# ")  # a header, then the runs
        # --any reaches the steps beyond the progression: their one kernel file (not main.cu, not test_*.cu)
        for name, text in (
            ("types.cu", "__global__ void reduce_types() {}\n"),
            ("main.cu", "int main() {}\n"),
            ("test_types.cu", "// a test\n"),
        ):
            (self.root / "12_types" / name).write_text(text)
        rc, out, _ = self.suite("lesson", "01", "12", "--any")
        self.assertEqual(rc, 0)
        self.assertIn("+++ b/12_types/types.cu", out)
        self.assertEqual(self.suite("lesson", "01", "12")[0], 2)  # not without --any

    def test_skips(self):
        junit = self.tmp.parent / "junit.xml"
        junit.write_text(
            '<testsuite><testcase name="a"><skipped message="m"/><system-out>x\nneeds 2 GPUs, this machine shows 1'
            '</system-out></testcase><testcase name="b"/><testcase name="gpu.all"><skipped/><system-out>'
            "skipped 3: no usable CUDA device</system-out></testcase></testsuite>"
        )
        rc, out, _ = self.suite("skips", junit)
        self.assertEqual(rc, 0)
        self.assertIn("2 of 3 tests skipped", out)
        self.assertIn("   3  no usable CUDA device", out)
        self.assertEqual(self.suite("skips", junit, "--allow", "needs [0-9]+ GPUs")[0], 1)

    def test_figures(self):
        if importlib.util.find_spec("matplotlib") is None:
            self.assertOneLine(1, self.suite("figures"))
            return
        rc, _, err = self.suite("figures", "--only", "gain_01_tree,sweep_h200")
        self.assertEqual(rc, 0, err)
        self.assertEqual(
            sorted(p.name for p in (self.root / "docs" / "figures").iterdir()), ["gain_01_tree.png", "sweep_h200.png"]
        )


if __name__ == "__main__":
    unittest.main()
