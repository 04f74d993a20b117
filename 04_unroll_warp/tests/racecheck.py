"""racecheck.py --expect race|clean [--sanitizer PATH] EXE: runs compute-sanitizer's racecheck on a
step executable (step 04 and its racecheck demo, 04_unroll_warp_unsafe) and checks its verdict: a race
reported (at least one hazard, an error or a warning) or none. Exit 0 as expected, 1 otherwise, 77 (skipped, the
reason on stderr) where no compute-sanitizer is found or the executable finds no usable GPU."""

import argparse
import re
import shutil
import subprocess
import sys

ARGS = ["--n", "100003", "--iters", "2", "--warmup", "1", "--cpu-runs", "0", "--pattern", "int"]
SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--expect", choices=("race", "clean"), required=True)
    p.add_argument("--sanitizer", default="", help="compute-sanitizer's path (default: found on PATH)")
    p.add_argument("exe")
    a = p.parse_args()
    sanitizer = a.sanitizer or shutil.which("compute-sanitizer")
    if not sanitizer:
        print("skipped: no compute-sanitizer (it ships with the CUDA Toolkit: put its bin/ on PATH)", file=sys.stderr)
        return 77
    probe = subprocess.run(
        [a.exe, "--n", "1", "--iters", "1", "--warmup", "0", "--cpu-runs", "0"], capture_output=True, text=True
    )
    if probe.returncode == 77:
        print(f"skipped: {probe.stderr.strip() or 'no usable CUDA device'}", file=sys.stderr)
        return 77
    cmd = [sanitizer, "--tool", "racecheck", a.exe, *ARGS]
    run = subprocess.run(cmd, capture_output=True, text=True)
    out = run.stdout + run.stderr
    print(out)
    m = SUMMARY.search(out)
    if not m:
        print(f"FAILED: no racecheck summary in the output of {' '.join(cmd)} (exit {run.returncode})", file=sys.stderr)
        return 1
    hazards = int(m.group(1))  # a race inside a warp may be counted as a warning, not an error
    if a.expect == "race" and hazards == 0:
        print("FAILED: racecheck reported no race in the unsafe tail", file=sys.stderr)
        return 1
    if a.expect == "clean" and (hazards or run.returncode != 0):
        print(f"FAILED: racecheck reported {m.group(1)} hazards in the safe tail", file=sys.stderr)
        return 1
    print(f"as expected: {m.group(0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
