"""Tables rendered from records: the progression's speedup table, a step's row at its demo n, the
tables of the steps beyond it (main, and the tables their layout declares) and Nsight Compute's."""

import csv
import io
import re

from .common import Failure, count_text, quote
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
    """A beyond step's small table: the records of plan.demo's runs (all runs without a demo line) at n, or
    at every n where the layout's columns name n, one row each: the columns, GB/s, % of the read ceiling
    and each comparison's ratio."""
    names = plan.demo or [name for name, _ in results]
    rows_of = [
        r
        for name in names
        for got, rs in results
        if got == name
        for r in rs
        if ("n" in plan.columns or int(r["n"]) == n) and not (plan.skip and plan.skip in r)
    ]
    if not rows_of:
        return ""
    comps = list(dict.fromkeys(c for r in rows_of for c in comparisons(r)))
    head = plan.columns + ["GB/s"] + (["% read ceiling"] if plan.ceiling else []) + [f"vs {c}" for c in comps]
    rows = []
    for r in rows_of:
        row = [count_text(r["n"]) if c == "n" else cell(r.get(c)) for c in plan.columns] + [f"{r['gbps']:.0f}"]
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


def parse_table(text, where):
    """A table the layout declares ("table NAME: TEXT"): "COLUMN, COLUMN, ... [| CLAUSE] ...". A column is a
    record field, "A / B as LABEL" (A over B of the same record) or "A vs K=V as LABEL" (A of the row whose K
    is V and that shares this row's first column, over this row's A; "-" where there is none). The records:
    those that hold the first column and are left by the clauses "with F, G" (only those whose F and G are
    set: not 0, false or empty), "without F, G=V" (none whose F is set or whose G is V), "largest n" (only the
    records at the largest n), "crossover F" (instead of rows, a line for each value of the columns: the
    smallest n from which F is above 1 at every larger n measured)."""
    parts = [p.strip() for p in text.split("|")]
    spec = {"columns": [], "with": [], "without": [], "largest": False, "crossover": None}
    for c in (c.strip() for c in parts[0].split(",")):
        m = re.fullmatch(r"(\w+) (/|vs) (\w+|\w+=\S+) as (.+)", c)
        if m:
            spec["columns"].append(m.groups())
        elif re.fullmatch(r"\w+", c):
            spec["columns"].append((c, None, None, c))
        else:
            raise Failure(f"{where}: a column is FIELD, 'A / B as LABEL' or 'A vs K=V as LABEL', got {quote(c, 40)}")
    for clause in parts[1:]:
        key, _, rest = clause.partition(" ")
        names = [x.strip() for x in rest.split(",") if x.strip()]
        if key in ("with", "without") and names:
            spec[key] += names
        elif clause == "largest n":
            spec["largest"] = True
        elif key == "crossover" and len(names) == 1:
            spec["crossover"] = names[0]
        else:
            raise Failure(
                f"{where}: expected 'with F', 'without F', 'largest n' or 'crossover F', got {quote(clause, 40)}"
            )
    return spec


def _left_out(r, name):
    key, eq, value = name.partition("=")
    return cell(field(r, key)) == value if eq else bool(field(r, key))


def declared_table(spec, results):
    """The rows (a Markdown table), or the crossover lines, of a parse_table spec over [(NAME, records)]:
    "" where no record is left."""
    cols = spec["columns"]
    rows = [
        r
        for _, rs in results
        for r in rs
        if field(r, cols[0][0]) is not None
        and all(field(r, f) for f in spec["with"])
        and not any(_left_out(r, f) for f in spec["without"])
    ]
    if spec["largest"] and rows:
        top = max(int(r["n"]) for r in rows)
        rows = [r for r in rows if int(r["n"]) == top]
    if not rows:
        return ""
    if spec["crossover"]:
        groups = {}
        for r in sorted(rows, key=lambda r: int(r["n"])):
            groups.setdefault(tuple(cell(field(r, c[0])) for c in cols), []).append(r)
        lines = []
        for key, rs in groups.items():
            above = None
            for r in rs:  # the smallest n from which every larger n is above 1
                above = (above or int(r["n"])) if (field(r, spec["crossover"]) or 0) > 1 else None
            at = f"from n = {count_text(above)} on" if above else "at no n measured"
            lines.append(f"- {', '.join(key)}: {spec['crossover']} above 1 {at}")
        return "\n".join(lines)

    def value(r, a, op, b):
        if op == "/":
            return field(r, a) / field(r, b) if field(r, b) else None
        if op == "vs":
            key, _, v = b.partition("=")
            base = next(
                (x for x in rows if cell(field(x, key)) == v and field(x, cols[0][0]) == field(r, cols[0][0])), None
            )
            return field(base, a) / field(r, a) if base and field(r, a) else None
        return count_text(r["n"]) if a == "n" else field(r, a)

    return markdown([c[3] for c in cols], [[cell(value(r, *c[:3])) or "-" for c in cols] for r in rows])


def ablation_table(lines):
    """perf/variants' ablation set as one table: a row per variant, a column per n, each cell the
    variant's median time over row a's (its vs_a column)."""
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
    return markdown(["variant"] + [f"2^{n}" for n in ns], rows)


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
