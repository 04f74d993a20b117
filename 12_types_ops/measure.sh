#!/usr/bin/env bash
# Runs 12_types_ops for every type x operator at 2^28 elements on this machine's GPU, with the read
# ceiling at the same byte counts, and writes to OUT:
#   <type>_<op>.json   each run's one-record json (bin/12_types_ops --format json)
#   read_ceiling_<bytes per element>.json
#   types.md           the table: GB/s, % of theoretical peak, % of the read ceiling, CUB's GB/s and
#                      the ratio to it (stats: against CUB's four passes, and against this step's sum)
# With --readme, and only when every run passed, the table also replaces the block between
# <!-- types:begin --> and <!-- types:end --> in 12_types_ops/README.md and the top-level README.md.
#
# Usage: 12_types_ops/measure.sh [--n 2^28] [--iters 30] [--readme] BUILD OUT
#   BUILD  a build folder holding bin/12_types_ops and bin/read_ceiling (e.g. build/release)
# Exit codes: 0 every run passed; 1 a run failed or gave no record; 2 bad usage; 77 no usable GPU.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "measure.sh: $1" >&2; exit "${2:-2}"; }

n="2^28" iters=30 readme=0 args=()
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --n) (($# >= 2)) || die "--n needs a value"; n="$2"; shift 2 ;;
    --iters) (($# >= 2)) || die "--iters needs a value"; iters="$2"; shift 2 ;;
    --readme) readme=1; shift ;;
    --*) die "unknown option '$1' (see --help)" ;;
    *) args+=("$1"); shift ;;
  esac
done
((${#args[@]} == 2)) || die "expected BUILD and OUT (see --help)"
build="${args[0]}" out="${args[1]}"
[[ "$iters" =~ ^[0-9]+$ ]] && ((iters >= 1)) || die "invalid value '$iters' for --iters: expected a positive integer"
exe="$build/bin/12_types_ops" ceiling="$build/bin/read_ceiling"
[[ -x "$exe" ]] || die "no executable $exe: build first (cmake --preset release && cmake --build build/release)"
[[ -x "$ceiling" ]] || die "no executable $ceiling: build first"
command -v python3 > /dev/null || die "python3 is needed for the table" 1
mkdir -p "$out" || die "cannot create $out" 1

# One run; a missing GPU on the first stops everything with 77, bad usage with 2.
run() {  # run FILE CMD...
  local file="$1"; shift
  "$@" > "$file" 2> "$file.err"
  local rc=$?
  cat "$file.err" >&2
  if ((rc == 77 || rc == 2)); then die "$(basename "$1") stopped with exit code $rc (see above)" "$rc"; fi
  return "$rc"
}

failed=0
# The read ceiling at the bytes of 4- and 8-byte elements: n floats and 2n floats.
count=$(python3 -c "import sys; s='$n'; print(2**int(s[2:]) if s.startswith('2^') else int(s))") ||
  die "invalid value '$n' for --n: expected a count or 2^k"
for width in 4 8; do
  run "$out/read_ceiling_$width.json" "$ceiling" --n $((count * width / 4)) --iters "$iters" --format json || failed=1
done
for type in float double int32 int64; do
  for op in sum min max stats; do
    echo "measure.sh: $type $op" >&2
    run "$out/${type}_${op}.json" "$exe" --type "$type" --op "$op" --n "$n" --iters "$iters" --format json || failed=1
  done
done

commit="${REDUCE_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD 2> /dev/null || echo unknown)}"  # the device copy may carry a stale .git
python3 - "$out" "$commit" "$failed" << 'EOF' || exit 1
import json, os, sys, datetime
out, commit, failed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"

def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None

ceil = {w: load(f"read_ceiling_{w}.json") for w in (4, 8)}
rows, first = [], None
for t, width in (("float", 4), ("double", 8), ("int32", 4), ("int64", 8)):
    for op in ("sum", "min", "max", "stats"):
        r = load(f"{t}_{op}.json")
        if r is None:
            rows.append(f"| {t} | {op} | - | - | - | - | - | - | no record |")
            continue
        first = first or r
        c = ceil[width]
        pct_ceil = f"{100 * r['gbps'] / c['gbps']:.1f}" if c and c.get("gbps") else "-"
        vs_sum = f"{r['vs_sum']:.3f}x" if op == "stats" else "-"
        cub = f"{r['cub_gbps']:.1f}" + (" (4 passes)" if r["cub_passes"] == 4 else "")
        rows.append(f"| {t} | {op} | {r['gbps']:.1f} | {r['pct_peak']:.1f} | {pct_ceil} | {cub} | "
                    f"{r['vs_cub']:.3f}x | {vs_sum} | {'PASS' if r['passed'] else 'FAIL'} |")
if first is None:
    sys.exit("measure.sh: no run gave a record")
k = first["n"].bit_length() - 1
n_text = f"2^{k}" if first["n"] == 1 << k else str(first["n"])
head = (f"Measured on {first['device']}, CUDA {first['cuda_runtime']} (driver {first['cuda_driver']}), "
        f"{datetime.date.today()}, commit `{commit}`: n = {n_text} elements of each type, pattern "
        f"{first['pattern']}, median of {first['iters']} runs after {first['warmup']} warm-up, L2 flushed before "
        f"each; theoretical DRAM bandwidth {first['peak_gbps']:.0f} GB/s; read ceiling from `read_ceiling` at the "
        f"same bytes ({ceil[4]['gbps']:.0f} GB/s for 4-byte, {ceil[8]['gbps']:.0f} GB/s for 8-byte elements). "
        "\"vs CUB\" divides by CUB's DeviceReduce for the same type and operator (stats: its Sum, Min, Max and a "
        "TransformReduce of squares, one after another); \"vs sum\" divides stats by this step's sum of the "
        "same type. Generated by `12_types_ops/measure.sh`.") if ceil[4] and ceil[8] else "read ceiling missing"
table = "\n".join([head, "",
    "| type | op | GB/s | % peak | % read ceiling | CUB GB/s | vs CUB | vs sum | check |",
    "|---|---|---:|---:|---:|---:|---:|---:|---|", *rows])
with open(os.path.join(out, "types.md"), "w") as f:
    f.write(table + "\n")
print(table)
if failed or any(r.endswith("FAIL |") or r.endswith("no record |") for r in rows):
    sys.exit(1)
EOF
((failed)) && exit 1

if ((readme)); then
  for file in "$here/README.md" "$root/README.md"; do
    python3 - "$file" "$out/types.md" << 'EOF' || exit 1
import sys
path, table = sys.argv[1], open(sys.argv[2]).read().strip()
text = open(path).read()
begin, end = "<!-- types:begin -->", "<!-- types:end -->"
if begin not in text or end not in text:
    sys.exit(f"measure.sh: {path} has no {begin} ... {end} block")
if not table:
    sys.exit("measure.sh: empty table, README left as it is")
a, b = text.index(begin) + len(begin), text.index(end)
open(path, "w").write(text[:a] + "\n" + table + "\n" + text[b:])
print(f"measure.sh: table written into {path}", file=sys.stderr)
EOF
  done
fi
exit 0
