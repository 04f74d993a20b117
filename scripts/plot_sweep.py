#!/usr/bin/env python3
"""Plots a sweep CSV (from run_all --sweep): GB/s against n, both axes logarithmic so that the small
sizes are not flattened at zero, every step in its own colour, marker and line style, the library
step in black, the measured read ceiling dotted and the theoretical DRAM bandwidth dashed.

    scripts/plot_sweep.py build/release/results/sweep.csv build/release/results/sweep.png
    scripts/plot_sweep.py results/h200/progression/sweep.csv results/h200/progression/sweep.png

The output ends in .png, .svg or .pdf, in a folder that exists. The CSV is checked before anything
is drawn: a missing, malformed, empty or header-only file is an error and no plot is written.
Exit codes: 0 plotted, 1 the CSV is unusable or the plot failed, 2 bad usage, 77 matplotlib is not
installed (the CSV is fine; plot it where matplotlib is).

As a module (standard library only until a plot is drawn) it is what scripts/figures and
scripts/update_readme share about a sweep: its points per step, each step's share of the read
ceiling, each step's gain over the previous one (scripts/compare's interval and verdict), whether a
results folder holds the current progression, the steps' plot styles and deterministic saving.
"""

import os
import sys
from collections import namedtuple
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite  # noqa: E402
from suite import Failure, NoGpu, UsageError  # noqa: E402

FORMATS = (".png", ".svg", ".pdf")
DPI = 110
# The gain blocks of the step READMEs cover these sizes: below 2^16 every step is a launch or two of
# a few microseconds, and the gain is launch latency, not the lesson.
GAIN_SIZES = (16, 30)

# Sixteen colours that stay apart on a projector and in print (Tableau's ten and six more); the
# library is always black. With a marker and a line style of its own as well, no two steps look
# alike even where their curves lie on top of each other.
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173", "#3182bd"]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">", "p", "d", "H", "8", "1"]
LINES = ["-", "--", "-.", ":"]


# --- data ----------------------------------------------------------------------------------------

def as_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def sweep_points(rows):
    """{step: {n: row}} of read_sweep_csv's rows, with median_ms, min_ms and max_ms as floats (None
    where a row lacks them)."""
    points = {}
    for row in rows:
        row = dict(row, **{k: as_float(row.get(k)) for k in ("median_ms", "min_ms", "max_ms")})
        points.setdefault(row["step"], {})[row["n"]] = row
    return points


def ceiling_share(points, step):
    """[(n, share)] of a step: its GB/s over the read ceiling's at the same n, where both exist."""
    ceiling = points.get(suite.CEILING_TOOL, {})
    return [(n, row["gbps"] / ceiling[n]["gbps"]) for n, row in sorted(points.get(step, {}).items())
            if n in ceiling and ceiling[n]["gbps"] > 0]


Gain = namedtuple("Gain", "n gain low high verdict")


def gains(points, prev, step, sizes=GAIN_SIZES):
    """The step's gain over prev at each n = 2^k of sizes (inclusive) that both hold, as Gains judged by
    scripts/compare's method (compare.ratio_interval): gain = prev's median time / the step's, low and
    high the ends of its 95% interval, verdict faster, slower or within noise. run_all's sweep times
    suite.sweep_iters(n) runs per point and its CSV does not say so. A point without quartiles, min or
    max (an older CSV) gets the median ratio as its interval and is within noise."""
    compare = suite.load_script("compare")
    out = []
    a, b = points.get(prev, {}), points.get(step, {})
    for k in range(sizes[0], sizes[1] + 1):
        n = 1 << k
        if n not in a or n not in b:
            continue
        v = compare.ratio_interval(*(dict(x, iters=x.get("iters") or suite.sweep_iters(n)) for x in (a[n], b[n])))
        if v is not None:
            out.append(Gain(n, v.ratio, v.ratio if v.low is None else v.low, v.ratio if v.high is None else v.high,
                            v.verdict))
    return out


def size_ranges(ns):
    """Sizes as runs of consecutive powers of two: [2^16, 2^17, 2^18, 2^22] -> '2^16-2^18, 2^22'."""
    ks = sorted(suite.log2(n) for n in ns)
    runs = []
    for k in ks:
        if runs and k == runs[-1][1] + 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    return ", ".join(f"2^{a}" if a == b else f"2^{a}-2^{b}" for a, b in runs)


def read_changed(folder):
    """The steps an older record's changed_steps.txt names (their folder held other code then)."""
    path = Path(folder) / "changed_steps.txt"
    if not path.is_file():
        return []
    return [line.split(":", 1)[0].strip() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def current_record(folder, steps):
    """(table, why not): the folder's table.json when it holds today's progression in today's format,
    a measured read ceiling beside the steps, every step of steps.txt under its own name, and no
    changed_steps.txt; else (None, the reason in a few words)."""
    folder = Path(folder)
    if not (folder / "table.json").is_file():
        return None, "no table.json"
    changed = read_changed(folder)
    if changed:
        return None, f"an older progression ({', '.join(changed)} held other code; changed_steps.txt)"
    table = suite.load_table(folder / "table.json")
    if not isinstance(table.get("ceiling"), dict) or not table["ceiling"].get("gbps"):
        return None, "an older format (table.json has no read ceiling)"
    held = {r["step"] for r in table["records"]}
    missing = [s for s in steps if s not in held]
    if missing:
        return None, f"not today's steps (no {', '.join(missing)} in table.json)"
    return table, ""


def current_sweep(folder, steps):
    """(sweep rows, sweep_meta, why not) of a folder whose record is current (current_record) and whose
    sweep.csv has the read ceiling's rows; rows None when not."""
    folder = Path(folder)
    table, why = current_record(folder, steps)
    if table is None:
        return None, None, why
    if not (folder / "sweep.csv").is_file() or not (folder / "sweep_meta.json").is_file():
        return None, None, "no sweep.csv and sweep_meta.json"
    rows = suite.read_sweep_csv(folder / "sweep.csv")
    if not any(r["step"] == suite.CEILING_TOOL for r in rows):
        return None, None, "an older format (sweep.csv has no read ceiling)"
    import json
    try:
        meta = json.loads((folder / "sweep_meta.json").read_text())
    except json.JSONDecodeError as e:
        raise Failure(f"{folder / 'sweep_meta.json'}: not JSON ({e})") from None
    return rows, meta, ""


# --- drawing -------------------------------------------------------------------------------------

def step_styles(steps):
    """{step: plot keywords}: colour, marker and line style per position in steps.txt; the library black."""
    styles = {}
    for i, step in enumerate(steps):
        styles[step] = dict(color=COLOURS[i % len(COLOURS)], marker=MARKERS[i % len(MARKERS)],
                            linestyle=LINES[i % len(LINES)], linewidth=1.6, markersize=5)
    styles[suite.library_step(steps)] = dict(color="black", marker="o", linestyle="-", linewidth=2.6,
                                             markersize=5)
    return styles


def pyplot():
    """matplotlib's pyplot on the file-only backend, fixed fonts and sizes; NoGpu (exit 77, as the suite
    treats a missing tool) where matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise NoGpu("matplotlib is not installed (python3 -m pip install matplotlib); nothing plotted") from None
    matplotlib.rcParams.update({"font.family": "DejaVu Sans", "font.size": 10, "svg.hashsalt": "reduce",
                                "path.simplify": False})
    return plt


def save(fig, dst):
    """Writes the figure without the metadata that would differ between runs (the tool's version, a
    date), so that the same data gives the same file."""
    metadata = {".png": {"Software": None}, ".svg": {"Date": None, "Creator": None},
                ".pdf": {"CreationDate": None, "Creator": None, "Producer": None}}[Path(dst).suffix.lower()]
    dst = Path(dst)
    tmp = dst.with_name(f".{dst.stem}.tmp{dst.suffix}")  # whole or not at all: drawn beside it, renamed over
    try:
        fig.savefig(tmp, dpi=DPI, metadata=metadata)
        os.replace(tmp, dst)
    except OSError as e:
        raise Failure(f"cannot write {dst}: {e.strerror}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
        import matplotlib.pyplot as plt
        plt.close(fig)


def label(step, steps):
    return step + (" (library)" if step == suite.library_step(steps) else "")


def draw_sweep(rows, steps, dst):
    """GB/s against n, both axes log 2 / log 10; the ceiling dotted, theoretical DRAM dashed."""
    plt = pyplot()
    points = sweep_points(rows)
    styles = step_styles(steps)
    peak = max(r["peak_gbps"] for r in rows)
    device = next((r.get("device", "") for r in rows if r["step"] != suite.CEILING_TOOL), "")
    cuda = next((r.get("cuda_runtime", "") for r in rows if r["step"] != suite.CEILING_TOOL), "")
    fig, ax = plt.subplots(figsize=(10, 6.2))
    order = {s: i for i, s in enumerate(steps)}
    for step in sorted(points, key=lambda s: (order.get(suite.current_name(s, steps), len(steps)), s)):
        pts = sorted(points[step].items())
        xs, ys = [n for n, _ in pts], [r["gbps"] for _, r in pts]
        if step == suite.CEILING_TOOL:
            ax.plot(xs, ys, color="gray", linestyle=":", linewidth=2.2, label="read ceiling (read-only kernel)",
                    zorder=1)
            continue
        name = suite.current_name(step, steps)
        style = styles.get(name) or dict(color="gray", marker=".", linestyle="-")
        ax.plot(xs, ys, label=label(step, steps), zorder=3 if name == suite.library_step(steps) else 2, **style)
    if peak:
        ax.axhline(peak, color="gray", linestyle="--", linewidth=1)
        ax.text(min(r["n"] for r in rows), peak * 1.1, f"theoretical DRAM bandwidth {peak:.0f} GB/s",
                color="dimgray", fontsize=8, va="bottom", ha="left")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("GB/s read (median; L2 flushed before each run; log scale)")
    ax.set_title(f"Float sum, every step: {device}, CUDA {cuda}")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 0.22), ncol=2)  # where no curve runs
    fig.tight_layout()
    save(fig, dst)


def main(argv):
    p = suite.ArgumentParser("plot_sweep.py", __doc__)
    p.add_argument("csv", help="sweep.csv from run_all --sweep")
    p.add_argument("output", help="the plot: a .png, .svg or .pdf file")
    args = p.parse_args(argv)
    src, dst = Path(args.csv), Path(args.output)
    if not src.is_file():
        raise UsageError(f"no such file: {src}")
    if dst.suffix.lower() not in FORMATS:
        raise UsageError(f"output {dst}: expected a {', '.join(FORMATS)} file")
    if not dst.parent.is_dir():
        raise UsageError(f"output {dst}: no such folder {dst.parent}")
    rows = suite.read_sweep_csv(src)
    pyplot()  # matplotlib first: without it, nothing below is worth doing
    draw_sweep(rows, suite.read_steps(), dst)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    suite.run_main("plot_sweep.py", main)
