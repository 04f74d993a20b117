#!/usr/bin/env python3
"""Plots a sweep CSV (from run_all --sweep): GB/s against n, one panel per step, so that no two
steps' lines lie on top of each other. Each panel shows its step in its own colour, the measured
read ceiling dotted and the library step thin and black for reference, on the same log-log axes
(n from 2^10 to 2^30 spans six decades of GB/s: a linear axis would flatten the small sizes at 0).

    scripts/plot_sweep.py build/release/results/sweep.csv build/release/results/sweep.png
    scripts/plot_sweep.py results/h200/progression/sweep.csv results/h200/progression/sweep.png

The output ends in .png, .svg or .pdf, in a folder that exists. The CSV is checked before anything
is drawn: a missing, malformed, empty or header-only file is an error and no plot is written.
Exit codes: 0 plotted, 1 the CSV is unusable or the plot failed, 2 bad usage, 77 matplotlib is not
installed (the CSV is fine; plot it where matplotlib is).

As a module (standard library only until a plot is drawn) it is what scripts/figures and
scripts/update_readme share about the measured data: a sweep's points per step, each step's share
of the read ceiling, each step's gain over the previous one (scripts/compare's interval and
verdict), whether a results folder holds the current progression, the ablation of steps 09 and 10
(read_ablation, ablation_table), the steps' plot styles and deterministic saving.
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


# --- the figures scripts/figures draws per GPU (results/<gpu>/figures/<name>.png) ---------------------

# Name, what it needs ("table": table.json; "sweep": sweep.csv and sweep_meta.json; "ablation":
# ablation.txt; "multi": 16_multi_gpu's records) and a caption for the READMEs ({k}: log2 of the
# table's n). scripts/figures draws them; a README block that links them can take this list.
GPU_FIGURES = [
    ("steps_bar", "table", "every step at n = 2^{k}: median GB/s, whiskers from the slowest to the fastest timed "
                           "run; the library black, the read ceiling and the theoretical bandwidth as lines"),
    ("sweep", "sweep", "GB/s against n, one panel per step, with the read ceiling and the library in each"),
    ("sweep_ceiling", "sweep", "every step's share of the read ceiling at every n of the sweep, the first half "
                               "of the steps on the left, the second on the right"),
    ("grid_09_10", "sweep", "what steps 09 and 10 launch at every n (blocks, float4s per thread) above the gain "
                            "of 10 over 09"),
    ("ablation", "ablation", "step 09 to step 10 one change at a time: each change's gain over step 09 at every "
                             "n, whiskers from the five interleaved rounds"),
]
MULTI_GPU_FIGURES = [("scaling", "multi", "step 14: aggregate GB/s and speedup over one GPU against n")]
MULTI_GPU_STEP = "16_multi_gpu"  # results/<gpu>_x<N>/16_multi_gpu/: the records the "multi" figures read


def is_several(name):
    """A folder of results/ for several GPUs of one host: <gpu>_x<N>."""
    head, sep, count = name.rpartition("_x")
    return bool(head and sep and count.isdigit())


# --- the ablation of steps 09 and 10 (perf/variants.cu, set ablation) ------------------------------

# What each row of the set changes, as the tables and the chart name it. a is step 09, f step 10;
# a2 and f2 are perf/variants.cu's own copies of the two kernels (a check that the copies measure alike).
ABLATION_ROWS = {
    "a": "step 09 (grid-stride, grid n/4B, 256 threads)",
    "b": "09 + the tile-sized grid (n/16B)",
    "c": "09 + 512 threads",
    "d": "09 + the tile layout",
    "e": "step 10 at 256 threads",
    "f": "step 10 (tiles, grid n/16B, 512 threads)",
}
ABLATION_SHOWN = ("b", "c", "d", "e", "f")
ABLATION_SHORT = {"b": "b: grid", "c": "c: 512 threads", "d": "d: tiles", "e": "e: 10 at 256", "f": "f: step 10"}
ABLATION_COLUMNS = ("log2n", "row", "variant", "layout", "block", "rule", "grid", "median_GBps", "min_GBps",
                    "max_GBps", "round_lo", "round_hi", "vs_a", "check")
Effect = namedtuple("Effect", "log2n row vs_a low high verdict")


def read_ablation(path):
    """ablation.txt as {"device": name, "rows": {(log2n, row): {column: value}}}; Failure when it is
    empty, lacks its header or a row is malformed or failed its check."""
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror}") from None
    device, header, rows = None, None, {}
    for number, line in enumerate(lines, 1):
        words = line.split()
        if line.startswith("set ablation:"):
            device = line.split(":", 1)[1].split(",")[0].strip()
        elif words[:2] == ["log2n", "row"]:
            header = words
            if tuple(header) != ABLATION_COLUMNS:
                raise Failure(f"{path}:{number}: unexpected columns {' '.join(header)}")
        elif header and words:
            if len(words) != len(header):
                raise Failure(f"{path}:{number}: {len(words)} fields, expected {len(header)}")
            row = dict(zip(header, words))
            try:
                for key in ("log2n", "block", "grid"):
                    row[key] = int(row[key])
                for key in ("median_GBps", "min_GBps", "max_GBps", "round_lo", "round_hi", "vs_a"):
                    row[key] = float(row[key])
            except ValueError:
                raise Failure(f"{path}:{number}: not a number in '{line.strip()}'") from None
            if row["check"] != "PASS":
                raise Failure(f"{path}:{number}: row {row['row']} at 2^{row['log2n']} did not pass its check")
            rows[(row["log2n"], row["row"])] = row
    if device is None or header is None or not rows:
        raise Failure(f"{path}: not an ablation (no 'set ablation:' line, header or rows)")
    return {"device": device, "rows": rows}


def ablation_effects(ablation):
    """[Effect] for every size and every shown row: vs_a (row a's median time over the row's), and the
    interval the five interleaved rounds allow, the row's slowest round against a's fastest and its
    fastest against a's slowest; 'faster' or 'slower' than step 09 only where the interval excludes 1."""
    rows = ablation["rows"]
    out = []
    for k in sorted({k for k, _ in rows}):
        a = rows.get((k, "a"))
        if a is None:
            continue
        for name in ABLATION_SHOWN:
            r = rows.get((k, name))
            if r is None:
                continue
            low, high = r["round_lo"] / a["round_hi"], r["round_hi"] / a["round_lo"]
            word = "faster" if low > 1 else "slower" if high < 1 else "within the rounds"
            out.append(Effect(k, name, r["vs_a"], low, high, word))
    return out


def ablation_table(ablation, source):
    """The markdown table of one GPU's ablation: one line per size, one column per row b-f, each cell
    the gain over step 09 with the rounds' interval, bold where the interval excludes 1."""
    effects = ablation_effects(ablation)
    sizes = sorted({e.log2n for e in effects})
    by = {(e.log2n, e.row): e for e in effects}
    lines = [f"{ablation['device']}, gain over step 09 (row a's median time over the row's), and the range the "
             "five interleaved rounds allow (the row's slowest round against row a's fastest, and its fastest "
             f"against a's slowest); **bold** where the whole range lies above or below 1. Data: {source}.",
             "",
             "| n | " + " | ".join(ABLATION_SHORT[name] for name in ABLATION_SHOWN) + " |",
             "|---|" + "---:|" * len(ABLATION_SHOWN)]
    for k in sizes:
        cells = []
        for name in ABLATION_SHOWN:
            e = by.get((k, name))
            if e is None:
                cells.append("-")
                continue
            text = f"{e.vs_a:.3f}x ({e.low:.3f}-{e.high:.3f})"
            cells.append(f"**{text}**" if e.verdict != "within the rounds" else text)
        lines.append(f"| 2^{k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


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
    """GB/s against n, one panel per step (log 2 / log 10 axes, shared): the step in its colour, the read
    ceiling dotted, the library thin and black; the theoretical DRAM bandwidth dashed."""
    plt = pyplot()
    points = sweep_points(rows)
    styles = step_styles(steps)
    peak = max(r["peak_gbps"] for r in rows)
    device = next((r.get("device", "") for r in rows if r["step"] != suite.CEILING_TOOL), "")
    cuda = next((r.get("cuda_runtime", "") for r in rows if r["step"] != suite.CEILING_TOOL), "")
    order = {s: i for i, s in enumerate(steps)}
    shown = sorted((s for s in points if s != suite.CEILING_TOOL),
                   key=lambda s: (order.get(suite.current_name(s, steps), len(steps)), s))
    if not shown:
        raise Failure("the sweep holds no step's rows: nothing to plot")
    cols = 4 if len(shown) > 6 else min(3, len(shown))
    nrows = -(-len(shown) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 2.7 * nrows + 0.8), sharex=True, sharey=True,
                             squeeze=False)
    library = suite.library_step(steps)
    ceiling = sorted(points.get(suite.CEILING_TOOL, {}).items())
    lib = sorted(points.get(library, {}).items())
    for ax, step in zip(axes.flat, shown):
        name = suite.current_name(step, steps)
        if ceiling:
            ax.plot([n for n, _ in ceiling], [r["gbps"] for _, r in ceiling], color="gray", linestyle=":",
                    linewidth=2, label="read ceiling")
        if lib and name != library:
            ax.plot([n for n, _ in lib], [r["gbps"] for _, r in lib], color="black", linewidth=0.9,
                    label=f"{library} (library)")
        pts = sorted(points[step].items())
        style = dict(styles.get(name) or dict(color="gray", marker=".", linestyle="-"), linestyle="-")
        ax.plot([n for n, _ in pts], [r["gbps"] for _, r in pts], label=step, **style)
        if peak:
            ax.axhline(peak, color="gray", linestyle="--", linewidth=0.8)
        ax.set_title(label(step, steps), fontsize=9)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes.flat[len(shown):]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("n (floats)")
    for ax in axes[:, 0]:
        ax.set_ylabel("GB/s read (median)")
    handles = [plt.Line2D([], [], color="gray", linestyle=":", linewidth=2, label="measured read ceiling (same n)"),
               plt.Line2D([], [], color="black", linewidth=0.9, label=f"{library} (the library), for reference"),
               plt.Line2D([], [], color="gray", linestyle="--", linewidth=0.8,
                          label=f"theoretical DRAM bandwidth, {peak:.0f} GB/s")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(f"Float sum, every step at every n: {device}, CUDA {cuda} (L2 flushed before each run; log axes)",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
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
