#!/usr/bin/env python3
"""Step 14's tables and plot, from the JSON records measure.sh collects.

    14_multi_gpu/tables.py DIR [DIR ...] [--out FILE] [--plot] [--readme README.md]

Each DIR is one machine's measure.sh output (sweep.jsonl, weak.jsonl, meta.json). Writes the
markdown of every DIR (to FILE, else stdout); --plot also writes DIR/scaling.png where matplotlib is
installed; --readme replaces the block between <!-- multigpu:begin --> and <!-- multigpu:end --> of
that file with the markdown, and refuses, changing nothing, when a DIR lacks its records.
Exit codes: 0 done, 1 missing or broken data, 2 bad usage.
"""
import argparse
import json
import os
import sys

STRONG_N = 2**32
WEAK_PER_GPU = 2**30
MODES = {"single_process": "one process", "mpi": "MPI, one per GPU"}
BEGIN, END = "<!-- multigpu:begin -->", "<!-- multigpu:end -->"


class DataError(Exception):
    pass


def load_records(path):
    if not os.path.isfile(path):
        raise DataError(f"{path} is missing")
    records = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if line:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise DataError(f"{path}:{number}: not a JSON record ({e})")
    if not records:
        raise DataError(f"{path} holds no records")
    return records


def power(n):
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k else str(n)


def ms(v):
    return "-" if v is None else f"{v:.4f}" if v < 1 else f"{v:.3f}"


def speedup(r):
    s = r.get("single_gpu_ms")
    return s / r["median_ms"] if s and r["median_ms"] > 0 else None


def x(v):
    return "-" if v is None else f"{v:.2f}x"


def key(r):
    return (list(MODES).index(r["mode"]) if r["mode"] in MODES else 9, r["gpus"], r["n"])


def strong_table(sweep):
    rows = sorted((r for r in sweep if r["n"] == STRONG_N), key=key)
    if not rows:
        return f"No run at n = {power(STRONG_N)}.\n"
    out = [f"Strong scaling, n = {power(STRONG_N)} floats in all ({STRONG_N * 4 / 1e9:.1f} GB), each GPU "
           "holding n / N; speedup over step 10 alone on one GPU over the whole array, measured in the same run:",
           "",
           "| mode | GPUs | median ms (min-max) | GB/s | speedup | per GPU | collective ms | collective share | check |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        s = speedup(r)
        per_gpu = "-" if s is None else f"{s / r['gpus']:.2f}"
        out.append(f"| {MODES.get(r['mode'], r['mode'])} | {r['gpus']} | {ms(r['median_ms'])} "
                   f"({ms(r['min_ms'])}-{ms(r['max_ms'])}) | {r['gbps']:.0f} | {x(s)} | "
                   f"{per_gpu} | {ms(r['collective_ms'])} | "
                   f"{100 * r['collective_share']:.2f}% | {'PASS' if r['passed'] else 'FAIL'} |")
    out += ["", targets(rows)]
    return "\n".join(out) + "\n"


def targets(rows):
    goals = {2: 1.9, 4: 3.7}
    lines = []
    for r in rows:
        if r["gpus"] in goals:
            s = speedup(r)
            met = s is not None and s >= goals[r["gpus"]]
            lines.append(f"{MODES.get(r['mode'], r['mode'])}, {r['gpus']} GPUs: {x(s)} against a target of "
                         f"{goals[r['gpus']]}x ({'met' if met else 'missed'}); collective "
                         f"{100 * r['collective_share']:.2f}% against under 5% "
                         f"({'met' if r['collective_share'] < 0.05 else 'missed'}).")
    return "Targets: " + " ".join(lines) if lines else "Targets: no 2- or 4-GPU run at this size."


def weak_table(weak):
    rows = sorted(weak, key=key)
    base = {r["mode"]: r["median_ms"] for r in rows if r["gpus"] == 1}
    out = [f"Weak scaling, {power(WEAK_PER_GPU)} floats per GPU; efficiency = the one-GPU run's time over this one's "
           "(1.00 = perfect):",
           "",
           "| mode | GPUs | n | median ms (min-max) | GB/s | GB/s per GPU | efficiency | collective share | check |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        b = base.get(r["mode"])
        eff = f"{b / r['median_ms']:.2f}" if b and r["median_ms"] > 0 else "-"
        out.append(f"| {MODES.get(r['mode'], r['mode'])} | {r['gpus']} | {power(r['n'])} | {ms(r['median_ms'])} "
                   f"({ms(r['min_ms'])}-{ms(r['max_ms'])}) | {r['gbps']:.0f} | {r['gbps'] / r['gpus']:.0f} | {eff} | "
                   f"{100 * r['collective_share']:.2f}% | {'PASS' if r['passed'] else 'FAIL'} |")
    return "\n".join(out) + "\n"


def crossover(rows):
    """The smallest n from which N GPUs beat one GPU at every larger n of the sweep (None: never)."""
    found = None
    for r in sorted(rows, key=lambda r: r["n"], reverse=True):
        s = speedup(r)
        if s is None or s <= 1.0:
            break
        found = r
    return found


def crossover_table(sweep):
    groups = {}
    for r in sweep:
        groups.setdefault((r["mode"], r["gpus"]), []).append(r)
    out = ["Crossover: the smallest n of the sweep from which N GPUs are faster than step 10 alone on one GPU at "
           "every larger n (below it the collective's latency and the extra launches cost more than the "
           "shorter shards save):",
           "",
           "| mode | GPUs | crossover n | there: N GPUs ms | one GPU ms | collective ms |",
           "|---|---:|---:|---:|---:|---:|"]
    for (mode, gpus), rows in sorted(groups.items(), key=lambda kv: key({"mode": kv[0][0], "gpus": kv[0][1], "n": 0})):
        if gpus < 2:
            continue
        c = crossover(rows)
        if c is None:
            out.append(f"| {MODES.get(mode, mode)} | {gpus} | not reached up to {power(max(r['n'] for r in rows))} | - | - | - |")
        else:
            out.append(f"| {MODES.get(mode, mode)} | {gpus} | {power(c['n'])} | {ms(c['median_ms'])} | "
                       f"{ms(c['single_gpu_ms'])} | {ms(c['collective_ms'])} |")
    return "\n".join(out) + "\n"


def sweep_table(sweep):
    columns = sorted({(r["mode"], r["gpus"]) for r in sweep}, key=lambda c: key({"mode": c[0], "gpus": c[1], "n": 0}))
    by = {(r["mode"], r["gpus"], r["n"]): r for r in sweep}
    out = ["Every size: speedup over one GPU (step 10 alone), and whether every run was correct:", "",
           "| n | " + " | ".join(f"{'1p' if m == 'single_process' else 'mpi'} x{g}" for m, g in columns) + " |",
           "|---|" + "---:|" * len(columns)]
    for n in sorted({r["n"] for r in sweep}):
        cells = []
        for m, g in columns:
            r = by.get((m, g, n))
            cells.append("-" if r is None else x(speedup(r)) + ("" if r["passed"] else " FAIL"))
        out.append(f"| {power(n)} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def markdown(d):
    sweep = load_records(os.path.join(d, "sweep.jsonl"))
    weak = load_records(os.path.join(d, "weak.jsonl"))
    meta = {}
    if os.path.isfile(os.path.join(d, "meta.json")):
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
    first = sweep[0]
    gpus = max(r["gpus"] for r in sweep + weak)
    head = (f"Measured on {gpus} x {first['device']} ({meta.get('link', 'link not recorded')}), CUDA "
            f"{first['cuda_runtime']} (driver {first['cuda_driver']}), NCCL {first['nccl_version']}, "
            f"{meta.get('date', 'date not recorded')}, commit `{meta.get('commit', 'unknown')}`. "
            f"L2 of every GPU flushed before each timed run; pattern {first['pattern']}; data: "
            f"`{os.path.basename(os.path.normpath(d))}/sweep.jsonl`, `weak.jsonl`.")
    failed = [r for r in sweep + weak if not r["passed"]]
    parts = [head, "", strong_table(sweep), weak_table(weak), crossover_table(sweep), sweep_table(sweep)]
    if failed:
        parts.append(f"**{len(failed)} record(s) failed their check** (see the check columns).\n")
    if os.path.isfile(os.path.join(d, "scaling.png")):
        parts.insert(2, f"![speedup and GB/s against n](scaling.png)\n")
    return "\n".join(parts)


def plot(d):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("tables.py: matplotlib not installed, no plot", file=sys.stderr)
        return False
    sweep = load_records(os.path.join(d, "sweep.jsonl"))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for (mode, gpus) in sorted({(r["mode"], r["gpus"]) for r in sweep}):
        rows = sorted((r for r in sweep if r["mode"] == mode and r["gpus"] == gpus), key=lambda r: r["n"])
        style = "-" if mode == "single_process" else "--"
        label = f"{gpus} GPU{'s' if gpus > 1 else ''} ({MODES.get(mode, mode)})"
        left.plot([r["n"] for r in rows], [r["gbps"] for r in rows], style, marker="o", ms=3, label=label)
        right.plot([r["n"] for r in rows], [speedup(r) or float("nan") for r in rows], style, marker="o", ms=3,
                   label=label)
    one = sorted((r for r in sweep if r.get("single_gpu_ms")), key=lambda r: r["n"])
    seen = {}
    for r in one:
        seen.setdefault(r["n"], r["n"] * 4 / (r["single_gpu_ms"] * 1e-3) / 1e9)
    left.plot(list(seen), list(seen.values()), ":", color="black", label="step 10 alone, one GPU")
    right.axhline(1.0, color="black", lw=0.8)
    for ax, title in ((left, "aggregate GB/s (cold L2)"), (right, "speedup over one GPU")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (floats in all)")
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    right.set_yscale("log", base=2)
    left.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "scaling.png"), dpi=120)
    return True


def update_readme(path, text):
    with open(path) as f:
        old = f.read()
    if old.count(BEGIN) != 1 or old.count(END) != 1 or old.index(BEGIN) > old.index(END):
        raise DataError(f"{path} has no single {BEGIN} ... {END} block")
    start = old.index(BEGIN) + len(BEGIN)
    new = old[:start] + "\n" + text.rstrip() + "\n" + old[old.index(END):]
    if new != old:
        with open(path, "w") as f:
            f.write(new)
    print(f"tables.py: {path} {'updated' if new != old else 'unchanged'}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="+", metavar="DIR")
    p.add_argument("--out", help="write the markdown here instead of stdout")
    p.add_argument("--plot", action="store_true", help="write DIR/scaling.png (needs matplotlib)")
    p.add_argument("--readme", help="replace this file's multigpu block with the markdown")
    args = p.parse_args()
    try:
        for d in args.dirs:
            if not os.path.isdir(d):
                p.error(f"{d} is not a folder")
        if args.plot:
            for d in args.dirs:
                plot(d)
        text = "\n".join(markdown(d) for d in args.dirs)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        elif not args.readme:
            sys.stdout.write(text)
        if args.readme:
            readme_text = text
            for d in args.dirs:  # the README sits beside results/: link the data and plot from there
                rel = os.path.relpath(d, os.path.dirname(os.path.abspath(args.readme)))
                readme_text = readme_text.replace("](scaling.png)", f"]({rel}/scaling.png)", 1)
            update_readme(args.readme, readme_text)
    except (DataError, KeyError, OSError) as e:
        print(f"tables.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
