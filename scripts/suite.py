"""What the suite's scripts share (standard library only): the list of steps, argument checks and
exit codes, the steps' JSON records, the speedup table and its CSV, README markers, the sweep's
sizes and the lesson diff between neighbouring steps.

    python3 scripts/suite.py steps      # the steps of steps.txt, one per line (for the shell scripts)
    python3 scripts/suite.py provenance EXE OUT.json --by WHO   # a data file's provenance (below)

Provenance: every data file of results/<gpu>/progression says where it comes from. table.json holds
it in its "meta", sweep.csv has sweep_meta.json beside it; any other file F.ext has F.meta.json
beside it (profile.meta.json, variants.meta.json, ablation.meta.json) and a folder has meta.json
inside it (sass/meta.json). Each is a JSON object with device, cuda_runtime, cuda_driver, date and
commit (null where unknown or not applicable) and "by", the script that wrote the data; the script
that writes the data writes its provenance in the same all-or-nothing step. `provenance` asks EXE (a
step executable of the same build, run at n = 1024) for the device and CUDA versions.

Exit codes of every script: 0 done, 1 a failure (one line says what), 2 bad usage (one line names
the problem), 77 no usable GPU (or, for plot_sweep.py, no matplotlib). --debug shows a traceback.
"""

import argparse
import csv
import datetime
import difflib
import functools
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS_FILE = ROOT / "steps.txt"
BEYOND_FILE = ROOT / "beyond.txt"
RESULTS = ROOT / "results"
MAX_N = 1 << 36              # the executables' limit for --n
CEILING_TOOL = "read_ceiling"  # <build>/bin/read_ceiling: the measured read ceiling, not a step
SPEEDUP_BASE = "01"          # "vs 01": the design card's first step, the textbook tree
# Changed code lines (removed + added, comments and blank lines left out) that one lesson may take
# between neighbouring steps' kernel files; scripts/show_lesson --stat and test_lessons.py use it.
LESSON_BUDGET = 40


class UsageError(Exception):
    """Bad usage: exit 2."""


class Failure(Exception):
    """Anything else that fails: exit 1."""


class NoGpu(Exception):
    """No usable GPU (or a missing tool the environment should provide): exit 77."""


# --- running a script --------------------------------------------------------------------------

class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line (UsageError), knows --debug, takes options only by
    their full names and refuses an option given twice (as the step executables do)."""

    def __init__(self, prog, doc, **kw):
        super().__init__(prog=prog, description=doc.strip().split("\n\n")[0], allow_abbrev=False,
                         formatter_class=argparse.RawDescriptionHelpFormatter, **kw)
        self.add_argument("--debug", action="store_true", help="show a traceback when something fails")

    def error(self, message):
        raise UsageError(message)

    def parse_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        refuse_repeats(self, args)
        return super().parse_args(args, namespace)


def refuse_repeats(parser, argv):
    """UsageError for an option of parser given twice in argv (up to a "--"): a second value would
    otherwise silently win over the first. An option that collects its values (action="append") may
    repeat."""
    names = {s for a in parser._actions for s in a.option_strings}
    values = {s for a in parser._actions if a.nargs != 0 for s in a.option_strings}
    repeatable = {s for a in parser._actions if isinstance(a, argparse._AppendAction) for s in a.option_strings}
    seen, i = set(), 0
    while i < len(argv) and argv[i] != "--":
        name = argv[i].split("=", 1)[0]
        if name in names:
            if name in seen and name not in repeatable:
                raise UsageError(f"option {name} given twice")
            seen.add(name)
            if name in values and "=" not in argv[i]:
                i += 1  # its value, even one that starts with --
        i += 1


def run_main(prog, main, argv=None):
    """Calls main(argv) and turns its exceptions into one line on stderr and the exit code; with
    --debug (before any "--") the traceback comes first."""
    argv = sys.argv[1:] if argv is None else argv
    own = argv[: argv.index("--")] if "--" in argv else argv
    trace = None
    try:
        code = main(argv)
    except UsageError as e:
        code, message, trace = 2, str(e), traceback.format_exc()
    except Failure as e:
        code, message, trace = 1, str(e), traceback.format_exc()
    except NoGpu as e:
        code, message, trace = 77, str(e), traceback.format_exc()
    except KeyboardInterrupt:
        code, message = 130, "interrupted"
    except BrokenPipeError:  # the reader went away (scripts/show_lesson 06 07 | head): not an error to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
    except Exception as e:  # a bug or an unexpected state of the machine: still one line
        if "--debug" in own:
            raise
        code, message = 1, f"{type(e).__name__}: {e} (--debug shows where)"
    else:
        message = None
    if message is not None:
        if "--debug" in own and trace:
            sys.stderr.write(trace)
        print(f"{prog}: {message}", file=sys.stderr)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(code)


def parse_exponent_range(text, what, lo=0, hi=36):
    """MIN:MAX, two ASCII decimal exponents with lo <= MIN <= MAX <= hi (no 1_0, no other digits)."""
    m = re.fullmatch(r"([0-9]+):([0-9]+)", text, re.ASCII)
    if not m or not lo <= int(m.group(1)) <= int(m.group(2)) <= hi:
        raise UsageError(f"{what}: expected MIN:MAX with {lo} <= MIN <= MAX <= {hi}, got '{text}'")
    return int(m.group(1)), int(m.group(2))


def parse_int(text, what, lo, hi):
    """An ASCII decimal integer from lo to hi, else UsageError naming what."""
    if re.fullmatch(r"[0-9]+", text, re.ASCII) is None or not lo <= int(text) <= hi:
        raise UsageError(f"invalid value '{text}' for {what}: expected an integer from {lo} to {hi}")
    return int(text)


# --- writing into the repository ---------------------------------------------------------------

def check_can_create(folder, what):
    """folder is a folder, or can be made: its nearest existing ancestor is a writable folder; else
    UsageError naming what."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{what}: {folder} is not a folder")
    parent = folder
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"{what}: cannot create {folder} ({parent} is not a writable folder)")


def write_files(files):
    """Writes {path: text or bytes} all or nothing: each file to a temporary file beside it, and only when
    every one is written are they renamed over their targets (a full disk or an unwritable file
    leaves every target as it was; should a rename itself fail, the files renamed before it are put
    back). Folders are made as needed. Raises Failure naming the file."""
    temps = []
    try:
        for path, text in files.items():
            path = Path(path)
            try:
                if path.exists() and not os.access(path, os.W_OK):
                    raise PermissionError(13, "Permission denied")
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                temps.append((tmp, path))
                binary = isinstance(text, bytes)
                with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
                    f.write(text)
                os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
            except OSError as e:
                raise Failure(f"cannot write {path}: {e.strerror or e}; nothing written") from None
        rename_all(temps)
        temps = []
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def parse_count(text, what="--n"):
    """A count as the executables take it: 1000, 4K (=4096), 16M, 1G or 2^k, at most 2^36."""
    m = re.fullmatch(r"2\^([0-9]+)|([0-9]+)([KMG]?)", text, re.ASCII)
    value = None
    if m and m.group(1) is not None:
        value = 1 << int(m.group(1)) if int(m.group(1)) <= 62 else None
    elif m:
        value = int(m.group(2)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(3)]
    if value is None or value > MAX_N:
        raise UsageError(f"invalid value '{text}' for {what}: expected a count from 0 to 2^36: "
                         "1000, 4K, 16M, 1G or 2^20")
    return value


# --- the step executables' command line ---------------------------------------------------------

def _integer(lo, hi, expected):
    def check(value):
        return re.fullmatch(r"[0-9]+", value) is not None and lo <= int(value) <= hi
    return check, expected


def _count_ok(value):
    try:
        parse_count(value)
        return True
    except UsageError:
        return False


# The options every step executable takes, with what each accepts: a copy of the grammar in
# common/options.cpp (parse_options), so that run_all can refuse a bad "-- ..." before it builds
# anything. test_scripts.StepOptions compares it with a built executable (its --help, and its exit
# code on good and bad values), so the two cannot drift apart unseen.
PATTERNS = ("constant", "int", "uniform", "mixed")
STEP_OPTIONS = {
    "--n": (_count_ok, "a count from 0 to 2^36: 1000, 4K, 16M, 1G or 2^20"),
    "--iters": _integer(1, 100000, "an integer from 1 to 100000"),
    "--warmup": _integer(0, 10000, "an integer from 0 to 10000"),
    "--block": (lambda v: re.fullmatch(r"[0-9]+", v) is not None and int(v) in {1 << k for k in range(5, 11)},
                "a power of two from 32 to 1024"),
    "--seed": _integer(0, (1 << 64) - 1, "a non-negative integer"),
    "--pattern": (lambda v: v in PATTERNS, "constant, int, uniform or mixed"),
    "--format": (lambda v: v in ("text", "csv", "json"), "text, csv or json"),
    "--device": _integer(0, 1023, "a device ordinal (0, 1, ...)"),
    "--cpu-runs": _integer(0, 1000, "an integer from 0 to 1000"),
}
HELP_OPTIONS = ("--help", "-h")


def check_step_options(tokens):
    """Checks arguments meant for a step executable as the executable would (exit 2 there): names,
    values and their form (--name value or --name=value), and each option once. Raises UsageError
    naming the first bad one."""
    i, seen = 0, set()
    while i < len(tokens):
        name, eq, value = tokens[i].partition("=")
        if name in HELP_OPTIONS:
            i += 1
            continue
        if not name.startswith("--"):
            raise UsageError(f"unexpected argument '{tokens[i]}' (options start with --)")
        if name not in STEP_OPTIONS:
            raise UsageError(f"unknown option '{name}' (a step takes {', '.join(STEP_OPTIONS)})")
        if name in seen:
            raise UsageError(f"option {name} given twice")
        seen.add(name)
        if not eq:
            if i + 1 >= len(tokens):
                raise UsageError(f"option {name} needs a value")
            i += 1
            value = tokens[i]
        ok, expected = STEP_OPTIONS[name]
        if not ok(value):
            raise UsageError(f"invalid value '{value}' for {name}: expected {expected}")
        i += 1


def log2(n):
    return int(n).bit_length() - 1


def count_text(n):
    """A count as the tables write it: 2^k for a power of two, else the number."""
    n = int(n)
    return f"2^{log2(n)}" if n > 0 and n & (n - 1) == 0 else str(n)


def read_json_lines(path, text=None):
    """A file of JSON objects one per line (blank lines skipped), as [dict]; Failure naming the line
    that is not one."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text()
        except OSError as e:
            raise Failure(f"cannot read {path}: {e.strerror}") from None
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise Failure(f"{path}:{number}: not a JSON record ({e})") from None
            if not isinstance(record, dict):
                raise Failure(f"{path}:{number}: not a JSON object")
            records.append(record)
    return records


def inside(path, folder):
    """Whether path (resolved) lies in folder."""
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
        return True
    except ValueError:
        return False


@functools.lru_cache(maxsize=None)
def load_script(name):
    """A script of scripts/ without .py (scripts/compare) as a module, for the scripts and tests that
    use its functions; loaded once."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader(name, str(Path(__file__).resolve().parent / name))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def rename_all(pairs):
    """Renames each (temporary file, target); when one fails, the targets renamed before it get their
    old contents back (kept as hard links until all are done) and Failure names the one that failed."""
    done, backups = [], {}
    try:
        for tmp, path in pairs:
            if path.exists():
                backup = path.with_name(f".{path.name}.old")
                os.link(path, backup)
                backups[path] = backup
            os.replace(tmp, path)
            done.append(path)
    except OSError as e:
        for path in done:
            if path in backups:
                os.replace(backups.pop(path), path)
            else:
                path.unlink()
        raise Failure(f"cannot write {path}: {e.strerror or e}; nothing written") from None
    finally:
        for backup in backups.values():
            try:
                backup.unlink()
            except OSError:
                pass


# --- the steps ---------------------------------------------------------------------------------

def read_steps(path=STEPS_FILE):
    """The steps of steps.txt in teaching order: one folder per line, # comments and blank lines left out.

    The last line is the library reference; the one before it is the best hand-written step.
    """
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise Failure(f"cannot read the list of steps: {e.strerror}: {path}") from None
    steps = [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]
    bad = [s for s in steps if not re.fullmatch(r"[0-9]{2}_[A-Za-z0-9_]+", s)]
    if bad:
        raise Failure(f"{path}: '{bad[0]}' is not a step folder name (NN_name)")
    if len(set(steps)) != len(steps) or len(steps) < 2:
        raise Failure(f"{path}: expected two or more distinct steps, the library last")
    return steps


def read_beyond(path=BEYOND_FILE):
    """The steps beyond the progression (beyond.txt), in order; [] when the file is absent."""
    if not Path(path).is_file():
        return []
    return [s for s in (line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines()) if s]


def library_step(steps):
    return steps[-1]


def step_number(step):
    return step.split("_", 1)[0]


def step_role(step):
    """The name without its number: it survives renumbering (08_cub of an older record is 12_cub now)."""
    return step.split("_", 1)[-1]


def resolve_step(spec, steps, what="step"):
    """A step given by number (7, 07) or name (07_cooperative_grid) or name without number."""
    spec = spec.strip()
    found = [s for s in steps if spec in (s, step_role(s)) or (spec.isdigit() and step_number(s) == spec.zfill(2))]
    if len(found) != 1:
        raise UsageError(f"{what}: unknown step '{spec}' (steps.txt lists {steps[0]} ... {steps[-1]}; "
                         "give a number like 07 or a name)")
    return found[0]


def current_name(step, steps):
    """The suite's current name for a recorded step: the same name, or the same role renumbered."""
    if step in steps:
        return step
    same_role = [s for s in steps if step_role(s) == step_role(step)]
    return same_role[0] if len(same_role) == 1 else None


def in_suite_order(records, steps):
    """Records sorted by the suite's order of their (current) step names; unknown steps last."""
    def key(r):
        name = current_name(r["step"], steps)
        return steps.index(name) if name else len(steps)
    return sorted(records, key=key)


# --- records -----------------------------------------------------------------------------------

REQUIRED_KEYS = ("step", "lesson", "n", "median_ms", "gbps", "pct_peak", "passed", "device")
CEILING_KEYS = ("tool", "n", "median_ms", "gbps")


def parse_json_line(stdout, required, what="output"):
    lines = [line for line in stdout.splitlines() if line.strip()]
    if len(lines) != 1:
        raise Failure(f"{what}: expected one JSON line, got {len(lines)}")
    try:
        record = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise Failure(f"{what}: not JSON ({e})") from None
    if not isinstance(record, dict):
        raise Failure(f"{what}: not a JSON object")
    missing = [k for k in required if k not in record]
    if missing:
        raise Failure(f"{what}: missing keys: " + ", ".join(missing))
    return record


def parse_record(stdout, what="output"):
    """The single JSON object a step prints with --format json, as a dict."""
    return parse_json_line(stdout, REQUIRED_KEYS, what)


def parse_ceiling(stdout, what=CEILING_TOOL):
    record = parse_json_line(stdout, CEILING_KEYS, what)
    if record["tool"] != CEILING_TOOL:
        raise Failure(f"{what}: not a {CEILING_TOOL} record")
    return record


def read_json_object(path):
    """A file holding one JSON object, as a dict; Failure naming the file where it cannot be read or is
    not one."""
    path = Path(path)
    try:
        value = json.loads(path.read_text())
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise Failure(f"{path}: not JSON ({e})") from None
    if not isinstance(value, dict):
        raise Failure(f"{path}: not a JSON object")
    return value


def load_table(path):
    """table.json as run_all writes it: {"meta": {...}, "records": [...], "ceiling": {...} or absent}."""
    path = Path(path)
    table = read_json_object(path)
    if not isinstance(table.get("meta"), dict) \
            or not isinstance(table.get("records"), list):
        raise Failure(f"{path}: expected an object with 'meta' and 'records'")
    if not table["records"]:
        raise Failure(f"{path}: no records")
    for i, r in enumerate(table["records"]):
        missing = [k for k in REQUIRED_KEYS if not isinstance(r, dict) or k not in r]
        if missing:
            raise Failure(f"{path}: record {i + 1} lacks " + ", ".join(missing))
    for key in ("device", "cuda_runtime", "cuda_driver", "date", "commit"):
        if key not in table["meta"]:
            raise Failure(f"{path}: meta lacks '{key}'")
    return table


# --- the speedup table -------------------------------------------------------------------------

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


def median(values):
    values = sorted(values)
    k = len(values)
    if not k:
        return None
    return values[k // 2] if k % 2 else 0.5 * (values[k // 2 - 1] + values[k // 2])


def cpu_baseline_ms(records, key="cpu_ms"):
    """One CPU time for the whole table: the median of the steps' timings of the same CPU sum.

    Every step times the same CPU sum on the same input; dividing each step by its own timing would
    make the column disagree with the GPU times by the timings' noise. None when none timed it.
    """
    return median([r[key] for r in records if r.get(key)])


def speedup_base(records):
    """The record "vs NN" compares with: step 01 when it ran, else the first step run."""
    for r in records:
        if step_number(r["step"]) == SPEEDUP_BASE:
            return r
    return records[0]


def speedup_table(records, ceiling=None):
    """(headers, rows) of the speedup table, one row per record in the given order.

    "% ceiling" appears with a read_ceiling record; "vs all CPU cores" when the records carry the
    multi-core CPU time (older records do not); "vs NN" names its base (speedup_base).
    """
    base = speedup_base(records) if records else None
    cpu1 = cpu_baseline_ms(records)
    cpus = cpu_baseline_ms(records, "cpu_parallel_ms")
    has_parallel = any("cpu_parallel_ms" in r for r in records)
    ceiling_gbps = ceiling.get("gbps") if ceiling else None
    headers = ["step", "what it teaches", "median ms", "GB/s", "% peak"]
    headers += ["% ceiling"] if ceiling_gbps else []
    headers += ["vs 1 CPU thread"] + (["vs all CPU cores"] if has_parallel else [])
    headers += [f"vs {step_number(base['step'])}" if base else "vs first", "vs prev", "check"]
    rows, prev = [], None
    for r in records:
        ms = r["median_ms"]
        row = [r["step"], r["lesson"], fmt_ms(ms), f"{r['gbps']:.1f}", f"{r['pct_peak']:.1f}"]
        row += [f"{100 * r['gbps'] / ceiling_gbps:.1f}"] if ceiling_gbps else []
        row += [fmt_ratio(ratio(cpu1, ms))] + ([fmt_ratio(ratio(cpus, ms))] if has_parallel else [])
        row += [fmt_ratio(ratio(base["median_ms"], ms)), fmt_ratio(ratio(prev, ms)) if prev is not None else "-",
                "PASS" if r["passed"] else "FAIL"]
        rows.append(row)
        prev = ms
    return headers, rows


def table_notes(records, ceiling=None):
    """One sentence per column whose base needs saying: the CPU yardsticks and the read ceiling."""
    notes = []
    cpu1 = cpu_baseline_ms(records)
    if cpu1:
        notes.append(f"\"vs 1 CPU thread\" divides a plain single-thread float loop on the same input "
                     f"({cpu1:.1f} ms, the median of the steps' own timings of it) by each step's time.")
    cpus = cpu_baseline_ms(records, "cpu_parallel_ms")
    if cpus:
        threads = max(int(r.get("cpu_threads") or 0) for r in records)
        notes.append(f"\"vs all CPU cores\" divides a vectorised sum on all {threads} CPU threads (OpenMP parallel "
                     f"for simd) on the same input ({cpus:.2f} ms, median of the steps' timings).")
    if ceiling and ceiling.get("gbps"):
        notes.append(f"\"% ceiling\" is the share of the measured read ceiling, {ceiling['gbps']:.0f} GB/s "
                     f"({ceiling['pct_peak']:.1f}% of theoretical): a read-only streaming kernel "
                     f"(`perf/read_ceiling.cu`) at the same n.")
    return notes


def render_text(headers, rows):
    """A fixed-width table; numbers right-aligned, words left-aligned."""
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(row) for row in rows])


def render_markdown(headers, rows, left=2):
    """A Markdown table: words left-aligned (the first `left` columns, or the indices given), numbers right."""
    lefts = set(range(left)) if isinstance(left, int) else set(left)

    def esc(s):
        return str(s).replace("|", "\\|")
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" if i in lefts else "---:" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


# --- CSV -----------------------------------------------------------------------------------------

CSV_KEYS = ["step", "lesson", "n", "pattern", "block", "grid", "launches", "per_thread", "median_ms", "min_ms",
            "max_ms", "q1_ms", "q3_ms", "gbps", "pct_peak", "peak_gbps", "cpu_ms", "speedup_vs_cpu", "cpu_parallel_ms", "cpu_threads",
            "speedup_vs_cpu_parallel", "result", "reference", "abs_error", "tolerance", "runs_correct", "runs_total",
            "deterministic", "runs_identical", "passed", "device", "cuda_runtime", "cuda_driver"]


def records_to_csv(records, keys=CSV_KEYS):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=keys, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: r.get(k, "") for k in keys})
    return buf.getvalue()


def ceiling_row(ceiling, lesson="read ceiling: a read-only streaming kernel"):
    """A read_ceiling record as a row of the sweep CSV (step read_ceiling; no result, so passed is empty)."""
    return dict(ceiling, step=CEILING_TOOL, lesson=lesson, passed="")


def read_sweep_csv(path):
    """The rows of a sweep CSV, checked: step, n (a count), gbps (a number), passed; at least one row."""
    path = Path(path)
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [k for k in ("step", "n", "gbps", "passed") if k not in header]
            if missing:
                raise Failure(f"{path}: not a sweep CSV (no column {', '.join(missing)})")
            rows = []
            for line, row in enumerate(reader, start=2):
                try:
                    row["n"] = int(float(row["n"]))
                    row["gbps"] = float(row["gbps"])
                    row["peak_gbps"] = float(row.get("peak_gbps") or 0)
                except (TypeError, ValueError):
                    raise Failure(f"{path}:{line}: n or gbps is not a number") from None
                if not row["step"] or row["n"] < 0 or not math.isfinite(row["gbps"]):
                    raise Failure(f"{path}:{line}: not a sweep point")
                rows.append(row)
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise Failure(f"{path}: not a CSV file ({e})") from None
    if not rows:
        raise Failure(f"{path}: no data rows")
    return rows


def passed(value):
    return str(value).lower() == "true"


# --- README markers ------------------------------------------------------------------------------

def markers(name):
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def has_markers(text, name):
    begin, end = markers(name)
    return begin in text and end in text


def _marker_span(text, name):
    begin, end = markers(name)
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < 0 or j < i:
        raise ValueError(f"markers for '{name}' not found in order")
    return i + len(begin), j


def block_between_markers(text, name):
    i, j = _marker_span(text, name)
    return text[i:j].strip("\n")


def replace_between_markers(text, name, body):
    """Replaces what lies between <!-- name:begin --> and <!-- name:end --> (markers kept)."""
    i, j = _marker_span(text, name)
    return text[:i] + "\n" + body.rstrip("\n") + "\n" + text[j:]


# --- the sweep -----------------------------------------------------------------------------------

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


# --- the lesson between neighbouring steps -----------------------------------------------------

def strip_comments(text):
    """C++/CUDA source without // and /* */ comments (string and character literals kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a digit separator
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            out.append(text[i: j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def code_lines(text):
    """The lines of code: comments and blank lines left out, trailing white space dropped."""
    return [line.rstrip() for line in strip_comments(text).splitlines() if line.strip()]


def kernel_file(step, root=ROOT):
    """The one .cu file of a step's folder."""
    folder = Path(root) / step
    if not folder.is_dir():
        raise Failure(f"{step}: no such folder yet")
    files = sorted(folder.glob("*.cu"))
    if len(files) != 1:
        raise Failure(f"{step}: expected one .cu file, found {len(files)}")
    return files[0]


def diff_counts(a_lines, b_lines):
    """(removed, added, changed) lines between two lists of lines, as difflib matches them. A block of
    k lines replaced by m lines changes max(k, m) lines (a reader reads the new ones; the old ones
    they replace are not a second lesson); lines only removed or only added count one each."""
    removed = added = changed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
            changed += max(i2 - i1, j2 - j1)
    return removed, added, changed


def step_neutral(lines, step):
    """Lines with the step's own names made alike in every step: its namespace (step07), its kernels'
    prefix (reduce_cooperative_grid...) and its name in quotes, so a diff counts what the lesson changed
    and not the renaming every new step needs."""
    number, _, title = step.partition("_")
    names = [(re.compile(rf"\bstep{number}\b"), "stepNN"), (re.compile(rf"\breduce_{title}"), "reduce_STEP"),
             (re.compile(rf'"{re.escape(step)}"'), '"STEP"')]
    out = []
    for line in lines:
        for pattern, neutral in names:
            line = pattern.sub(neutral, line)
        out.append(line)
    return out


def lesson_counts(a, b, root=ROOT):
    """(removed, added, changed) code lines between the kernel files of steps a and b, the steps' own names
    left out (step_neutral)."""
    return diff_counts(step_neutral(code_lines(kernel_file(a, root).read_text()), a),
                       step_neutral(code_lines(kernel_file(b, root).read_text()), b))


# --- provenance of a data file ------------------------------------------------------------------

PROVENANCE_KEYS = ("device", "cuda_runtime", "cuda_driver", "date", "commit")


def git_commit():
    """The commit measured: $REDUCE_COMMIT (set where .git is absent), else git's HEAD (12 digits,
    "+dirty" when tracked files differ from it), else "unknown"."""
    if os.environ.get("REDUCE_COMMIT"):
        return os.environ["REDUCE_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else "unknown"
    except OSError:
        return "unknown"


def today():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def provenance_path(data):
    """Where the provenance of a data file (F.ext -> F.meta.json beside it) or folder (meta.json in it) lies."""
    data = Path(data)
    return data / "meta.json" if data.is_dir() else data.with_name(data.stem + ".meta.json")


def new_provenance(by, device=None, cuda_runtime=None, cuda_driver=None, **extra):
    return {"device": device, "cuda_runtime": cuda_runtime, "cuda_driver": cuda_driver, "date": today(),
            "commit": git_commit(), "by": by, **extra}


def provenance_of_exe(exe, by):
    """new_provenance with the device and CUDA versions that a step executable reports (n = 1024)."""
    try:
        proc = subprocess.run([str(exe), "--n", "1024", "--iters", "1", "--warmup", "0", "--cpu-runs", "0",
                               "--format", "json"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failure(f"{exe}: cannot run it for the device and CUDA versions ({e})") from None
    if proc.returncode == 77:
        raise NoGpu(f"{exe}: no usable GPU")
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise Failure(f"{Path(exe).name} exited with {proc.returncode}: {tail}")
    r = parse_record(proc.stdout, Path(exe).name)
    return new_provenance(by, device=r.get("device"), cuda_runtime=r.get("cuda_runtime"),
                          cuda_driver=r.get("cuda_driver"))


def read_provenance(path):
    """A provenance file as a dict; Failure naming the file when it is not one."""
    path = Path(path)
    value = read_json_object(path)
    missing = [k for k in PROVENANCE_KEYS if k not in value]
    if missing:
        raise Failure(f"{path}: lacks {', '.join(missing)}")
    return value


def describe_provenance(meta, device=True):
    """'NVIDIA H200, CUDA 13.0 (driver 13.0), 2026-11-22, commit `683f81d55927`'; what is unknown is said so."""
    parts = [meta["device"]] if device and meta.get("device") else []
    if meta.get("cuda_runtime"):
        parts.append(f"CUDA {meta['cuda_runtime']}" + (f" (driver {meta['cuda_driver']})" if meta.get("cuda_driver") else ""))
    parts.append(meta.get("date") or "date unknown")
    parts.append(f"commit `{meta['commit']}`" if meta.get("commit") else "commit unknown")
    return ", ".join(parts)


def main(argv):
    p = ArgumentParser("suite.py", __doc__)
    p.add_argument("what", choices=["steps", "provenance"], help="steps: print steps.txt's steps, one per "
                   "line; provenance EXE OUT --by WHO: write OUT, a data file's provenance")
    p.add_argument("exe", nargs="?", help="provenance: a step executable of the build that made the data")
    p.add_argument("out", nargs="?", help="provenance: the JSON file to write (F.meta.json beside the data F.ext)")
    p.add_argument("--by", help="provenance: the script that wrote the data")
    args = p.parse_args(argv)
    if args.what == "steps":
        if args.exe or args.out or args.by:
            raise UsageError("steps takes no arguments")
        print("\n".join(read_steps()))
        return 0
    if not (args.exe and args.out and args.by):
        raise UsageError("provenance needs EXE, OUT and --by WHO")
    if not os.access(args.exe, os.X_OK) or Path(args.exe).is_dir():
        raise UsageError(f"provenance: {args.exe} is not an executable")
    check_can_create(Path(args.out).parent, "provenance OUT")
    meta = provenance_of_exe(args.exe, args.by)
    write_files({Path(args.out): json.dumps(meta, indent=1) + "\n"})
    return 0


if __name__ == "__main__":
    run_main("suite.py", main)
