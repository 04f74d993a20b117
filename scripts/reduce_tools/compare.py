"""compare OLD NEW: two measurements side by side, each point's time ratio with its 95% interval and
verdict (stats.py); records of different GPUs only with --across-gpus. OLD and NEW are each a
results folder (results/h200, or one of its step folders) or a record file (table.json, sweep.json,
or a beyond step's <NAME>.json). Points are matched by step, n and the fields that tell a step's
runs apart."""

import json
import os
import stat
from pathlib import Path

from . import stats
from .common import (
    CEILING_TOOL,
    FIELDS,
    Failure,
    UsageError,
    count_text,
    kind_of,
    one_line,
    parse_json,
    quote,
    read_json_lines,
    read_text,
    records_of,
)

KEY_FIELDS = ("type", "op", "distribution", "segment_size", "mode", "gpus", "ranks", "pattern", "sweep")


def record_files(path):
    """path itself (a file), or the *.json files under a folder, meta.json and read ceilings left out."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise UsageError(f"{quote(path)}: {e.strerror or e}") from None
    if stat.S_ISREG(mode):
        return [Path(path)]
    if not stat.S_ISDIR(mode):
        raise UsageError(f"{quote(path)} is {kind_of(mode)}, not a record file or folder")
    return sorted(
        p for p in Path(path).rglob("*.json") if p.name != "meta.json" and not p.name.startswith("read_ceiling")
    )


def file_records(f):
    """The records of one file: a record file's (table.json, sweep.json: an object with records), or
    one JSON object per line (a beyond step's <NAME>.json)."""
    text = read_text(f)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and all(line[0] == "{" and line[-1] == "}" for line in lines):
        return read_json_lines(f)
    value = parse_json(text, quote(f))
    if isinstance(value, dict) and "records" in value:
        records = records_of(value, quote(f), need=())
        return (
            [dict(r, sweep=True) for r in records] if f.name.startswith("sweep") else records
        )  # told apart from the table's
    if not isinstance(value, dict):
        raise Failure(f"{quote(f)}: not a record (a JSON object)")
    return [value]


def _samples_ok(samples):
    return isinstance(samples, list) and all(
        x is None or (isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0) for x in samples
    )


def records_in(path):
    """Every record under path (a file or a folder), without read ceilings."""
    out = []
    for f in record_files(path):
        records = [r for r in file_records(f) if r.get("step") not in (None, CEILING_TOOL) and r.get("median_ms")]
        for r in records:  # the fields a comparison reads, checked here: a damaged file is named, not a traceback
            if not (
                FIELDS["step"](r["step"])
                and FIELDS["n"](r.get("n", 0))
                and FIELDS["median_ms"](r["median_ms"])
                and _samples_ok(r.get("samples_ms", []))
            ):
                raise Failure(
                    f"{quote(f)}: a record of step {quote(r['step'], 40)} has a bad step, n, median_ms or samples_ms"
                )
        out += records
    return out


def key(r):
    return (r["step"], int(r.get("n", 0))) + tuple(str(r.get(k, "")) for k in KEY_FIELDS)


def compare(old_path, new_path, across_gpus=False):
    old = {key(r): r for r in records_in(old_path)}
    new = {key(r): r for r in records_in(new_path)}
    both = [k for k in new if k in old]
    if not both:
        raise Failure(f"no point of {quote(new_path)} matches one of {quote(old_path)} (same step, n and run fields)")
    if not across_gpus:  # a record names its GPU (device); a ratio across GPUs is no gain of the code
        other = next((k for k in both if old[k].get("device") != new[k].get("device")), None)
        if other:
            a, b = (str(r.get("device"))[:40] for r in (old[other], new[other]))
            raise UsageError(
                f"OLD was measured on {a!r}, NEW on {b!r} ({other[0]}): give --across-gpus to compare them"
            )
    rows = []
    for k in both:
        a, b = old[k], new[k]
        got = stats.ratio_interval([stats.samples_of(a)], [stats.samples_of(b)])
        label = one_line(" ".join([k[0], count_text(k[1])] + [v if v != "True" else "(sweep)" for v in k[2:] if v]))
        if got is None:
            rows.append((label, b["median_ms"] / a["median_ms"], None, None, "no samples"))
        else:
            rows.append((label,) + got)
    return rows


def main(args):
    rows = compare(args.old, args.new, args.across_gpus)
    if args.json:
        print(json.dumps([dict(zip(("point", "ratio", "low", "high", "verdict"), r)) for r in rows], indent=1))
        return 0
    width = max(len(r[0]) for r in rows)
    print(f"{'point':<{width}}  NEW/OLD time  95% interval        verdict")
    for label, ratio, low, high, verdict in rows:
        interval = f"[{low:.4f}, {high:.4f}]" if low is not None else "-"
        print(f"{label:<{width}}  {ratio:12.4f}  {interval:<18}  {verdict}")
    counts = {v: sum(r[4] == v for r in rows) for v in ("faster", "slower", "within noise", "no samples")}
    print(", ".join(f"{c} {v}" for v, c in counts.items() if c) + f" of {len(rows)} points")
    return 0
