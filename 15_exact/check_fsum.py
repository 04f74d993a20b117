#!/usr/bin/env python3
"""Checks the file `15_exact --write-cases FILE` writes against Python's exact arithmetic.

Each line: a case name, the GPU's result, then the case's floats, every one in C's hex notation (or inf,
-inf, nan). For every case this computes the exact sum with fractions.Fraction (math.fsum's value before
its rounding) and rounds it once to float32, to nearest with ties to even, with IEEE's rules for NaN and
the infinities, and prints a markdown table: case, n, the GPU's float, Python's float, match. Exit code
0 when every case matches, 1 when one does not, 2 when the file cannot be read or parsed.

Why not float(math.fsum(x)) converted to float32: math.fsum rounds the exact sum to a double first, and
rounding that double to float32 again can differ from rounding the exact sum once (double rounding:
1 + 2^-24 + 2^-60 rounds to the double 1 + 2^-24, a tie for float32 that goes down to 1, while the exact
sum is above the tie and rounds up). The table shows math.fsum's double too, where it gives one (it
raises on inf - inf and when its double overflows).

Usage: python3 check_fsum.py FILE
"""

import math
import struct
import sys
from fractions import Fraction

FLOAT_MAX = Fraction((2**24 - 1) * 2**104)
ULP_EXP_MIN = -149  # float32's smallest step: 2^-149


def round_to_float32(q):
    """The float32 nearest to the rational q (ties to even), as a Python float; +-inf beyond the range."""
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e+2)
    if Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    step = max(e - 23, ULP_EXP_MIN)  # the float32 grid near a: 24 bits, or 2^-149 below 2^-126
    scaled = a / Fraction(2) ** step
    m = scaled.numerator // scaled.denominator
    rest = scaled - m
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2 == 1):
        m += 1
    value = Fraction(m) * Fraction(2) ** step
    if value > FLOAT_MAX:
        return sign * math.inf
    return sign * float(value)  # exact: m has at most 24 bits


def exact_float32_sum(xs):
    """IEEE's rules first (NaN, both infinities, one infinity), else the exact sum rounded once."""
    if any(math.isnan(x) for x in xs) or (math.inf in xs and -math.inf in xs):
        return math.nan
    if math.inf in xs:
        return math.inf
    if -math.inf in xs:
        return -math.inf
    return round_to_float32(sum((Fraction(x) for x in xs), Fraction(0)))


def fsum_text(xs):
    try:
        return math.fsum(xs).hex()
    except (OverflowError, ValueError) as e:
        return "raises (" + str(e) + ")"


def same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return struct.pack("<f", a) == struct.pack("<f", b)  # the bits: -0.0 and 0.0 differ


def show(x):
    return "nan" if math.isnan(x) else x.hex()


def parse(path):
    cases = []
    with open(path, encoding="ascii") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            if len(words) < 2:
                raise ValueError(f"line {number}: expected 'name result x0 x1 ...'")
            try:
                values = [float.fromhex(w) for w in words[1:]]
            except ValueError:
                raise ValueError(f"line {number}: not a hex float among {' '.join(words[1:4])} ...") from None
            for v in values:
                if not math.isnan(v) and not math.isinf(v) and struct.unpack("<f", struct.pack("<f", v))[0] != v:
                    raise ValueError(f"line {number}: {v.hex()} is not a float32")
            cases.append((words[0], values[0], values[1:]))
    if not cases:
        raise ValueError("holds no cases")
    return cases


def main(argv):
    if len(argv) != 2:
        print("usage: check_fsum.py FILE (written by 15_exact --write-cases FILE)", file=sys.stderr)
        return 2
    try:
        cases = parse(argv[1])
    except (OSError, ValueError, UnicodeDecodeError) as e:
        print(f"check_fsum.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    print("| case | n | GPU | exact sum rounded once (Python) | math.fsum (double) | match |")
    print("|---|---:|---|---|---|---|")
    wrong = 0
    for name, gpu, xs in cases:
        python = exact_float32_sum(xs)
        ok = same(gpu, python)
        wrong += not ok
        print(f"| {name} | {len(xs)} | {show(gpu)} | {show(python)} | {fsum_text(xs)} | {'yes' if ok else '**NO**'} |")
    print(f"\n{len(cases) - wrong} of {len(cases)} cases match.")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
