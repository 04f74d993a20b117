"""The package's pieces on their own: run lists, option values, writes, the interval, markers, tables."""

import os
import random
import shutil
import stat
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from reduce_tools import common, readme, runlist, stats, tables
from reduce_tools.common import ROOT, Failure, UsageError


class RunLists(unittest.TestCase):
    def plan(self, text):
        return runlist.RunList("12_types_ops", text)

    def test_a_product_is_written_once(self):
        p = self.plan("for t in float int\nfor op in sum max\nsmoke {t}.{op} | --type {t} --op {op}\nend\nend\n")
        self.assertEqual([r.name for r in p.runs], ["float.sum", "float.max", "int.sum", "int.max"])
        self.assertEqual(p.runs[3].args, ["--type", "int", "--op", "max"])

    def test_every_kind_and_setting(self):
        p = runlist.RunList(
            "12_types_ops",
            "smoke s | mpi 2 | --n 1\n"
            "cli c | 2 | given twice | --n 1 --n 2\nsanitize memcheck,racecheck | --n 3\nmeasure m | --n 2^28\n"
            "profile p | regex:a|b | --n 4  # comment\n",
            layout="title: t\n  continued\ncolumns: a, b\nceiling: no\ntable bits: n, x\n",
        )
        self.assertEqual(
            (p.title, p.columns, p.ceiling, [c[0] for c in p.tables["bits"]["columns"]]),
            ("t continued", ["a", "b"], False, ["n", "x"]),
        )
        self.assertEqual([r.kind for r in p.runs], ["smoke", "cli", "sanitize", "measure", "profile"])
        self.assertEqual(p.of("profile")[0].fields, ["regex:a|b"])
        self.assertEqual(p.cmake_lines(), ["smoke|s|mpi 2|--n 1", "cli|c|2|given twice|--n 1 --n 2"])

    def test_bad_lists_name_their_line(self):
        for text in (
            "end\n",
            "for x in a b\nsmoke {x} | --n 1\n",
            "smoke {x} | --n 1\n",
            "bench a | --n 1\n",
            "cli c | two | t | --n 1\n",
            "smoke a | mpi | --n 1\n",
            "sanitize leakcheck | --n 1\n",
            "title: t\n",
            "smoke a b | --n 1\n",
            "measure m\n",
        ):
            with self.subTest(text=text), self.assertRaises(Failure) as e:
                self.plan(text)
            self.assertIn("12_types_ops/runs.txt", str(e.exception))

    def test_a_bad_layout_names_its_readme_line(self):
        for layout in ("table: a\n", "titel: t\n", "table bits:\n"):
            with self.subTest(layout=layout), self.assertRaises(Failure) as e:
                runlist.RunList("12_types_ops", "", layout=layout)
            self.assertIn("12_types_ops/README.md:1", str(e.exception))

    def test_the_steps_run_lists_parse(self):
        for step in common.read_beyond() + (["15_exact"] if (common.ROOT / "15_exact" / "runs.txt").is_file() else []):
            with self.subTest(step=step):
                p = runlist.RunList(step)
                self.assertTrue(p.of("smoke") and p.of("cli"), step)
                self.assertEqual(len({r.name for r in p.of("smoke")}), len(p.of("smoke")), "a smoke name twice")

    def test_cmake_reads_the_run_lists_as_this_module_does(self):
        """cmake/RunList.cmake registers the CTest runs without Python: the same lines, or CTest would
        run what scripts/suite does not list."""
        if shutil.which("cmake") is None:
            self.skipTest("cmake is not on PATH")
        lists = [(ROOT / s / "runs.txt", ROOT / s) for s in common.read_beyond()]
        lists += [
            (ROOT / "tests" / "cli.txt", ROOT / "tests"),
            (ROOT / "14_reproducible" / "tests" / "bits_cli.txt", ROOT / "14_reproducible"),
        ]
        for path, folder in lists:
            if not path.is_file():
                continue
            with self.subTest(path=path.name, folder=folder.name):
                p = subprocess.run(
                    ["cmake", f"-DFILE={path}", f"-DDIR={folder}", "-P", str(ROOT / "cmake" / "RunList.cmake")],
                    capture_output=True,
                    text=True,
                )
                self.assertEqual(p.returncode, 0, p.stderr)
                plan = runlist.RunList(folder.name, path=path)
                self.assertEqual(p.stdout.splitlines(), plan.cmake_lines())


class Values(unittest.TestCase):
    def test_huge_and_bad_integers_name_the_option(self):
        for text in ("9" * 5000, "", "-1", "1_0", "١٢", "3.5"):
            with self.subTest(text=text[:8]), self.assertRaises(UsageError) as e:
                common.parse_int(text, "--rounds", 1, 100)
            self.assertIn("--rounds", str(e.exception))
            self.assertLess(len(str(e.exception)), 200)
        with self.assertRaises(UsageError):
            common.parse_count("9" * 5000, "--n")

    def test_counts_and_ranges(self):
        self.assertEqual([common.parse_count(x) for x in ("1000", "4K", "2^20", "1G")], [1000, 4096, 1 << 20, 1 << 30])
        self.assertEqual(common.parse_range("10:30", "--range"), (10, 30))
        for bad in ("20:10", "10", "a:b", "10:37", ""):
            with self.subTest(bad=bad), self.assertRaises(UsageError):
                common.parse_range(bad, "--range")
        self.assertEqual([common.count_text(x) for x in (1 << 26, 1000003)], ["2^26", "1000003"])


class Writes(unittest.TestCase):
    def setUp(self):
        self._d = tempfile.TemporaryDirectory()
        self.d = Path(self._d.name)

    def tearDown(self):
        self._d.cleanup()

    def test_all_or_nothing(self):
        a, plain = self.d / "a.txt", self.d / "plain"
        a.write_text("old a")
        plain.write_text("a file where a folder should be")
        with self.assertRaises(Failure) as e:
            common.write_files({a: "new a", plain / "b.txt": "new b"})
        self.assertIn("b.txt", str(e.exception))
        self.assertEqual(a.read_text(), "old a")
        self.assertEqual(sorted(p.name for p in self.d.rglob("*")), ["a.txt", "plain"])

    def test_a_rename_that_fails_puts_back_the_others(self):
        a, b = self.d / "a.txt", self.d / "b.txt"
        a.write_text("old a")
        real, calls = os.replace, []

        def second_fails(src, dst):
            calls.append(dst)
            if Path(dst) == b:
                raise OSError(28, "No space left on device")
            return real(src, dst)

        with mock.patch.object(common.os, "replace", second_fails), self.assertRaises(Failure) as e:
            common.write_files({a: "new a", b: "new b"})
        self.assertIn("b.txt", str(e.exception))
        self.assertEqual(a.read_text(), "old a")
        self.assertEqual(sorted(p.name for p in self.d.iterdir()), ["a.txt"])

    def test_links_are_followed_and_devices_and_fifos_refused(self):
        target, link, fifo = self.d / "target.txt", self.d / "link.txt", self.d / "fifo"
        target.write_text("old")
        link.symlink_to(target)
        os.mkfifo(fifo)
        common.write_files({link: "new"})
        self.assertTrue(link.is_symlink())
        self.assertEqual(target.read_text(), "new")
        for bad in (fifo, Path(os.devnull)):
            with self.subTest(bad=bad), self.assertRaises(Failure):
                common.write_files({self.d / "c.txt": "c", bad: "x"})
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertFalse((self.d / "c.txt").exists())


class Interval(unittest.TestCase):
    def rounds(self, scale, seed, k=5, m=30):
        rng = random.Random(seed)
        return [[scale * rng.gauss(1.0, 0.01) for _ in range(m)] for _ in range(k)]

    def test_verdicts(self):
        self.assertEqual(stats.ratio_interval(self.rounds(1, 1), self.rounds(1, 2))[3], "within noise")
        self.assertEqual(stats.ratio_interval(self.rounds(1, 1), self.rounds(0.98, 2))[3], "faster")
        self.assertEqual(stats.ratio_interval(self.rounds(1, 1, k=1), self.rounds(1.02, 2, k=1))[3], "slower")
        self.assertEqual(stats.ratio_interval(self.rounds(1, 1, k=1), self.rounds(1, 2, k=3))[3], "within noise")
        ratio, low, high, verdict = stats.ratio_interval([[1.0] * 5], [[1.05] * 5])
        self.assertEqual((round(ratio, 6), round(low, 6), round(high, 6), verdict), (1.05, 1.05, 1.05, "slower"))

    def test_the_interval_of_one_round_matches_a_bootstrap(self):
        rng = random.Random(3)
        a, b = [rng.lognormvariate(0, 0.05) for _ in range(401)], [rng.lognormvariate(0, 0.05) for _ in range(401)]
        draws = sorted(stats.median(rng.choices(b, k=401)) / stats.median(rng.choices(a, k=401)) for _ in range(2000))
        _, low, high, _ = stats.ratio_interval([a], [b])
        for got, want in ((low, draws[50]), (high, draws[1949])):
            self.assertAlmostEqual(got, want, delta=0.004)

    def test_a_large_record_takes_no_time(self):
        rng = random.Random(4)
        big = [rng.uniform(1, 2) for _ in range(100000)]
        start = time.time()
        stats.ratio_interval([big], [big[::-1]])
        for _ in range(2000):
            stats.ratio_interval([big[:50]], [big[50:100]])
        self.assertLess(time.time() - start, 5)

    def test_no_samples(self):
        self.assertIsNone(stats.ratio_interval([[]], [[1.0]]))
        self.assertEqual(stats.samples_of({"samples_ms": [1, "x", 2.5, None, 0, True]}), [1.0, 2.5])
        self.assertEqual(stats.samples_of({}), [])
        self.assertEqual([stats.t95(k) for k in (1, 4, 30)], [12.706, 2.776, 2.042])
        self.assertAlmostEqual(stats.t95(60), 2.000, delta=0.002)


class Markers(unittest.TestCase):
    def test_pairs(self):
        text = "a\n<!-- x:begin -->\nold\n<!-- x:end -->\n<!-- y:z:begin --><!-- y:z:end -->"
        self.assertEqual([n for n, _, _ in readme.blocks(text, "f")], ["x", "y:z"])

    def test_marker_errors(self):
        for text in (
            "<!--x:begin-->\n<!--x:end-->",
            "<!-- x:begin  -->\n<!-- x:end -->",
            "<!-- x:begin -->",
            "<!-- x:end -->",
            "<!-- x:begin -->\n<!-- y:begin -->\n<!-- y:end -->\n<!-- x:end -->",
            "<!-- x:begin --><!-- x:end --><!-- x:begin --><!-- x:end -->",
            "<!-- x:begin -->\n<!-- y:end -->",
        ):
            with self.subTest(text=text), self.assertRaises(Failure):
                readme.blocks(text, "f")


class Tables(unittest.TestCase):
    def test_speedup_table(self):
        recs = [
            {
                "step": f"0{k}_s",
                "lesson": "l",
                "median_ms": 4.0 / (k + 1),
                "gbps": 1.0 + k,
                "pct_peak": 1.0,
                "passed": True,
                "cpu_ms": 8.0,
            }
            for k in range(3)
        ]
        head, rows = tables.speedup_table(recs, {"gbps": 10.0})
        self.assertEqual(head[-4:], ["vs 1 CPU thread", "vs 01", "vs prev", "check"])
        self.assertEqual(rows[2][-4:], ["6.00x", "1.50x", "1.50x", "PASS"])

    def test_profile_csv(self):
        text = (
            '"run","ID","Kernel Name","Block Size","Grid Size","Metric Name","Metric Unit","Metric Value"\n'
            '"a","0","void ns::<unnamed>::k<int>(int*)","(256, 1, 1)","(8, 1, 1)","Duration","us","1.5"\n'
        )
        launches = tables.read_profile(text)
        self.assertEqual(launches[0][:2], ("a", "k<int>"))
        self.assertIn("| a | `k<int>` | 8 | 256 | 1.5 us |", tables.profile_table(launches))
        with self.assertRaises(ValueError):
            tables.read_profile("x,y\n1,2\n")
        # ncu's section rows: the header names rule columns that its metric rows leave off
        text = (
            "run,ID,Kernel Name,Block Size,Grid Size,Metric Name,Metric Unit,Metric Value,Rule Name,Rule Type\n"
            'a,0,k(int*),"(32, 1, 1)","(2, 1, 1)",Registers Per Thread,register/thread,62\n'
        )
        self.assertIn("| a | `k` | 2 | 32 | 62 |", tables.profile_table(tables.read_profile(text)))

    def test_declared_tables(self):
        def table(text, records):
            return tables.declared_table(tables.parse_table(text, "README.md:1"), [("run", records)])

        one = {"n": 1 << 28, "gpus": 1, "mode": "a", "median_ms": 4.0, "gbps": 10.0, "x": 2.0}
        recs = [one, dict(one, gpus=2, median_ms=2.0), dict(one, mode="b", gpus=2), dict(one, ranks=3, gpus=4)]
        text = table("mode, gpus, gbps / gpus as per GPU, median_ms vs gpus=1 as speedup | without ranks", recs)
        self.assertIn("| mode | gpus | per GPU | speedup |", text)
        self.assertIn("| a | 2 | 5 | 2 |", text)  # a's one-GPU row over this one's
        self.assertIn("| b | 2 | 5 | - |", text)  # b has no one-GPU row
        self.assertNotIn("| 4 |", text)  # left out: it holds ranks
        small = dict(one, n=1 << 20, gpus=2)
        self.assertEqual(table("gpus | largest n | with x", [small, dict(one, gpus=3)]).count("\n"), 2)
        steps = [dict(one, n=1 << k, gpus=2, v=v) for k, v in ((20, 0.5), (22, 1.2), (24, 0.9), (26, 1.1), (28, 1.3))]
        self.assertEqual(table("mode | crossover v", steps), "- a: v above 1 from n = 2^26 on")
        self.assertEqual(table("mode | crossover v", steps[:1]), "- a: v above 1 at no n measured")
        rows = tables.declared_table(
            tables.parse_table("same_as_single, ranks", "x"),
            [("run", [{"same_as_single": True, "ranks": 3, "n": 1}, {"ranks": 2}])],
        )
        self.assertEqual(
            rows.count("\n"), 2
        )  # the header, its rule and one row: a record without the first column is left out
        for bad in ("a, b as", "a | sometimes", "a | crossover", "a vs b"):
            with self.subTest(bad=bad), self.assertRaises(common.Failure):
                tables.parse_table(bad, "README.md:1")

    def test_declared_figure(self):
        from reduce_tools import figures

        spec = runlist.parse_figure(
            "ms against n | panels mode: a as A, b | lines gpus as GPUs | without w | alone one as alone", "x"
        )

        class Held:
            results = [
                (
                    "r",
                    [
                        {"mode": "a", "gpus": 2, "n": 1, "ms": 1.0, "one": 3.0},
                        {"mode": "a", "gpus": 2, "n": 2, "ms": 0.5, "one": 2.0},
                    ],
                ),
                (
                    "s",
                    [{"mode": "c", "gpus": 2, "n": 1, "ms": 9.0}, {"mode": "b", "gpus": 1, "n": 1, "ms": 1.0, "w": 1}],
                ),
            ]

        lines = figures.figure_lines(spec, [Held])
        self.assertEqual(lines, {("A", "2 GPUs"): {1: 1.0, 2: 0.5}, ("A", "alone"): {1: 3.0, 2: 2.0}})
        for bad in ("ms", "ms against n | lines gpus", "ms against n | panels mode: a | sideways"):
            with self.subTest(bad=bad), self.assertRaises(common.Failure):
                runlist.parse_figure(bad, "x")

    def test_footer_names_the_table_and_the_sweep_where_they_differ(self):
        folder = common.ROOT / "results" / "h200" / "progression"
        sweep, table = {"commit": "aaaaaaa1", "date": "d1", "device": "G"}, {"commit": "bbbbbbb2", "date": "d2"}
        line = readme.footer_line(folder, sweep, common.ROOT, also=table)
        self.assertIn("table.json: commit `bbbbbbb`, d2; sweep.json: commit `aaaaaaa`, d1, G", line)
        self.assertNotIn(
            "table.json", readme.footer_line(folder, sweep, common.ROOT, also=dict(table, commit="aaaaaaa1"))
        )
        line = readme.footer_line(
            folder, sweep, common.ROOT, also=table, others=[("variants.txt", {"commit": "aaaaaaa9", "date": "d1"})]
        )
        self.assertIn("sweep.json, variants.txt: commit `aaaaaaa`, d1, G", line)  # files of one commit named together
        line = readme.footer_line(folder, sweep, common.ROOT, others=[("profile/", table)])
        self.assertIn("the records: commit `aaaaaaa`, d1; profile/: commit `bbbbbbb`, d2, G", line)
