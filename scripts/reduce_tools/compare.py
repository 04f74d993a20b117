"""compare OLD NEW: two measurements side by side, each point's time ratio with its bootstrap interval
and verdict (stats.py); records of different GPUs only with --across-gpus. OLD and NEW are each a results folder (results/h200, or one of its step
folders) or a record file (table.json, sweep.json, or a beyond step's <NAME>.json). Points are
matched by step, n and the fields that tell a step's runs apart."""

import json
from pathlib import Path

from . import stats
from .common import CEILING_TOOL, Failure, UsageError, count_text, read_json, read_json_lines

KEY_FIELDS = ("type", "op", "distribution", "segment_size", "mode", "gpus", "ranks", "pattern", "sweep")


def records_in(path):
    """Every record under path (a file or a folder), without read ceilings."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if p.name != "meta.json" and not p.name.startswith("read_ceiling"))
    elif path.is_file():
        files = [path]
    else:
        raise UsageError(f"{path}: no such file or folder")
    out = []
    for f in files:
        text = f.read_text(errors="replace").lstrip()
        if text.startswith("{") and '"records"' in text[:200000]:
            value = read_json(f)
            records = value.get("records", []) if isinstance(value, dict) else []
            # A sweep's points are told apart from the table's at the same n.
            out += [dict(r, sweep=True) for r in records] if f.name.startswith("sweep") else records
        else:
            try:
                out += read_json_lines(f)
            except Failure:
                if path.is_file():
                    raise
    out = [r for r in out if isinstance(r, dict) and r.get("step") not in (None, CEILING_TOOL) and r.get("median_ms")]
    for r in out:  # the fields a comparison reads, checked here: a damaged file is named, not a traceback
        n, ms, samples = r.get("n", 0), r.get("median_ms"), r.get("samples_ms", [])
        if (not isinstance(r["step"], str) or isinstance(n, bool) or not isinstance(n, (int, str)) or not str(n).isdigit()
                or isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms > 0
                or not isinstance(samples, list) or not all(isinstance(x, (int, float)) and x > 0 for x in samples)):
            raise Failure(f"{path}: a record of step '{str(r['step'])[:40]}' has a bad step, n, median_ms or samples_ms")
    return out


def key(r):
    return (r["step"], int(r.get("n", 0))) + tuple(str(r.get(k, "")) for k in KEY_FIELDS)


def compare(old_path, new_path, across_gpus=False):
    old = {key(r): r for r in records_in(old_path)}
    new = {key(r): r for r in records_in(new_path)}
    both = [k for k in new if k in old]
    if not both:
        raise Failure(f"no point of {new_path} matches one of {old_path} (same step, n and run fields)")
    if not across_gpus:  # a record names its GPU (device); a ratio across GPUs is no gain of the code
        other = next((k for k in both if old[k].get("device") != new[k].get("device")), None)
        if other:
            a, b = (str(r.get("device"))[:40] for r in (old[other], new[other]))
            raise UsageError(f"OLD was measured on {a!r}, NEW on {b!r} ({other[0]}): give --across-gpus to compare them")
    rows = []
    for k in both:
        a, b = old[k], new[k]
        got = stats.ratio_interval([stats.samples_of(a)], [stats.samples_of(b)])
        label = " ".join([k[0], count_text(k[1])] + [v if v != "True" else "(sweep)" for v in k[2:] if v])
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
