"""Reading the step executables' JSON records and turning them into tables (no third-party modules).

run_all and update_readme use this module; test_reduction_table.py tests it.
"""

import csv
import io
import json
import math

# The columns of the speedup table, in order: (header, record key or derived value).
TABLE_COLUMNS = [
    "step", "what it teaches", "median ms", "GB/s", "% peak",
    "vs CPU", "vs 01", "vs prev", "check",
]


class RecordError(ValueError):
    """A step's output is not the one JSON record the harness prints."""


REQUIRED_KEYS = ("step", "lesson", "n", "median_ms", "gbps", "pct_peak", "speedup_vs_cpu", "passed", "device")


def parse_record(stdout):
    """The single JSON object a step prints with --format json, as a dict."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if len(lines) != 1:
        raise RecordError(f"expected one JSON line, got {len(lines)}")
    try:
        record = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise RecordError(f"not JSON: {e}") from None
    if not isinstance(record, dict):
        raise RecordError("not a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise RecordError("missing keys: " + ", ".join(missing))
    return record


def ratio(numerator_ms, denominator_ms):
    """How many times faster the denominator's run is (time ratio), or None when undefined."""
    if not numerator_ms or not denominator_ms or numerator_ms <= 0 or denominator_ms <= 0:
        return None
    return numerator_ms / denominator_ms


def fmt_ratio(x):
    return "-" if x is None else (f"{x:.0f}x" if x >= 100 else f"{x:.2f}x")


def fmt_ms(ms):
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return "-"
    return f"{ms:.4f}" if ms < 10 else f"{ms:.2f}"


def cpu_baseline_ms(records):
    """One CPU time for the whole table: the median of the steps' CPU timings.

    Every step executable times the same plain single-thread float loop on the same input; those
    timings differ by some percent from run to run, so dividing each step by its own would make the
    "vs CPU" column disagree with the GPU times. None when no record timed the CPU.
    """
    times = sorted(r["cpu_ms"] for r in records if r.get("cpu_ms"))
    if not times:
        return None
    k = len(times)
    return times[k // 2] if k % 2 else 0.5 * (times[k // 2 - 1] + times[k // 2])


def table_rows(records):
    """Rows (lists of strings) of the speedup table, one per record, in the given order.

    vs 01 compares with the first record's time, vs prev with the record before, vs CPU with
    cpu_baseline_ms(records).
    """
    rows = []
    first = records[0]["median_ms"] if records else None
    cpu_ms = cpu_baseline_ms(records)
    prev = None
    for r in records:
        ms = r["median_ms"]
        cpu = ratio(cpu_ms, ms)
        rows.append([
            r["step"],
            r["lesson"],
            fmt_ms(ms),
            f"{r['gbps']:.1f}",
            f"{r['pct_peak']:.1f}",
            fmt_ratio(cpu),
            fmt_ratio(ratio(first, ms)),
            fmt_ratio(ratio(prev, ms)) if prev is not None else "-",
            "PASS" if r["passed"] else "FAIL",
        ])
        prev = ms
    return rows


def render_text(rows, headers=TABLE_COLUMNS):
    """A fixed-width table; numbers right-aligned, words left-aligned."""
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(headers)]
    left = {0, 1}

    def line(cells):
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in rows]
    return "\n".join(out)


def render_markdown(rows, headers=TABLE_COLUMNS):
    esc = lambda s: s.replace("|", "\\|")
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" if i in (0, 1) else "---:" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


CSV_KEYS = ["step", "lesson", "n", "pattern", "block", "median_ms", "min_ms", "max_ms", "gbps", "pct_peak",
            "peak_gbps", "cpu_ms", "speedup_vs_cpu", "result", "reference", "abs_error", "tolerance",
            "runs_correct", "runs_total", "deterministic", "runs_identical", "passed", "device", "cuda_runtime",
            "cuda_driver"]


def records_to_csv(records, keys=CSV_KEYS):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: r.get(k, "") for k in keys})
    return buf.getvalue()


def replace_between_markers(text, name, body):
    """Replaces what lies between <!-- name:begin --> and <!-- name:end --> (markers kept)."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < 0 or j < i:
        raise ValueError(f"markers for '{name}' not found in order")
    return text[: i + len(begin)] + "\n" + body.rstrip("\n") + "\n" + text[j:]


def sweep_sizes(k_min, k_max, memory_bytes, bytes_per_element=4, reserve_fraction=0.5):
    """Powers of two 2^k_min..2^k_max whose input fits in reserve_fraction of the device's memory."""
    limit = memory_bytes * reserve_fraction if memory_bytes else float("inf")
    return [1 << k for k in range(k_min, k_max + 1) if (1 << k) * bytes_per_element <= limit]


def sweep_iters(n):
    """Timed runs per sweep point: many where a run takes microseconds, fewer where it takes milliseconds."""
    if n <= 1 << 20:
        return 200
    if n <= 1 << 26:
        return 50
    return 20
