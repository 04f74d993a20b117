"""Unit tests of reduction_table (run by CTest as scripts.table, or: python3 -m unittest -v)."""

import csv
import io
import json
import unittest

import reduction_table as rt


def record(step, ms, passed=True, lesson="lesson", cpu=100.0):
    return {"step": step, "lesson": lesson, "n": 1 << 26, "median_ms": ms, "gbps": 268.435456 / ms,
            "pct_peak": 268.435456 / ms / 33.52, "cpu_ms": cpu, "speedup_vs_cpu": cpu / ms, "passed": passed,
            "device": "Test GPU", "cuda_runtime": "13.0"}


class ParseRecord(unittest.TestCase):
    def test_one_json_line(self):
        r = record("01_interleaved", 1.0)
        self.assertEqual(rt.parse_record(json.dumps(r) + "\n"), r)

    def test_rejects_text_several_lines_and_missing_keys(self):
        with self.assertRaises(rt.RecordError):
            rt.parse_record("01_interleaved: PASS\n")
        with self.assertRaises(rt.RecordError):
            rt.parse_record("{}\n{}\n")
        with self.assertRaises(rt.RecordError):
            rt.parse_record('{"step": "x"}')
        with self.assertRaises(rt.RecordError):
            rt.parse_record("[1, 2]")


class TableRows(unittest.TestCase):
    def test_ratios_against_first_and_previous(self):
        rows = rt.table_rows([record("01", 4.0), record("02", 2.0), record("03", 0.5, passed=False)])
        self.assertEqual([r[0] for r in rows], ["01", "02", "03"])
        vs01, vsprev = rt.TABLE_COLUMNS.index("vs 01"), rt.TABLE_COLUMNS.index("vs prev")
        self.assertEqual([r[vs01] for r in rows], ["1.00x", "2.00x", "8.00x"])
        self.assertEqual([r[vsprev] for r in rows], ["-", "2.00x", "4.00x"])
        self.assertEqual(rows[0][rt.TABLE_COLUMNS.index("vs CPU")], "25.00x")
        self.assertEqual(rows[2][rt.TABLE_COLUMNS.index("vs CPU")], "200x")
        self.assertEqual([r[-1] for r in rows], ["PASS", "PASS", "FAIL"])

    def test_one_cpu_time_for_the_whole_table(self):
        # Each step timed the CPU loop itself; the table divides every step by the median of those.
        records = [record("01", 4.0, cpu=90.0), record("02", 2.0, cpu=110.0), record("03", 1.0, cpu=100.0)]
        self.assertEqual(rt.cpu_baseline_ms(records), 100.0)
        col = rt.TABLE_COLUMNS.index("vs CPU")
        self.assertEqual([r[col] for r in rt.table_rows(records)], ["25.00x", "50.00x", "100x"])
        self.assertIsNone(rt.cpu_baseline_ms([record("01", 1.0, cpu=0)]))

    def test_zero_time_gives_no_ratio(self):
        self.assertIsNone(rt.ratio(1.0, 0.0))
        self.assertEqual(rt.fmt_ratio(None), "-")

    def test_text_table_aligns_columns(self):
        text = rt.render_text(rt.table_rows([record("01_interleaved", 4.0), record("08_cub", 0.09)]))
        lines = text.splitlines()
        self.assertEqual(len(lines), 4)
        self.assertEqual(len({len(line) for line in lines}), 1, text)  # every line the same width

    def test_markdown_escapes_pipes(self):
        md = rt.render_markdown(rt.table_rows([record("01", 1.0, lesson="a | b")]))
        self.assertIn("a \\| b", md)
        self.assertEqual(md.splitlines()[1].count("|"), len(rt.TABLE_COLUMNS) + 1)


class Csv(unittest.TestCase):
    def test_round_trip(self):
        text = rt.records_to_csv([record("01", 1.0, lesson="with, comma")])
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(rows[0]["lesson"], "with, comma")
        self.assertEqual(float(rows[0]["median_ms"]), 1.0)


class Markers(unittest.TestCase):
    def test_replaces_only_between_markers(self):
        text = "a\n<!-- t:begin -->\nold\n<!-- t:end -->\nb\n"
        self.assertEqual(rt.replace_between_markers(text, "t", "new"), "a\n<!-- t:begin -->\nnew\n<!-- t:end -->\nb\n")

    def test_missing_markers_raise(self):
        with self.assertRaises(ValueError):
            rt.replace_between_markers("no markers", "t", "x")


class Sweep(unittest.TestCase):
    def test_sizes_capped_by_memory(self):
        self.assertEqual(rt.sweep_sizes(10, 12, 0), [1024, 2048, 4096])
        # 80 GB device, half of it usable: 2^33 floats (34 GB) fits, 2^34 (69 GB) does not.
        sizes = rt.sweep_sizes(30, 36, 80e9)
        self.assertEqual(sizes[-1], 1 << 33)

    def test_iters_fall_with_size(self):
        self.assertGreater(rt.sweep_iters(1 << 10), rt.sweep_iters(1 << 30))


if __name__ == "__main__":
    unittest.main()
