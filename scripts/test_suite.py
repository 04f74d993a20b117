"""Unit tests of suite.py, the scripts' shared module (CTest: scripts.suite; or python3 -m unittest -v test_suite)."""

import csv
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path

import suite

H100_OLD = suite.RESULTS / "h100" / "earlier" / "eb211d9ace37"  # an older record: eight steps
H100 = suite.RESULTS / "h100" / "progression"


def record(step, ms, passed=True, lesson="lesson", cpu=100.0, cpu_parallel=None):
    r = {"step": step, "lesson": lesson, "n": 1 << 26, "median_ms": ms, "gbps": 268.435456 / ms,
         "pct_peak": 268.435456 / ms / 33.52, "cpu_ms": cpu, "speedup_vs_cpu": cpu / ms, "passed": passed,
         "device": "Test GPU", "cuda_runtime": "13.0"}
    if cpu_parallel is not None:
        r.update(cpu_parallel_ms=cpu_parallel, cpu_threads=16, grid=1056, launches=2, per_thread=64.0)
    return r


def column(headers, rows, name):
    return [row[headers.index(name)] for row in rows]


def make_tmp(case):
    """A temporary folder removed after the test."""
    folder = tempfile.mkdtemp()
    case.addCleanup(shutil.rmtree, folder, ignore_errors=True)
    return Path(folder)


def tmp_file(case, name, text):
    """A file holding text in a temporary folder removed after the test."""
    path = make_tmp(case) / name
    path.write_text(text)
    return path


class Steps(unittest.TestCase):
    def write(self, text):
        return tmp_file(self, "steps.txt", text)

    def test_reads_the_suite_list(self):
        steps = suite.read_steps()
        self.assertGreaterEqual(len(steps), 2)
        self.assertEqual(steps, sorted(steps), "steps.txt lists the steps in numeric order")

    def test_comments_and_blank_lines_are_left_out(self):
        path = self.write("# the steps\n\n01_a   # first\n  02_b\n# 03_c\n09_lib\n")
        self.assertEqual(suite.read_steps(path), ["01_a", "02_b", "09_lib"])

    def test_bad_lists_fail_in_one_line(self):
        for text in ["", "01_a\n", "01_a\n01_a\n", "01_a\nnot a step\n"]:
            with self.subTest(text=text), self.assertRaises(suite.Failure):
                suite.read_steps(self.write(text))
        with self.assertRaises(suite.Failure):
            suite.read_steps(Path("/nonexistent/steps.txt"))

    def test_resolve_by_number_name_or_role(self):
        steps = ["00_atomic", "01_interleaved", "07_cooperative_grid", "12_cub"]
        self.assertEqual(suite.resolve_step("7", steps), "07_cooperative_grid")
        self.assertEqual(suite.resolve_step("07", steps), "07_cooperative_grid")
        self.assertEqual(suite.resolve_step("12_cub", steps), "12_cub")
        self.assertEqual(suite.resolve_step("cub", steps), "12_cub")
        for bad in ["99", "08_cub", "", "x"]:
            with self.subTest(bad=bad), self.assertRaises(suite.UsageError):
                suite.resolve_step(bad, steps)

    def test_renumbered_steps_keep_their_role(self):
        steps = ["01_interleaved", "07_cooperative_grid", "08_flag_handover", "12_cub"]
        self.assertEqual(suite.current_name("08_cub", steps), "12_cub")
        self.assertEqual(suite.current_name("07_cooperative_grid", steps), "07_cooperative_grid")
        self.assertIsNone(suite.current_name("05_gone", steps))
        ordered = suite.in_suite_order([record("08_cub", 1), record("01_interleaved", 2)], steps)
        self.assertEqual([r["step"] for r in ordered], ["01_interleaved", "08_cub"])


class Counts(unittest.TestCase):
    def test_the_executables_syntax(self):
        self.assertEqual(suite.parse_count("1000"), 1000)
        self.assertEqual(suite.parse_count("4K"), 4096)
        self.assertEqual(suite.parse_count("16M"), 1 << 24)
        self.assertEqual(suite.parse_count("1G"), 1 << 30)
        self.assertEqual(suite.parse_count("2^26"), 1 << 26)
        self.assertEqual(suite.parse_count("0"), 0)
        self.assertEqual(suite.parse_count("2^36"), 1 << 36)
        self.assertEqual(suite.parse_count("64G"), 1 << 36)

    def test_refused(self):
        for bad in ["abc", "-5", "+5", "1.5", "1.5x", "2^", "2^37", "2^99", "65G", "4k", "", " 5", "0x10"]:
            with self.subTest(bad=bad), self.assertRaises(suite.UsageError) as e:
                suite.parse_count(bad)
            self.assertIn("--n", str(e.exception))


class Records(unittest.TestCase):
    def test_one_json_line(self):
        r = record("01_interleaved", 1.0)
        self.assertEqual(suite.parse_record(json.dumps(r) + "\n"), r)

    def test_rejects_text_several_lines_and_missing_keys(self):
        for text in ["01_interleaved: PASS\n", "{}\n{}\n", '{"step": "x"}', "[1, 2]", ""]:
            with self.subTest(text=text), self.assertRaises(suite.Failure):
                suite.parse_record(text)

    def test_ceiling_record(self):
        c = {"tool": "read_ceiling", "n": 1024, "median_ms": 0.1, "gbps": 4000.0, "pct_peak": 90.0}
        self.assertEqual(suite.parse_ceiling(json.dumps(c)), c)
        with self.assertRaises(suite.Failure):
            suite.parse_ceiling(json.dumps(dict(c, tool="other")))

    def test_committed_table_loads(self):
        self.assertEqual(len(suite.load_table(H100_OLD / "table.json")["records"]), 8)
        table = suite.load_table(H100 / "table.json")
        self.assertEqual([suite.current_name(r["step"], suite.read_steps()) for r in table["records"]],
                         suite.read_steps())

    def test_malformed_tables_fail(self):
        folder = make_tmp(self)
        for text in ["", "{", "[]", '{"meta": {}, "records": []}',
                     '{"meta": {"device": "x", "cuda_runtime": "", "cuda_driver": "", "date": "", "commit": ""},'
                     ' "records": [{"step": "01"}]}']:
            (folder / "table.json").write_text(text)
            with self.subTest(text=text), self.assertRaises(suite.Failure):
                suite.load_table(folder / "table.json")


class SpeedupTable(unittest.TestCase):
    def test_ratios_against_01_and_previous(self):
        headers, rows = suite.speedup_table([record("01_a", 4.0), record("02_b", 2.0), record("03_c", 0.5, passed=False)])
        self.assertEqual(column(headers, rows, "step"), ["01_a", "02_b", "03_c"])
        self.assertEqual(column(headers, rows, "vs 01"), ["1.00x", "2.00x", "8.00x"])
        self.assertEqual(column(headers, rows, "vs prev"), ["-", "2.00x", "4.00x"])
        self.assertEqual(column(headers, rows, "vs 1 CPU thread"), ["25.00x", "50.00x", "200x"])
        self.assertEqual(column(headers, rows, "check"), ["PASS", "PASS", "FAIL"])

    def test_base_is_01_even_after_00(self):
        headers, rows = suite.speedup_table([record("00_atomic", 8.0), record("01_a", 4.0), record("02_b", 2.0)])
        self.assertEqual(column(headers, rows, "vs 01"), ["0.50x", "1.00x", "2.00x"])

    def test_base_named_for_the_first_step_without_01(self):
        headers, rows = suite.speedup_table([record("07_x", 2.0), record("12_cub", 1.0)])
        self.assertIn("vs 07", headers)
        self.assertNotIn("vs 01", headers)
        self.assertEqual(column(headers, rows, "vs 07"), ["1.00x", "2.00x"])

    def test_old_records_have_no_parallel_cpu_column(self):
        table = suite.load_table(H100_OLD / "table.json")
        headers, rows = suite.speedup_table(table["records"])
        self.assertNotIn("vs all CPU cores", headers)
        self.assertNotIn("% ceiling", headers)
        self.assertEqual(len(rows), 8)

    def test_both_cpu_columns_and_the_ceiling(self):
        records = [record("01_a", 4.0, cpu=100.0, cpu_parallel=8.0), record("02_b", 2.0, cpu=100.0, cpu_parallel=8.0)]
        ceiling = {"gbps": records[1]["gbps"] * 2, "pct_peak": 90.0}
        headers, rows = suite.speedup_table(records, ceiling)
        self.assertEqual(column(headers, rows, "vs all CPU cores"), ["2.00x", "4.00x"])
        self.assertEqual(column(headers, rows, "% ceiling"), ["25.0", "50.0"])
        notes = " ".join(suite.table_notes(records, ceiling))
        self.assertIn("16 CPU threads", notes)
        self.assertIn("read ceiling", notes)

    def test_one_cpu_time_for_the_whole_table(self):
        records = [record("01", 4.0, cpu=90.0), record("02", 2.0, cpu=110.0), record("03", 1.0, cpu=100.0)]
        self.assertEqual(suite.cpu_baseline_ms(records), 100.0)
        self.assertIsNone(suite.cpu_baseline_ms([record("01", 1.0, cpu=0)]))

    def test_zero_time_gives_no_ratio(self):
        self.assertIsNone(suite.ratio(1.0, 0.0))
        self.assertEqual(suite.fmt_ratio(None), "-")

    def test_text_table_aligns_columns(self):
        text = suite.render_text(*suite.speedup_table([record("01_interleaved", 4.0), record("12_cub", 0.09)]))
        lines = text.splitlines()
        self.assertEqual(len(lines), 4)
        self.assertEqual(len({len(line) for line in lines}), 1, text)

    def test_markdown_escapes_pipes(self):
        headers, rows = suite.speedup_table([record("01", 1.0, lesson="a | b")])
        md = suite.render_markdown(headers, rows)
        self.assertIn("a \\| b", md)
        self.assertEqual(md.splitlines()[1].count("|"), len(headers) + 1)


class Csv(unittest.TestCase):
    def test_round_trip(self):
        text = suite.records_to_csv([record("01", 1.0, lesson="with, comma", cpu_parallel=2.0)])
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(rows[0]["lesson"], "with, comma")
        self.assertEqual(float(rows[0]["median_ms"]), 1.0)
        self.assertEqual(rows[0]["launches"], "2")

    def test_old_records_leave_new_keys_empty(self):
        rows = list(csv.DictReader(io.StringIO(suite.records_to_csv([record("01", 1.0)]))))
        self.assertEqual(rows[0]["cpu_parallel_ms"], "")

    def sweep_file(self, text):
        return tmp_file(self, "sweep.csv", text)

    def test_sweep_csv_checked(self):
        self.assertEqual(len(suite.read_sweep_csv(H100_OLD / "sweep.csv")), 8 * 21)
        header = suite.records_to_csv([])
        for text in ["", header, "garbage\n1,2,3\n", header + "01,x,abc,uniform\n", "a,b\n\x00\x01\n"]:
            with self.subTest(text=text[:30]), self.assertRaises(suite.Failure):
                suite.read_sweep_csv(self.sweep_file(text))

    def test_ceiling_rows(self):
        row = suite.ceiling_row({"tool": "read_ceiling", "n": 1024, "median_ms": 0.1, "gbps": 40.0})
        rows = list(csv.DictReader(io.StringIO(suite.records_to_csv([row]))))
        self.assertEqual((rows[0]["step"], rows[0]["passed"]), ("read_ceiling", ""))


class Markers(unittest.TestCase):
    def test_replaces_only_between_markers(self):
        text = "a\n<!-- t:begin -->\nold\n<!-- t:end -->\nb\n"
        self.assertEqual(suite.replace_between_markers(text, "t", "new"), "a\n<!-- t:begin -->\nnew\n<!-- t:end -->\nb\n")
        self.assertEqual(suite.block_between_markers(text, "t"), "old")
        self.assertTrue(suite.has_markers(text, "t"))

    def test_missing_markers_raise(self):
        with self.assertRaises(ValueError):
            suite.replace_between_markers("no markers", "t", "x")


class Sweep(unittest.TestCase):
    def test_sizes_capped_by_memory(self):
        self.assertEqual(suite.sweep_sizes(10, 12, 0), [1024, 2048, 4096])
        self.assertEqual(suite.sweep_sizes(30, 36, 80e9)[-1], 1 << 33)
        self.assertEqual(suite.sweep_sizes(20, 22, 1e6), [])

    def test_iters_fall_with_size(self):
        self.assertGreater(suite.sweep_iters(1 << 10), suite.sweep_iters(1 << 30))


class Lesson(unittest.TestCase):
    def test_comments_and_blank_lines_left_out(self):
        src = ('#include "x.h"  // the harness\n'
               "/* a block\n   comment */\n"
               "\n"
               "int a = 1;  /* inline */ int b = 2;\n"
               'const char* s = "http://not/a/comment";  // but this is\n'
               "char q = '\"'; int c = 1'000;  // a quote and a digit separator\n"
               "// only a comment\n"
               "}\n")
        self.assertEqual(suite.code_lines(src), [
            '#include "x.h"',
            "int a = 1;    int b = 2;",
            'const char* s = "http://not/a/comment";',
            "char q = '\"'; int c = 1'000;",
            "}",
        ])

    def test_counts_removed_and_added(self):
        self.assertEqual(suite.diff_counts(["a", "b", "c"], ["a", "x", "c", "d"]), (1, 2, 2))
        self.assertEqual(suite.diff_counts(["a", "b", "c"], ["x", "y"]), (3, 2, 3))
        self.assertEqual(suite.diff_counts([], []), (0, 0, 0))

    def test_kernel_file_of_a_step(self):
        steps = suite.read_steps()
        present = [s for s in steps if (suite.ROOT / s).is_dir()]
        self.assertTrue(present)
        self.assertEqual(suite.kernel_file(present[0]).suffix, ".cu")
        with self.assertRaises(suite.Failure):
            suite.kernel_file("99_nothing")


class Parsing(unittest.TestCase):
    def test_exponent_range_takes_ascii_digits_only(self):
        self.assertEqual(suite.parse_exponent_range("10:30", "--r"), (10, 30))
        for bad in ("1_0:12", "\uff11\uff10:12", "10:", "12:10", "0:37", " 10:12", "10:12\n"):
            with self.assertRaises(suite.UsageError, msg=bad):
                suite.parse_exponent_range(bad, "--r")

    def test_int_takes_ascii_digits_only(self):
        self.assertEqual(suite.parse_int("30", "--iters", 1, 100), 30)
        for bad in ("\u00b2", "\uff15", "1_0", "0", "101", "-1", ""):
            with self.assertRaises(suite.UsageError, msg=bad):
                suite.parse_int(bad, "--iters", 1, 100)
        with self.assertRaises(suite.UsageError):
            suite.parse_count("\uff11K")

    def test_an_option_given_twice_is_refused(self):
        p = suite.ArgumentParser("t", "doc")
        p.add_argument("--n")
        p.add_argument("--flag", action="store_true")
        p.add_argument("rest", nargs="*")
        for argv in (["--n", "1", "--n", "2"], ["--n=1", "--n", "2"], ["--flag", "--flag"], ["--debug", "--debug"]):
            with self.assertRaises(suite.UsageError, msg=argv):
                p.parse_args(argv)
        with self.assertRaises(suite.UsageError):  # no abbreviations: --fl is not --flag
            p.parse_args(["--fl"])
        self.assertEqual(p.parse_args(["--n", "1", "--", "--n", "2"]).rest, ["--n", "2"])


class WriteFiles(unittest.TestCase):
    def test_all_or_nothing(self):
        folder = make_tmp(self)
        (folder / "a").write_text("old\n")
        suite.write_files({folder / "a": "new\n", folder / "sub" / "b": "b\n", folder / "c.png": b"\x89PNG"})
        self.assertEqual((folder / "c.png").read_bytes(), b"\x89PNG")
        self.assertEqual((folder / "a").read_text(), "new\n")
        self.assertEqual((folder / "sub" / "b").read_text(), "b\n")
        (folder / "dir").mkdir()
        with self.assertRaises(suite.Failure):  # the second target's folder cannot be made: nothing renamed
            suite.write_files({folder / "a": "newer\n", folder / "a" / "x": "x\n"})
        self.assertEqual((folder / "a").read_text(), "new\n")
        self.assertEqual(sorted(p.name for p in folder.iterdir()), ["a", "c.png", "dir", "sub"])

    def test_a_failed_rename_puts_back_the_files_renamed_before_it(self):
        folder = make_tmp(self)
        for name in ("a", "b"):
            (folder / name).write_text(f"old {name}\n")
        (folder / "c").mkdir()
        (folder / "c" / "full").write_text("x\n")  # a non-empty folder: a file cannot be renamed over it
        pairs = []
        for name in ("a", "b", "c"):
            tmp = folder / f".{name}.tmp"
            tmp.write_text(f"new {name}\n")
            pairs.append((tmp, folder / name))
        with self.assertRaises(suite.Failure):
            suite.rename_all(pairs)
        self.assertEqual((folder / "a").read_text(), "old a\n")
        self.assertEqual((folder / "b").read_text(), "old b\n")
        self.assertEqual(sorted(p.name for p in folder.iterdir() if p.name.endswith(".old")), [])


if __name__ == "__main__":
    unittest.main()
