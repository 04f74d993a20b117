#!/usr/bin/env python3
"""Plots a sweep CSV (from run_all --sweep): GB/s against n, one line per step, CUB highlighted,
the theoretical DRAM bandwidth as a dashed line.

    scripts/plot_sweep.py build/results/sweep.csv build/results/sweep.png

Exit code 3 when matplotlib is not installed (the CSV is still there to plot elsewhere).
"""

import csv
import sys
from collections import defaultdict


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 3
    src, dst = argv
    series, peak, device, cuda = defaultdict(list), 0.0, "", ""
    with open(src, newline="") as f:
        for row in csv.DictReader(f):
            series[row["step"]].append((int(float(row["n"])), float(row["gbps"])))
            peak = max(peak, float(row["peak_gbps"] or 0))
            device, cuda = row["device"], row["cuda_runtime"]

    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=120)
    for step in sorted(series):
        pts = sorted(series[step])
        is_cub = step.endswith("cub")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                linewidth=3.0 if is_cub else 1.4, color="black" if is_cub else None,
                label=step + (" (library)" if is_cub else ""), zorder=3 if is_cub else 2)
    if peak:
        ax.axhline(peak, color="gray", linestyle="--", linewidth=1)
        ax.text(max(p[0] for s in series.values() for p in s), peak * 1.01,
                f"theoretical DRAM bandwidth {peak:.0f} GB/s", color="gray", fontsize=8, va="bottom", ha="right")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("GB/s read (median, L2 flushed before each run)")
    ax.set_title(f"Float sum, every step: {device}, CUDA {cuda}")
    ax.set_ylim(0, (peak or ax.get_ylim()[1]) * 1.08)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(dst)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
