#!/usr/bin/env bash
# Measures 13_segmented on a GPU: every distribution at about 2^28 floats in total, the suite's kernel
# and cub::DeviceSegmentedReduce::Sum in the same run, plus the single-array read ceiling at the same n.
# Writes to OUT: segmented.jsonl (one record per distribution), ceiling.json, table.md (the markdown
# table the README's segmented block holds). With --update-readme it also replaces that block in
# 13_segmented/README.md, only when every distribution ran and passed.
#
#   13_segmented/measure.sh BUILD OUT [--update-readme]      BUILD: a build folder (BUILD/bin/13_segmented)
#   env: N (default 2^28), ITERS (default 30), PATTERN (default uniform)
# Exit codes: 0 every distribution correct; 1 a wrong result, a failed run or no data; 2 bad usage;
# 77 no usable GPU. Errors are one line on stderr.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage="usage: 13_segmented/measure.sh BUILD OUT [--update-readme]"
die() { echo "measure.sh: $2" >&2; exit "$1"; }
case "${1:-}" in -h|--help) echo "$usage"; exit 0 ;; esac
[ $# -ge 2 ] && [ $# -le 3 ] || die 2 "expected BUILD and OUT ($usage)"
build=$1 out=$2 update=0
if [ $# -eq 3 ]; then
  [ "$3" = --update-readme ] || die 2 "unknown option '$3' ($usage)"
  update=1
fi
exe=$build/bin/13_segmented ceiling=$build/bin/read_ceiling
[ -x "$exe" ] || die 2 "$exe is not built (build BUILD first: cmake --build BUILD)"
[ -x "$ceiling" ] || die 2 "$ceiling is not built (build BUILD first: cmake --build BUILD)"
command -v python3 >/dev/null || die 1 "python3 is needed to write the table"
n=${N:-2^28} iters=${ITERS:-30} pattern=${PATTERN:-uniform}
mkdir -p "$out" || die 1 "cannot create $out"

distributions=$("$exe" --help | sed -n 's/^                     \([a-z0-9-]*\) .*/\1/p')
[ -n "$distributions" ] || die 1 "could not read the distributions from $exe --help"

"$ceiling" --n "$n" --iters "$iters" --format json >"$out/ceiling.json.tmp" 2>"$out/ceiling.err"
rc=$?
[ $rc -eq 77 ] && die 77 "no usable GPU: $(head -n 1 "$out/ceiling.err")"
[ $rc -eq 0 ] || die 1 "read_ceiling exited $rc: $(head -n 1 "$out/ceiling.err")"
mv "$out/ceiling.json.tmp" "$out/ceiling.json"

: >"$out/segmented.jsonl.tmp"
status=0
for d in $distributions; do
  "$exe" --segments "$d" --n "$n" --iters "$iters" --pattern "$pattern" --format json \
    >>"$out/segmented.jsonl.tmp" 2>"$out/$d.err"
  rc=$?
  [ $rc -eq 77 ] && die 77 "no usable GPU ($d): $(head -n 1 "$out/$d.err")"
  if [ $rc -ne 0 ]; then
    echo "measure.sh: $d exited $rc: $(head -n 1 "$out/$d.err")" >&2
    status=1
  fi
done
mv "$out/segmented.jsonl.tmp" "$out/segmented.jsonl"
find "$out" -name '*.err' -empty -delete

python3 - "$out" "$here/README.md" "$update" "$distributions" <<'PY' || status=1
import json, os, subprocess, sys, datetime
out, readme, update, wanted = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4].split()
# The commit measured: REDUCE_COMMIT where the copy's .git may be stale or absent, else git's answer.
commit = os.environ.get("REDUCE_COMMIT") or subprocess.run(
    ["git", "-C", os.path.dirname(readme), "rev-parse", "--short=12", "HEAD"], capture_output=True,
    text=True).stdout.strip() or "unknown"
ceiling = json.load(open(f"{out}/ceiling.json"))
records = [json.loads(line) for line in open(f"{out}/segmented.jsonl") if line.strip()]
by_name = {r["distribution"]: r for r in records}
missing = [d for d in wanted if d not in by_name]
r0 = records[0] if records else {}
LONG = {"hundred", "whole", "matrix-wide"}  # the long-segment distributions: the 2x CUB bar


def version(v):
    return f"{v // 1000}.{v % 1000 // 10}" if isinstance(v, int) else "?"


lines = [
    f"Measured on {ceiling['device']}, CUDA runtime {version(r0.get('cuda_runtime'))}, driver "
    f"{version(r0.get('cuda_driver'))}, "
    f"{datetime.date.today().isoformat()}, commit `{commit}`: n = {ceiling['n']} floats per distribution, pattern {r0.get('pattern', '?')}, "
    f"median of {r0.get('iters', '?')} runs, L2 flushed before each. GB/s counts 4 bytes per float in a segment plus 8 "
    f"per offset. The read ceiling (`read_ceiling`, one array, same n): {ceiling['gbps']:.0f} GB/s. Bars: at least "
    f"1.0x CUB everywhere, 2x on {', '.join(sorted(LONG))}, 85% of the ceiling where the mean length is at least 4096.",
    "",
    "| distribution | S | mean length | segments of length <= 32 / <= 2048 / <= 16384 / longer | GB/s | CUB GB/s | vs CUB | "
    "% of ceiling | check | bars |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
]


def bars(d, r, pct):
    """The issue's bars for this distribution, each with what it reached."""
    missed = []
    need = 2.0 if d in LONG else 1.0
    if r["vs_cub"] < need:
        missed.append(f"< {need:.1f}x CUB")
    if r["mean_len"] >= 4096 and pct < 85.0:
        missed.append("< 85% of ceiling")
    return "missed: " + ", ".join(missed) if missed else "met"


for d in wanted:
    r = by_name.get(d)
    if r is None:
        lines.append(f"| {d} | - | - | - | - | - | - | - | no data | - |")
        continue
    pct = 100.0 * r["gbps"] / ceiling["gbps"] if ceiling["gbps"] else 0.0
    tiers = " / ".join(str(r.get(k, "?")) for k in ("len_le_32", "len_le_2048", "len_le_16384", "len_longer"))
    lines.append(f"| {d} | {r['segments']} | {r['mean_len']:.1f} | {tiers} | {r['gbps']:.1f} | {r['cub_gbps']:.1f} | "
                 f"{r['vs_cub']:.2f}x | {pct:.1f} | {'PASS' if r['passed'] else 'FAIL'} | {bars(d, r, pct)} |")
table = "\n".join(lines) + "\n"
open(f"{out}/table.md", "w").write(table)
print(table)
complete = not missing and all(r["passed"] for r in records)
if update:
    if not complete:
        sys.exit("measure.sh: not updating the README: " + (f"no data for {', '.join(missing)}" if missing else "a distribution failed"))
    text = open(readme).read()
    begin, end = "<!-- segmented:begin -->", "<!-- segmented:end -->"
    if begin not in text or end not in text:
        sys.exit(f"measure.sh: {readme} has no {begin} ... {end} block")
    head, rest = text.split(begin, 1)
    open(readme, "w").write(head + begin + "\n" + table + end + rest.split(end, 1)[1])
sys.exit(0 if complete else 1)
PY
exit $status
