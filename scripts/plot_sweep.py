#!/usr/bin/env python3
"""Plots a sweep CSV (from run_all --sweep): GB/s against n, one line per step, the library step
highlighted, the measured read ceiling dotted and the theoretical DRAM bandwidth dashed.

    scripts/plot_sweep.py build/release/results/sweep.csv build/release/results/sweep.png

The output ends in .png, .svg or .pdf, in a folder that exists. The CSV is checked before anything
is drawn: a missing, malformed, empty or header-only file is an error and no plot is written.
Exit codes: 0 plotted, 1 the CSV is unusable or the plot failed, 2 bad usage, 77 matplotlib is not
installed (the CSV is fine; plot it where matplotlib is).
"""

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite  # noqa: E402
from suite import Failure, NoGpu, UsageError  # noqa: E402

FORMATS = (".png", ".svg", ".pdf")


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
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise NoGpu("matplotlib is not installed (python3 -m pip install matplotlib); nothing plotted") from None

    steps = suite.read_steps()
    library = suite.library_step(steps)
    series, peak, device, cuda = defaultdict(list), 0.0, "", ""
    for row in rows:
        series[row["step"]].append((row["n"], row["gbps"]))
        peak = max(peak, row["peak_gbps"])
        if row["step"] != suite.CEILING_TOOL:
            device, cuda = row.get("device", ""), row.get("cuda_runtime", "")

    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=120)
    order = {s: i for i, s in enumerate(steps)}
    for step in sorted(series, key=lambda s: (order.get(suite.current_name(s, steps), len(steps)), s)):
        pts = sorted(series[step])
        style = dict(marker="o", markersize=3, linewidth=1.4, label=step, zorder=2)
        if suite.current_name(step, steps) == library:
            style.update(linewidth=3.0, color="black", label=step + " (library)", zorder=3)
        elif step == suite.CEILING_TOOL:
            style.update(linestyle=":", marker=None, linewidth=2.0, color="gray", label="read ceiling (read-only kernel)")
        ax.plot([q[0] for q in pts], [q[1] for q in pts], **style)
    if peak:
        ax.axhline(peak, color="gray", linestyle="--", linewidth=1)
        ax.text(max(r["n"] for r in rows), peak * 1.01, f"theoretical DRAM bandwidth {peak:.0f} GB/s",
                color="gray", fontsize=8, va="bottom", ha="right")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("GB/s read (median, L2 flushed before each run)")
    ax.set_title(f"Float sum, every step: {device}, CUDA {cuda}")
    ax.set_ylim(0, (peak or ax.get_ylim()[1]) * 1.08)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    try:
        fig.savefig(dst)
    except OSError as e:
        raise Failure(f"cannot write {dst}: {e.strerror}") from None
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    suite.run_main("plot_sweep.py", main)
