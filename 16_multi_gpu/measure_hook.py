"""Step 14's add-on to scripts/measure: the scaling tables that follow the table of every record in
table.md, made from the same records (the runs of measure.args).

    tables(results) -> markdown      results: [(NAME, [record, ...]), ...] as scripts/measure holds them

Strong scaling: per mode and number of GPUs, the record at the largest n of the sweeps, with its speedup
over step 10 alone on one GPU (vs_single_gpu, measured in the same run) and the collective's share of the
time, then whether the README's targets were met there (TARGETS: the speedup with 2 and 4 GPUs, the
collective under 5%). Crossover: the smallest n from which N GPUs stay faster than one. Weak scaling: the runs with a
fixed count per GPU (n_per_gpu), with efficiency = the one-GPU run's time over this one's (1.00 perfect).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import suite  # noqa: E402

MODES = {"single_process": "one process", "mpi": "MPI, one per GPU"}
TARGETS = {2: 1.9, 4: 3.7}  # the least speedup over one GPU at the largest n, by number of GPUs
COLLECTIVE_TARGET = 0.05    # the collective's share of the time, at most


def ms_cell(r):
    return f"{r['median_ms']:.4g} ({r['min_ms']:.4g}-{r['max_ms']:.4g})"


def check(r):
    return "PASS" if suite.passed(r.get("passed")) else "FAIL"


def crossover(records):
    """The smallest n from which every larger n of these records is faster than one GPU; None: never."""
    faster = None
    for r in sorted(records, key=lambda r: r["n"]):
        if r.get("vs_single_gpu", 0) > 1:
            faster = faster if faster is not None else r["n"]
        else:
            faster = None
    return faster


def targets(rows):
    """One line: for each record of 2 or 4 GPUs, its speedup and collective share against the targets."""
    lines = []
    for r in rows:
        goal = TARGETS.get(r["gpus"])
        if goal is None:
            continue
        speedup, share = r.get("vs_single_gpu", 0), r.get("collective_share", 0)
        lines.append(f"{MODES.get(r['mode'], r['mode'])}, {r['gpus']} GPUs: {speedup:.2f}x against a target of "
                     f"{goal}x ({'met' if speedup >= goal else 'missed'}); collective {100 * share:.2f}% against under "
                     f"{100 * COLLECTIVE_TARGET:g}% ({'met' if share < COLLECTIVE_TARGET else 'missed'}).")
    return "Targets: " + (" ".join(lines) if lines else "no run of 2 or 4 GPUs at this size.")


def tables(results):
    # The reproducible mode's records have a table of their own (measure.args: "table reproducible:").
    records = [r for _, rs in results for r in rs if not str(r.get("mode", "")).startswith("reproducible")]
    strong = [r for r in records if not r.get("n_per_gpu")]
    weak = [r for r in records if r.get("n_per_gpu")]
    out = []
    groups = sorted({(r["mode"], r["gpus"]) for r in strong}, key=lambda k: (k[0] != "single_process", k[1]))
    if groups:
        top = max(r["n"] for r in strong)
        rows, tops = [], []
        for mode, gpus in groups:
            at = [r for r in strong if (r["mode"], r["gpus"]) == (mode, gpus) and r["n"] == top]
            if not at:
                continue
            r = at[-1]
            tops.append(r)
            rows.append([MODES.get(mode, mode), str(gpus), ms_cell(r), f"{r['gbps']:.0f}",
                         f"{r.get('vs_single_gpu', 0):.2f}x", f"{100 * r.get('collective_share', 0):.2f}%", check(r)])
        out.append(f"Strong scaling at n = {suite.count_text(top)} floats in all, each GPU holding n / N; speedup over step 10 "
                   "alone on one GPU over the whole array, measured in the same run:\n\n" +
                   suite.render_markdown(["mode", "GPUs", "median ms (min-max)", "GB/s", "speedup",
                                          "collective share", "check"], rows) + "\n\n" + targets(tops))
        lines = []
        for mode, gpus in groups:
            if gpus < 2:
                continue
            n = crossover([r for r in strong if (r["mode"], r["gpus"]) == (mode, gpus)])
            lines.append(f"- {MODES.get(mode, mode)}, {gpus} GPUs: " +
                         (f"faster than one GPU from n = {suite.count_text(n)} on" if n else "not faster than one GPU at any n measured"))
        if lines:
            out.append("Crossover (the smallest n from which every larger n measured is faster than one GPU):\n\n" +
                       "\n".join(lines))
    if weak:
        rows = []
        for r in sorted(weak, key=lambda r: (r["mode"] != "single_process", r["gpus"])):
            one = [w for w in weak if w["mode"] == r["mode"] and w["gpus"] == 1]
            efficiency = one[-1]["median_ms"] / r["median_ms"] if one and r["median_ms"] > 0 else 0
            rows.append([MODES.get(r["mode"], r["mode"]), str(r["gpus"]), suite.count_text(r["n"]), ms_cell(r), f"{r['gbps']:.0f}",
                         f"{r['gbps'] / r['gpus']:.0f}", f"{efficiency:.2f}" if one else "-",
                         f"{100 * r.get('collective_share', 0):.2f}%", check(r)])
        per_gpu = suite.count_text(weak[0]["n_per_gpu"])
        out.append(f"Weak scaling, {per_gpu} floats per GPU; efficiency = the one-GPU run's time over this one's "
                   "(1.00 = perfect):\n\n" +
                   suite.render_markdown(["mode", "GPUs", "n", "median ms (min-max)", "GB/s", "GB/s per GPU",
                                          "efficiency", "collective share", "check"], rows))
    return "\n\n".join(out) + ("\n" if out else "")
