"""Tables rendered from records: the progression's speedup table, a step's row at its demo n, the
tables of the steps beyond it (main, named field tables, 16's scaling tables) and Nsight Compute's."""

import csv
import io
import re

from .common import count_text
from .stats import median


def markdown(headers, rows, left=1):
    """A Markdown table: the first `left` columns left-aligned, the rest right-aligned."""
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    rule = "|" + "|".join("---" if i < left else "---:" for i in range(len(headers))) + "|"
    out = ["| " + " | ".join(headers) + " |", rule]
    return "\n".join(out + ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows])


def text(headers, rows, left=2):
    """A fixed-width table for a terminal."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def ratio_text(x):
    return "-" if not x else f"{x:.0f}x" if x >= 100 else f"{x:.2f}x"


def passed(r):
    return str(r.get("passed")).lower() == "true"


def speedup_table(records, ceiling=None):
    """(headers, rows): one row per step, in the given order; "vs 01" against step 01 (the textbook
    tree; "vs NN" against the first row where 01 is not run), "vs prev" against the row before; the
    CPU column against one CPU time for all rows."""
    base = next((r for r in records if r["step"].startswith("01_")), records[0])
    cpu = median([r["cpu_ms"] for r in records if r.get("cpu_ms")])
    ceil = (ceiling or {}).get("gbps")
    headers = (
        ["step", "what it teaches", "median ms", "GB/s", "% peak"]
        + (["% ceiling"] if ceil else [])
        + ["vs 1 CPU thread", f"vs {base['step'][:2]}", "vs prev", "check"]
    )
    rows, prev = [], None
    for r in records:
        ms = r["median_ms"]
        row = [
            r["step"],
            r.get("lesson", ""),
            f"{ms:.4f}" if ms < 10 else f"{ms:.2f}",
            f"{r['gbps']:.1f}",
            f"{r['pct_peak']:.1f}",
        ] + ([f"{100 * r['gbps'] / ceil:.1f}"] if ceil else [])
        row += [
            ratio_text(cpu / ms if cpu and ms else None),
            ratio_text(base["median_ms"] / ms if ms else None),
            ratio_text(prev / ms if prev and ms else None),
            "PASS" if passed(r) else "FAIL",
        ]
        rows.append(row)
        prev = ms
    return headers, rows


def at_n(points, step, n):
    """The sweep record of step at n, or None."""
    return next((p for p in points if p["step"] == step and int(p["n"]) == n), None)


def comparisons(record):
    """x for every x_gbps with a vs_x in the record, in its order."""
    return [k[:-5] for k in record if k.endswith("_gbps") and f"vs_{k[:-5]}" in record]


def cell(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"
    return "" if value is None else str(value)


def beyond_table(plan, results, ceilings):
    """The main table of a step beyond the progression: one row per record of its measure runs.
    results: [(NAME, records)]; ceilings: {bytes: read_ceiling record}."""
    results = [(name, [r for r in rs if not plan.skip or plan.skip not in r]) for name, rs in results]
    if plan.largest and any(rs for _, rs in results):
        top = max(int(r["n"]) for _, rs in results for r in rs)
        results = [(name, [r for r in rs if int(r["n"]) == top]) for name, rs in results]
        seen = set()  # one row per (columns, n): the first run that measured it (a weak-scaling run repeats it)
        for _, rs in results:
            rs[:] = [
                r
                for r in rs
                if not (
                    tuple(str(r.get(c)) for c in plan.columns) in seen
                    or seen.add(tuple(str(r.get(c)) for c in plan.columns))
                )
            ]
    results = [(name, rs) for name, rs in results if rs]
    if not results:
        return ""
    comps = comparisons(results[0][1][0])
    head = plan.columns + ["n", "GB/s", "% peak"] + (["% read ceiling"] if plan.ceiling else [])
    for c in comps:
        head += [f"{c} GB/s", f"vs {c}"]
    rows = []
    for _, records in results:
        for r in records:
            row = [cell(r.get(c)) for c in plan.columns] + [
                count_text(r["n"]),
                f"{r['gbps']:.1f}",
                f"{r['pct_peak']:.1f}",
            ]
            if plan.ceiling:
                c = ceilings.get(int(r.get("bytes", 0)))
                row.append(f"{100 * r['gbps'] / c['gbps']:.1f}" if c and c.get("gbps") else "-")
            for c in comps:
                row += [f"{r[c + '_gbps']:.1f}", f"{r['vs_' + c]:.3f}x"] if c + "_gbps" in r else ["-", "-"]
            rows.append(row + ["PASS" if passed(r) else "FAIL"])
    return markdown(head + ["check"], rows, left=len(plan.columns) + 1)


def demo_table(plan, results, ceilings, n):
    """A beyond step's small table: the records of plan.demo's runs (all runs without a demo line) at n,
    one row each: the columns, GB/s, % of the read ceiling and each comparison's ratio."""
    names = plan.demo or [name for name, _ in results]
    rows_of = [
        r
        for name in names
        for got, rs in results
        if got == name
        for r in rs
        if int(r["n"]) == n and not (plan.skip and plan.skip in r)
    ]
    if not rows_of:
        return ""
    comps = list(dict.fromkeys(c for r in rows_of for c in comparisons(r)))
    head = plan.columns + ["GB/s"] + (["% read ceiling"] if plan.ceiling else []) + [f"vs {c}" for c in comps]
    rows = []
    for r in rows_of:
        row = [cell(r.get(c)) for c in plan.columns] + [f"{r['gbps']:.0f}"]
        if plan.ceiling:
            c = ceilings.get(int(r.get("bytes", 0)))
            row.append(f"{100 * r['gbps'] / c['gbps']:.0f}" if c and c.get("gbps") else "-")
        rows.append(row + [f"{r['vs_' + c]:.2f}x" if "vs_" + c in r else "-" for c in comps])
    return markdown(head, rows, left=len(plan.columns))


# Fields renamed since records were committed under results/: the new name reads the old one there.
RENAMED = {"same_as_step14": "same_as_step15", "step14_bits": "step15_bits"}


def field(r, name):
    """r's value of the field, under its name or its older one (RENAMED)."""
    return r[name] if name in r else r.get(RENAMED.get(name))


def field_table(fields, results):
    """A "table NAME:" of runs.txt: those record fields, one row per record that holds the first."""
    rows = [
        [count_text(r["n"]) if f == "n" else cell(field(r, f)) for f in fields]
        for _, records in results
        for r in records
        if fields[0] in r
    ]
    return markdown(fields, rows)


# --- 16's scaling tables -------------------------------------------------------------------------

MODES = {"single_process": "one process", "mpi": "MPI, one per GPU"}


def _ms(r):
    return f"{r['median_ms']:.4g} ({r['min_ms']:.4g}-{r['max_ms']:.4g})"


def scaling_tables(results):
    """Strong scaling at the largest n (speedup over step 10 alone on one GPU, measured in the same run,
    and the collective's share), the crossover n, and weak scaling's efficiency (one GPU's time over N's)."""
    records = [r for _, rs in results for r in rs if not str(r.get("mode", "")).startswith(("reproducible", "exact"))]
    strong = [r for r in records if not r.get("n_per_gpu")]
    weak = [r for r in records if r.get("n_per_gpu")]
    mode = lambda r: MODES.get(r["mode"], r["mode"])  # noqa: E731
    out = []
    groups = sorted({(r["mode"], r["gpus"]) for r in strong}, key=lambda k: (k[0] != "single_process", k[1]))
    if groups:
        top = max(r["n"] for r in strong)
        rows, lines = [], []
        for m, g in groups:
            mine = sorted((r for r in strong if (r["mode"], r["gpus"]) == (m, g)), key=lambda r: r["n"])
            r = next((r for r in reversed(mine) if r["n"] == top), None)
            if r:
                rows.append(
                    [
                        mode(r),
                        str(g),
                        _ms(r),
                        f"{r['gbps']:.0f}",
                        f"{r.get('vs_single_gpu', 0):.2f}x",
                        f"{100 * r.get('collective_share', 0):.2f}%",
                        "PASS" if passed(r) else "FAIL",
                    ]
                )
            faster = None
            for p in mine:  # the smallest n from which every larger n is faster than one GPU
                faster = (faster or p["n"]) if p.get("vs_single_gpu", 0) > 1 else None
            if g > 1:
                lines.append(
                    f"- {MODES.get(m, m)}, {g} GPUs: "
                    + (
                        f"faster than one GPU from n = {count_text(faster)} on"
                        if faster
                        else "not faster than one GPU at any n measured"
                    )
                )
        out.append(
            f"Strong scaling at n = {count_text(top)} floats in all, each GPU holding n / N:\n\n"
            + markdown(["mode", "GPUs", "median ms (min-max)", "GB/s", "speedup", "collective share", "check"], rows)
        )
        if lines:
            out.append(
                "Crossover (the smallest n from which every larger n measured is faster than one GPU):\n\n"
                + "\n".join(lines)
            )
    if weak:
        rows = []
        for r in sorted(weak, key=lambda r: (r["mode"] != "single_process", r["gpus"])):
            one = [w for w in weak if w["mode"] == r["mode"] and w["gpus"] == 1]
            eff = f"{one[-1]['median_ms'] / r['median_ms']:.2f}" if one and r["median_ms"] > 0 else "-"
            rows.append(
                [
                    mode(r),
                    str(r["gpus"]),
                    count_text(r["n"]),
                    _ms(r),
                    f"{r['gbps']:.0f}",
                    f"{r['gbps'] / r['gpus']:.0f}",
                    eff,
                    f"{100 * r.get('collective_share', 0):.2f}%",
                    "PASS" if passed(r) else "FAIL",
                ]
            )
        out.append(
            f"Weak scaling, {count_text(weak[0]['n_per_gpu'])} floats per GPU; efficiency = the one-GPU run's time "
            "over this one's (1.00 = perfect):\n\n"
            + markdown(
                [
                    "mode",
                    "GPUs",
                    "n",
                    "median ms (min-max)",
                    "GB/s",
                    "GB/s per GPU",
                    "efficiency",
                    "collective share",
                    "check",
                ],
                rows,
            )
        )
    return "\n\n".join(out)


def ablation_table(lines):
    """perf/variants' ablation set as one table: a row per variant, a column per n, each cell the
    variant's median time over row a's (above 1: faster than step 09 as it is)."""
    head = next((line.split() for line in lines if line.startswith("log2n")), None)
    if not head or "vs_a" not in head:
        raise ValueError("not the ablation set's text")
    at, names, order = {}, {}, []
    for line in lines:
        cells = line.split()
        if len(cells) == len(head) and cells[0].isdigit():
            row = cells[head.index("row")]
            names[row] = cells[head.index("variant")]
            order += [] if row in order else [row]
            at[row, int(cells[0])] = cells[head.index("vs_a")]
    ns = sorted({n for _, n in at})
    rows = [[f"{r} {names[r]}"] + [at.get((r, n), "-") for n in ns] for r in order]
    return (
        "Each variant's time against row a's (step 09 as it is; above 1: faster), the median of interleaved rounds:\n\n"
        + markdown(["variant"] + [f"2^{n}" for n in ns], rows)
    )


# --- Nsight Compute ------------------------------------------------------------------------------

# ncu's metric (or section row) name -> the column it heads, in this order; a column appears where
# the data holds it.
PROFILE_COLUMNS = [
    ("gpu__time_duration.sum", "duration"),
    ("Duration", "duration"),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM %"),
    ("DRAM Throughput", "DRAM %"),
    ("smsp__inst_executed.sum", "warp instructions"),
    ("smsp__thread_inst_executed_per_inst_executed.ratio", "threads per instruction"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "bank conflicts"),
    ("Registers Per Thread", "registers"),
    ("Waves Per SM", "waves per SM"),
    ("Theoretical Occupancy", "occupancy theor. %"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy %"),
    ("Achieved Occupancy", "achieved occupancy %"),
]


def read_profile(text):
    """ncu's long CSV (its first column the run's name: "step" or "run") as [(run, kernel, grid,
    block, {metric: value with unit})], one entry per launch, in order."""
    launches, index = [], {}
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None) or []
    col = {h: i for i, h in enumerate(header)}
    need = ("Kernel Name", "Grid Size", "Block Size", "Metric Name", "Metric Value")
    if header[:1] not in (["step"], ["run"]) or any(k not in col for k in need):
        raise ValueError("not Nsight Compute's CSV with the run's name first")
    last = max(col[k] for k in need + (("Metric Unit",) if "Metric Unit" in col else ()))
    for row in rows:
        if len(row) <= last:  # ncu leaves the rule columns off its metric rows
            continue
        key = (row[0], row[col.get("ID", 0)], row[col["Kernel Name"]])
        if key not in index:
            index[key] = len(launches)
            kernel = re.sub(r"(?:\w+|<unnamed>)::", "", row[col["Kernel Name"]].split("(")[0].replace("void ", ""))
            kernel = re.sub(r"<.*>", "<...>", kernel) if len(kernel) > 50 else kernel
            launches.append((row[0], kernel, row[col["Grid Size"]], row[col["Block Size"]], {}))
        unit = row[col["Metric Unit"]] if "Metric Unit" in col else ""
        value = row[col["Metric Value"]]
        launches[index[key]][4][row[col["Metric Name"]]] = value + (f" {unit}" if unit in ("us", "ms", "ns") else "")
    return launches


def profile_table(launches):
    names = [(m, label) for m, label in PROFILE_COLUMNS if any(m in launch[4] for launch in launches)]
    seen, cols = set(), []
    for m, label in names:
        if label not in seen:
            seen.add(label)
            cols.append(label)
    rows = []
    for run, kernel, grid, block, metrics in launches:
        values = {label: metrics[m] for m, label in names if m in metrics}
        rows.append(
            [run, f"`{kernel}`", grid.strip("()").split(",")[0], block.strip("()").split(",")[0]]
            + [values.get(c, "-") for c in cols]
        )
    return markdown(["run", "kernel", "grid", "block"] + cols, rows, left=2)
