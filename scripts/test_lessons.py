"""The lesson budget: neighbouring steps of steps.txt differ by one lesson, so their kernel files may
differ by at most suite.LESSON_BUDGET changed code lines (suite.diff_counts: a block of k lines
replaced by m counts max(k, m); comments, blank lines and the steps' own names left out). scripts/show_lesson A B --stat prints the same count.

    python3 test_lessons.py            # every pair (or: python3 -m unittest -v test_lessons)
    python3 test_lessons.py A B        # one pair: exit 0 within budget, 1 over, 77 skipped (CTest's skip)
    python3 test_lessons.py --pairs    # the pairs that CTest registers, one "A B" per line

A pair is skipped, with the reason, while one of its folders does not exist yet. The pair that ends in
the library step (the last line of steps.txt) has no budget: it replaces a hand-written kernel by a
library call, a different kind of step; CTest does not register it.
"""

import sys
import unittest

import suite

# Pairs allowed more than the budget, each with its written reason: {("A", "B"): (budget, "why")}.
OVERRIDES = {}


def pairs(steps):
    return list(zip(steps, steps[1:]))


def checked_pairs(steps):
    """The pairs with a budget: all but the one that ends in the library step."""
    return [(a, b) for a, b in pairs(steps) if b != suite.library_step(steps)]


def test_name(a, b):
    return f"test_{a}__{b}"


class LessonBudget(unittest.TestCase):
    """One test per neighbouring pair of steps.txt (added below)."""


def make_test(a, b, steps):
    def test(self):
        if b == suite.library_step(steps):
            self.skipTest(f"{a} -> {b}: the library step replaces the kernel by a library call; no budget")
        absent = [s for s in (a, b) if not (suite.ROOT / s).is_dir()]
        if absent:
            self.skipTest(f"{a} -> {b}: no folder {', '.join(absent)} yet")
        budget, why = OVERRIDES.get((a, b), (suite.LESSON_BUDGET, ""))
        removed, added, changed = suite.lesson_counts(a, b)
        self.assertLessEqual(changed, budget,
                             f"{a} -> {b}: {changed} changed code lines (-{removed} +{added}), over the budget of {budget} "
                             f"{why}(see scripts/show_lesson {a} {b} --no-comments)")
    test.__doc__ = f"{a} -> {b}"
    return test


STEPS = suite.read_steps()
for _a, _b in pairs(STEPS):
    setattr(LessonBudget, test_name(_a, _b), make_test(_a, _b, STEPS))


def main(argv):
    if argv == ["--pairs"]:
        print("\n".join(f"{a} {b}" for a, b in checked_pairs(STEPS)))
        return 0
    if argv and (len(argv) != 2 or tuple(argv) not in pairs(STEPS)):
        print(f"test_lessons.py: expected two neighbouring steps of steps.txt, got {' '.join(argv)}", file=sys.stderr)
        return 2
    loader = unittest.defaultTestLoader
    tests = loader.loadTestsFromName(test_name(*argv), LessonBudget) if argv else \
        loader.loadTestsFromTestCase(LessonBudget)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(tests)
    if not result.wasSuccessful():
        return 1
    return 77 if result.skipped and len(result.skipped) == result.testsRun else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
