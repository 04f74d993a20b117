"""Files as users leave them: the one write helper (links followed, FIFOs and devices refused before
any work, all or nothing under exceptions and signals), the one read helper (regular files only, a
size cap, damaged JSON), quoting, outputs checked before any measurement, and compare's speed."""

import json
import os
import random
import signal
import stat
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from reduce_tools import common
from reduce_tools.common import Failure, Interrupted, UsageError
from tests.fixture import TreeCase


class Quote(unittest.TestCase):
    def test_every_control_character_is_escaped(self):
        self.assertEqual(common.quote("a\nb\x1b[31m\\'"), "'a\\nb\\x1B[31m\\\\\\''")
        self.assertEqual(common.quote("\u2028\x85\t\r é"), "'\\u2028\\x85\\t\\r é'")
        self.assertEqual(common.quote(os.fsdecode(b"x\xff")), "'x\\xFF'")
        self.assertEqual(common.quote(Path("/a b")), "'/a b'")
        self.assertEqual(common.quote("x" * 100, 10), "'xxxxxxxxxx'... (100 characters)")
        self.assertEqual(common.one_line("a\nb\x1b"), "a\\nb\\x1B")


class Folder(unittest.TestCase):
    def setUp(self):
        self._d = tempfile.TemporaryDirectory()
        self.d = Path(self._d.name)

    def tearDown(self):
        self._d.cleanup()

    def listing(self):
        return sorted(str(p.relative_to(self.d)) for p in self.d.rglob("*"))


class Reads(Folder):
    def test_only_regular_files(self):
        fifo, zero, big, small = self.d / "fifo.json", self.d / "zero.json", self.d / "big.json", self.d / "small"
        os.mkfifo(fifo)
        zero.symlink_to("/dev/zero")
        with open(big, "wb") as f:
            f.truncate(common.MAX_READ + 1)  # sparse: nothing is read before it is refused
        small.write_bytes(b"12345678901")
        for path, why in (
            (fifo, "is a FIFO"),
            (zero, "is a character device"),
            (self.d, "is a folder"),
            (big, "larger than 64 MiB"),
            (self.d / "nothing", "No such file"),
        ):
            with self.subTest(path=path.name), self.assertRaises(Failure) as e:
                common.read_bytes(path)
            self.assertIn(why, str(e.exception))
            self.assertIn(common.quote(path), str(e.exception))
        with self.assertRaises(Failure):
            common.read_bytes(small, limit=10)
        self.assertEqual(common.read_bytes(small, limit=11), b"12345678901")
        (self.d / "crlf").write_bytes(b"a\r\nb")
        self.assertEqual(common.read_text(self.d / "crlf"), "a\r\nb")  # the line endings as they are

    def test_damaged_json_names_the_file(self):
        cases = [
            '{"records": null}',
            '{"records": [1]}',
            '{"meta": {}, "meta": {}, "records": []}',
            "[" + "9" * 5000 + "]",
            "[1." + "0" * 5000 + "]",
            "[" * 100000 + "]" * 100000,
            '{"x": NaN}',
            '{"x": -Infinity}',
            "{",
            "\xff",
        ]
        for text in cases:
            with self.subTest(text=text[:20]), self.assertRaises(Failure) as e:
                f = self.d / "bad\nname.json"
                f.write_bytes(text.encode("latin-1"))
                common.records_of(common.read_json(f), common.quote(f))
            self.assertIn("bad\\nname.json", str(e.exception))
            self.assertLess(len(str(e.exception)), 300)
        f = self.d / "lines.json"
        f.write_text('{"a": 1}\n\n{"a": 2}\n')
        self.assertEqual(common.read_json_lines(f), [{"a": 1}, {"a": 2}])
        f.write_text('{"a": 1}\n[2]\n')
        with self.assertRaises(Failure) as e:
            common.read_json_lines(f)
        self.assertIn("lines.json':2", str(e.exception))


class Writes(Folder):
    def test_a_link_is_followed_and_its_target_replaced_beside_it(self):
        (self.d / "real").mkdir()
        target, link = self.d / "real" / "table.json", self.d / "table.json"
        target.write_text("old")
        target.chmod(0o640)
        link.symlink_to(target)
        inode = os.stat(target).st_ino
        common.write_files({link: "new"})
        self.assertTrue(link.is_symlink())
        self.assertEqual((target.read_text(), stat.S_IMODE(os.stat(target).st_mode)), ("new", 0o640))
        self.assertNotEqual(os.stat(target).st_ino, inode)  # a new file renamed over the old
        self.assertEqual(self.listing(), ["real", "real/table.json", "table.json"])

    def test_what_is_no_file_is_refused_before_any_work(self):
        fifo, real_fifo = self.d / "fifo", self.d / "real_fifo"
        os.mkfifo(real_fifo)
        fifo.symlink_to(real_fifo)
        (self.d / "loop").symlink_to(self.d / "loop")
        (self.d / "dangling").symlink_to(self.d / "nowhere" / "x")
        (self.d / "folder").mkdir()
        (self.d / "file").write_text("a file where a folder should be")
        before = self.listing()
        for bad in (
            real_fifo,
            fifo,
            self.d / "loop",
            self.d / "dangling",
            self.d / "folder",
            Path(os.devnull),
            self.d / "file" / "x",
            Path("/proc/version"),
        ):
            with self.subTest(bad=bad.name), self.assertRaises(Failure):
                common.write_files({self.d / "new" / "a.txt": "a", bad: "x"})
            self.assertEqual(self.listing(), before)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def start(self):
        a = self.d / "a.txt"
        a.write_text("old a")
        return {a: "new a", self.d / "new" / "sub" / "b.txt": "new b", self.d / "c.txt": "new c"}

    def test_an_interrupt_while_writing_leaves_the_old_files(self):
        files, real = self.start(), os.fsync
        calls = []

        def second_is_interrupted(fd):
            calls.append(fd)
            if len(calls) == 2:
                raise KeyboardInterrupt
            return real(fd)

        with mock.patch.object(common.os, "fsync", second_is_interrupted), self.assertRaises(KeyboardInterrupt):
            common.write_files(files)
        self.assertEqual(self.listing(), ["a.txt"])
        self.assertEqual((self.d / "a.txt").read_text(), "old a")

    def test_an_interrupt_between_renames_puts_back_the_old_files(self):
        files, real = self.start(), os.replace
        (self.d / "c.txt").write_text("old c")
        calls = []

        def third_is_interrupted(src, dst):
            calls.append(dst)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return real(src, dst)

        with mock.patch.object(common.os, "replace", third_is_interrupted), self.assertRaises(KeyboardInterrupt):
            common.write_files(files)
        self.assertEqual(self.listing(), ["a.txt", "c.txt"])
        self.assertEqual([(self.d / n).read_text() for n in ("a.txt", "c.txt")], ["old a", "old c"])

    def test_sigterm_removes_the_temporary_files_and_waits_for_the_renames(self):
        saved = signal.signal(signal.SIGTERM, common._on_signal)
        try:
            for name, when in (("fsync", "writing"), ("replace", "renaming")):
                with self.subTest(when=when):
                    files, real = self.start(), getattr(os, name)

                    def terminate(*a, real=real):
                        os.kill(os.getpid(), signal.SIGTERM)
                        return real(*a)

                    with mock.patch.object(common.os, name, terminate), self.assertRaises(Interrupted):
                        common.write_files(files)
                    if when == "writing":
                        self.assertEqual(self.listing(), ["a.txt"])
                    else:  # the signal waits until every rename is done
                        self.assertEqual(self.listing(), ["a.txt", "c.txt", "new", "new/sub", "new/sub/b.txt"])
                    self.assertEqual((self.d / "a.txt").read_text(), "old a" if when == "writing" else "new a")
                    for p in ("new/sub/b.txt", "new/sub", "new", "c.txt"):
                        if (self.d / p).is_dir():
                            (self.d / p).rmdir()
                        elif (self.d / p).exists():
                            (self.d / p).unlink()
        finally:
            signal.signal(signal.SIGTERM, saved)

    def test_check_folder(self):
        (self.d / "loop").symlink_to(self.d / "loop")
        (self.d / "dangling").symlink_to(self.d / "nowhere")
        (self.d / "file").write_text("x")
        for bad in ("loop", "dangling", "file", "file/sub", "loop/sub"):
            with self.subTest(bad=bad), self.assertRaises(UsageError):
                common.check_folder(self.d / bad, "--out")
        with self.assertRaises(UsageError):
            common.check_folder("/proc/x", "--out")
        common.check_folder(self.d / "new" / "sub", "--out")
        self.assertEqual(self.listing(), ["dangling", "file", "loop"])


class Outputs(TreeCase):
    """Every output is checked before any step is timed: a bad --out before any run, a FIFO among a
    run's files right after the probes."""

    def runs(self, log):
        return log.read_text().splitlines() if log.exists() else []

    def test_a_bad_out_is_refused_before_any_run(self):
        (self.tmp.parent / "loop").symlink_to(self.tmp.parent / "loop")
        (self.tmp.parent / "dangling").symlink_to(self.tmp.parent / "nowhere")
        (self.tmp.parent / "file").write_text("x")
        log = self.tmp.parent / "runs.log"
        b = ["--no-build", "--build-dir", self.root / "build"]
        for out in ("loop", "dangling", "file", "file/x", "/proc/x"):
            for args in (["run", *b], ["sweep", *b], ["measure", "12", "--build-dir", self.root / "build"]):
                with self.subTest(out=out, command=args[0]):
                    rc, _, err = self.suite(*args, "--out", self.tmp.parent / out, env={"FAKE_LOG": str(log)})
                    self.assertOneLine(2, (rc, "", err))
                    self.assertIn("--out", err)
                    self.assertEqual(self.runs(log), [])

    def test_a_fifo_among_the_files_is_refused_before_timing(self):
        out, log = self.tmp.parent / "out", self.tmp.parent / "runs.log"
        b = ["--no-build", "--build-dir", self.root / "build", "--out", out]
        fifo = out / "h200" / "progression" / "fifo"
        fifo.parent.mkdir(parents=True)
        os.mkfifo(fifo)
        (out / "h200" / "progression" / "table.json").symlink_to(fifo)
        os.mkfifo(out / "h200" / "progression" / "sweep.json")
        for args in (["run", *b], ["sweep", *b]):
            with self.subTest(command=args[0]):
                rc, _, err = self.suite(*args, env={"FAKE_LOG": str(log)})
                self.assertOneLine(1, (rc, "", err))
                self.assertIn("FIFO", err)
                self.assertTrue(all(" --n 1 " in line for line in self.runs(log)), self.runs(log))  # the probes only
                log.unlink()
        (out / "h200" / "12_types").mkdir()
        os.mkfifo(out / "h200" / "12_types" / "double.json")
        rc, _, err = self.suite(
            "measure", "12", "--build-dir", self.root / "build", "--out", out, env={"FAKE_LOG": str(log)}
        )
        self.assertEqual(rc, 1, err)
        self.assertIn("double.json", err.splitlines()[-1])
        self.assertEqual(len(self.runs(log)), 1)  # the first run only
        self.assertTrue(stat.S_ISFIFO(os.stat(out / "h200" / "12_types" / "double.json").st_mode))

    def test_figures_name_a_record_without_peak_gbps(self):
        table = self.root / "results" / "h100" / "progression" / "table.json"
        value = json.loads(table.read_text())
        for r in value["records"]:
            del r["peak_gbps"]
        table.write_text(json.dumps(value))
        rc, _, err = self.suite("figures")
        self.assertOneLine(1, (rc, "", err))
        self.assertIn("h100/progression/table.json", err)
        self.assertIn("peak_gbps", err)


class Records(TreeCase):
    def test_compare_refuses_what_is_not_a_record(self):
        d = self.tmp.parent / "records"
        d.mkdir()
        good = self.root / "results" / "h200" / "progression" / "table.json"
        bad = {
            "fifo.json": None,
            "zero.json": "/dev/zero",
            "big.json": common.MAX_READ + 1,
            "null.json": '{"records": null}',
            "twice.json": '{"records": [], "records": []}',
            "digits.json": "[" + "9" * 5000 + "]",
            "deep.json": "[" * 50000 + "]" * 50000,
            "steps.json": '{"records": [{"step": 1, "n": 1, "median_ms": 1}]}',
        }
        for name, what in bad.items():
            with self.subTest(name=name):
                (d / name[:-5]).mkdir()
                f = d / name[:-5] / name
                if what is None:
                    os.mkfifo(f)
                elif what == "/dev/zero":
                    f.symlink_to(what)
                elif isinstance(what, int):
                    with open(f, "wb") as out:
                        out.truncate(what)
                else:
                    f.write_text(what)
                for args, code in (((f.parent, good), 1), ((good, f), 2 if what in (None, "/dev/zero") else 1)):
                    rc, _, err = self.suite("compare", *args)
                    self.assertOneLine(code, (rc, "", err))
                    self.assertIn(name, err)

    def test_compare_takes_seconds_on_large_records(self):
        rng = random.Random(5)

        def point(n, k, scale):
            ms = [scale * rng.uniform(1, 1.02) for _ in range(k)]
            return {"step": "10_x", "n": n, "median_ms": sorted(ms)[k // 2], "samples_ms": ms, "device": "G"}

        for name, scale in (("old.json", 1.0), ("new.json", 1.01)):
            records = [point(n, 50, scale) for n in range(2000)] + [point(1 << 30, 100000, scale)]
            (self.tmp.parent / name).write_text(json.dumps({"meta": {}, "records": records}))
        start = time.time()
        rc, out, err = self.suite("compare", self.tmp.parent / "old.json", self.tmp.parent / "new.json")
        self.assertEqual(rc, 0, err)
        self.assertLess(time.time() - start, 30)
        self.assertIn("of 2001 points", out)
        self.assertRegex(out, r"10_x 2\^30 +1\.01\d\d +\[1\.0\d+, 1\.0\d+\] +slower")


class Readmes(TreeCase):
    def test_check_fails_on_a_deleted_readme_or_crlf(self):
        self.assertEqual(self.suite("readme")[0], 0)
        md = self.root / "01_tree" / "README.md"
        text = md.read_bytes()
        md.unlink()
        rc, _, err = self.suite("readme", "--check")
        self.assertOneLine(1, (rc, "", err))
        self.assertIn("01_tree/README.md", err)
        for name in ("01_tree/README.md", "README.md"):
            with self.subTest(crlf=name):
                md = self.root / name
                md.write_bytes(
                    text.replace(b"\n", b"\r\n") if name.startswith("01") else md.read_bytes().replace(b"\n", b"\r\n")
                )
                rc, out, err = self.suite("readme", "--check")
                self.assertEqual(rc, 1, err)
                self.assertIn(f"{name}: CRLF line endings", out)
                self.assertEqual(self.suite("readme")[0], 0)  # written back with LF
                self.assertNotIn(b"\r", md.read_bytes())
                self.assertEqual(self.suite("readme", "--check")[0], 0)

    def test_a_damaged_record_is_one_line_naming_it(self):
        table = self.root / "results" / "h200" / "progression" / "table.json"
        for text in (
            '{"records": null}',
            '{"meta": {}, "records": [{"step": "01_tree"}]}',
            "[" * 50000,
            '{"a": 1, "a": 1}',
        ):
            with self.subTest(text=text[:20]):
                table.write_text(text)
                rc, _, err = self.suite("readme", "--check")
                self.assertOneLine(1, (rc, "", err))
                self.assertIn("table.json", err)


if __name__ == "__main__":
    unittest.main()
