"""check_fsum.py's rounding and its file handling (CPU only, stdlib only)."""

import io
import math
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction

import check_fsum as cf


def run(text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cf.main(["check_fsum.py", f.name])
    finally:
        os.unlink(f.name)
    return code, out.getvalue(), err.getvalue()


class Rounding(unittest.TestCase):
    def test_ties_go_to_even(self):
        self.assertEqual(cf.exact_float32_sum([1.0, 2.0**-24]), 1.0)
        self.assertEqual(cf.exact_float32_sum([1.0 + 2.0**-23, 2.0**-24]), 1.0 + 2.0**-22)
        self.assertEqual(cf.exact_float32_sum([-1.0, -(2.0**-24)]), -1.0)

    def test_once_not_twice(self):
        xs = [1.0, 2.0**-24, 2.0**-60]
        self.assertEqual(math.fsum(xs), 1.0 + 2.0**-24)  # the double: a float32 tie
        self.assertEqual(cf.exact_float32_sum(xs), 1.0 + 2.0**-23)  # the exact sum is above it

    def test_subnormals_and_range(self):
        tiny = 2.0**-149
        self.assertEqual(cf.exact_float32_sum([tiny, tiny, tiny]), 3 * tiny)
        self.assertEqual(cf.round_to_float32(Fraction(1, 2**150)), 0.0)  # a tie with 0: even
        self.assertEqual(cf.round_to_float32(Fraction(3, 2**151)), tiny)  # above half: up
        top = float(cf.FLOAT_MAX)
        self.assertEqual(cf.exact_float32_sum([top, top]), math.inf)
        self.assertEqual(cf.exact_float32_sum([top, 2.0**103]), math.inf)  # the tie at the top
        self.assertEqual(cf.exact_float32_sum([top, 2.0**102]), top)
        self.assertEqual(cf.exact_float32_sum([-top, -top, top]), -top)

    def test_special_values(self):
        self.assertTrue(math.isnan(cf.exact_float32_sum([1.0, math.nan])))
        self.assertTrue(math.isnan(cf.exact_float32_sum([math.inf, -math.inf])))
        self.assertEqual(cf.exact_float32_sum([math.inf, -1e38]), math.inf)
        self.assertEqual(cf.exact_float32_sum([]), 0.0)


class File(unittest.TestCase):
    def test_matching_file_passes(self):
        code, out, _ = run(
            "# a comment\nempty 0x0p+0\ncancel 0x1p+0 0x1.2ce32ep+126 0x1p+0 -0x1.2ce32ep+126\nnan nan 0x1p+0 nan\n"
        )
        self.assertEqual(code, 0)
        self.assertIn("3 of 3 cases match", out)
        self.assertIn("| cancel | 3 |", out)

    def test_a_wrong_result_fails(self):
        code, out, _ = run("tie 0x1.000002p+0 0x1p+0 0x1p-24\n")
        self.assertEqual(code, 1)
        self.assertIn("**NO**", out)

    def test_signed_zero_is_compared_by_bits(self):
        self.assertEqual(run("z -0x0p+0 -0x0p+0\n")[0], 1)
        self.assertEqual(run("z 0x0p+0 -0x0p+0\n")[0], 0)

    def test_bad_files_are_refused(self):
        for text, why in [
            ("", "holds no cases"),
            ("x 0x1p+0 banana\n", "not a hex float"),
            ("x 0x1.0000001p+0\n", "not a float32"),
            ("lonely\n", "expected"),
        ]:
            code, _, err = run(text)
            self.assertEqual(code, 2, text)
            self.assertIn(why, err)
        with redirect_stderr(io.StringIO()):
            self.assertEqual(cf.main(["check_fsum.py"]), 2)


if __name__ == "__main__":
    unittest.main()
