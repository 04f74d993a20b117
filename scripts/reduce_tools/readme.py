"""readme: every generated block of the Markdown files, rendered from the records under results/.

A block lies between `<!-- NAME:begin -->` and `<!-- NAME:end -->`, written exactly so; prose goes
outside. The names (the vocabulary the READMEs use):
  measured          a progression step's README: its table at the step's demo n (steps.txt), one row
                    per GPU: GPU, n, this step's GB/s, the previous step's at the same n (the sweep's),
                    the gain (the interleaved A/B record's with its 95% interval, else the sweep's
                    medians' ratio, marked so), % of the read ceiling there
  gain              one line: the step's gain-against-n figure, docs/figures/gain_<step>.png (`figures`)
  profile           Nsight Compute's counters of the step's kernels on each GPU (for a collapsed
                    "Going deeper" section)
  footer            one provenance line per GPU: results folder, commit, date, GPU, CUDA
  results           README.md: the H200's table of every step at the table's n, with a link to
                    docs/results.md, a page this command writes whole (every GPU's table and footer)
  path              README.md: one row per step: the step, its idea (from its kernel file), its demo n, and
                    on each GPU its gain there with the 95% interval, from results/<gpu>/ab/ab.json
  ab                every interleaved A/B record, a table per GPU; ab:STEP one line: STEP's gain at its
                    demo n on each GPU, with the interval ("within noise" where it holds 1)
  check             one line per GPU: the GPU session's tests, compute-sanitizer and commit
  variants:SET      perf/variants' set SET as text (only the parts a `<!-- variants:SET shows: PART; PART -->`
                    comment names, where the file has one); ablation:GPU the ablation on that GPU
  STEP, STEP:NAME, STEP:profile   a step beyond the progression: its main table, each "table NAME:"
                    its README's layout declares (tables.parse_table), its ncu table
  STEP:demo         its small table: the runs of runs.txt's "demo:" line at beyond.txt's demo n; a step
                    with one keeps its full tables (main, named, profile) in docs/results.md
  excerpt:PATH[:REGIONS]  code from a source file (PATH from the repository root), cut to its regions
                    (comma-separated; a region: a top-level definition by name, or the lines between
                    `// excerpt: NAME` and `// end excerpt`): scripts/reduce_tools/sources.py
  diff:A:B[:REGIONS]  the diff of steps A and B's kernel files (what `lesson A B` prints), cut to the
                    regions; STEP in a region's name stands for each step's name without its number
A progression README must hold measured, gain (not the first step), profile and footer; README.md
results and footer; a beyond step's README STEP:demo and footer where runs.txt has a demo line, else
STEP, every STEP:NAME and footer. `--check` renders every
block and fails on any difference, on a marker it cannot pair or that is written otherwise (extra or
missing spaces too), on a name it cannot fill, and on a block the file held at git's HEAD and lost
(unless another file holds it now, or it is a retired name, one no longer rendered), and on process text
outside the blocks: a commit hash, an ISO date, or `git show` (allowed in docs/reference.md).
Writing changes nothing unless every file renders; then all are written together.
"""

import csv
import difflib
import os
import re
import subprocess
from pathlib import Path

from . import sources, tables
from .common import (
    CEILING_TOOL,
    FIELDS,
    RESULTS,
    ROOT,
    Failure,
    check_fields,
    count_text,
    quote,
    read_beyond_demo,
    read_json,
    read_json_lines,
    read_steps,
    read_text,
    records_of,
    write_files,
)
from .runlist import RunList

AB_FIELDS = ("step", "against", "n", "ratio", "low", "high", "verdict")  # an A/B record: B/A time, its 95% interval
COMMENT = re.compile(r"<!--(.*?)-->", re.S)
NAME = r"[A-Za-z0-9_.:/,-]+"  # a block's name: excerpt and diff blocks name files and regions
# Process text: a commit (7-40 hex digits with a letter and a digit) or an ISO date. Outside generated
# blocks (footers and provenance lines are rendered) `--check` refuses both; `git show` only in the reference.
PROCESS = re.compile(
    r"(?<![0-9A-Za-z_])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![0-9A-Za-z_])"
    r"|(?<![0-9])[12][0-9]{3}-[01][0-9]-[0-3][0-9](?![0-9])|git show"
)
RESULTS_PAGE = ROOT / "docs" / "results.md"


def rel(path, start=ROOT):
    return Path(os.path.relpath(path, start)).as_posix()


def gpu_dirs():
    """results/<gpu> folders, the H200 first."""
    found = [p for p in RESULTS.iterdir() if p.is_dir()] if RESULTS.is_dir() else []
    return sorted(found, key=lambda p: (p.name != "h200", p.name))


def label(meta, folder=None):
    name = str(meta.get("device", "?")).removeprefix("NVIDIA ")
    m = re.search(r"_x([0-9]+)$", folder.name if folder else "")
    return name + (f" x{m.group(1)}" if m else "")


def footer_line(folder, meta, start, also=None, others=()):
    """One GPU's provenance: its folder, the commit and date of what the page draws from, the GPU. A page
    drawn from several record files (`also`: the table's meta beside the sweep's `meta`; `others`: more
    (file, meta) pairs) names the files of each commit where the commits differ."""
    gpu = RESULTS / Path(rel(folder, RESULTS)).parts[0]
    sources = ([("table.json", also), ("sweep.json", meta)] if also else [("the records", meta)]) + list(others)
    commits = {}  # commit -> [files, the latest date], in the order first seen
    for name, m in sources:
        entry = commits.setdefault(str(m.get("commit", "?"))[:7], [[], ""])
        entry[0].append(name)
        entry[1] = max(entry[1], str(m.get("date", "?")))
    if len(commits) == 1:
        commit = "commit `{}`, {}".format(*next((c, d) for c, (_, d) in commits.items()))
    else:
        commit = "; ".join(f"{', '.join(names)}: commit `{c}`, {d}" for c, (names, d) in commits.items())
    return (
        f"- {label(meta, gpu)}: [`{rel(folder)}`]({rel(folder, start)}), {commit}, "
        f"{meta.get('device', '?')}, CUDA {meta.get('cuda_runtime', '?')}"
    )


def optional(path, read, default):
    """read(path) where something is at path (a FIFO or a device there is refused by the read), else default."""
    return read(path) if os.path.lexists(path) else default


def read_dict(path):
    return read_json(path, dict)


def read_profile(path):
    try:
        return tables.read_profile(read_text(path))
    except (ValueError, csv.Error) as e:
        raise Failure(f"{quote(rel(path))}: {e}") from None


class Gpu:
    """One GPU's progression: results/<gpu>/progression (table.json, sweep.json, profile.csv, ...)."""

    def __init__(self, folder):
        self.folder, self.dir = folder, folder / "progression"
        where = quote(rel(self.dir / "table.json"))
        table = read_dict(self.dir / "table.json")
        self.records = records_of(table, where, ("step", "n", "median_ms", "gbps", "pct_peak"))
        self.meta, self.ceiling = table.get("meta"), table.get("ceiling")
        if not isinstance(self.meta, dict) or not self.records:
            raise Failure(f"{where}: expected an object with meta and records")
        if self.ceiling is not None and not (
            isinstance(self.ceiling, dict)
            and FIELDS["n"](self.ceiling.get("n"))
            and FIELDS["peak_gbps"](self.ceiling.get("gbps"))
        ):
            raise Failure(f"{where}: its ceiling has no valid n or gbps")
        self.name = label(self.meta)
        sweep = optional(self.dir / "sweep.json", read_dict, {"records": []})
        self.sweep = records_of(sweep, quote(rel(self.dir / "sweep.json")))
        self.sweep_meta = sweep.get("meta") if isinstance(sweep.get("meta"), dict) else self.meta
        self.profile = optional(self.dir / "profile.csv", read_profile, [])
        self.profile_meta = optional(self.dir / "profile.meta.json", read_dict, {})
        self.check = optional(self.dir / "check.json", read_dict, None)
        ab = optional(folder / "ab" / "ab.json", read_dict, {"records": []})
        where = quote(rel(folder / "ab" / "ab.json"))
        self.ab = {(r["step"], int(r["n"])): r for r in records_of(ab, where, AB_FIELDS)} if ab["records"] else {}
        self.ab_meta = ab.get("meta") if isinstance(ab.get("meta"), dict) else {}
        self.text_sets, self.set_metas = {}, {}
        for name in ("variants.txt", "ablation.txt"):
            meta = self.dir / name.replace(".txt", ".meta.json")
            if os.path.lexists(meta):
                self.set_metas[name] = read_dict(meta)
            current = None
            for line in optional(self.dir / name, read_text, "").splitlines():
                if line.startswith("set ") and ":" in line:
                    current = line[4 : line.index(":")].strip()
                    self.text_sets[current] = []
                if current:
                    self.text_sets[current].append(line)


class Beyond:
    """One GPU folder's records of a step beyond the progression."""

    def __init__(self, folder, plan):
        self.folder, self.meta = folder, read_dict(folder / "meta.json")
        names = [
            p.stem for p in folder.glob("*.json") if p.name != "meta.json" and not p.name.startswith("read_ceiling")
        ]
        order = self.meta.get("runs") if isinstance(self.meta.get("runs"), list) else []
        names.sort(
            key=lambda n: (order.index(n) if n in order else len(order), n)
        )  # the run list's order, then the rest
        self.results = [(name, read_json_lines(folder / f"{name}.json")) for name in names]
        if not self.results or not all(rs for _, rs in self.results):
            raise Failure(f"{quote(rel(folder))}: no records, or an empty record file")
        for name, rs in self.results:
            check_fields(rs, quote(rel(folder / f"{name}.json")), ("n", "median_ms", "gbps", "pct_peak"))
        self.ceilings = {}
        for p in folder.glob("read_ceiling_*.json"):
            c = read_dict(p)
            if not (FIELDS["n"](c.get("bytes")) and FIELDS["peak_gbps"](c.get("gbps"))):
                raise Failure(f"{quote(rel(p))}: no valid bytes or gbps")
            self.ceilings[int(c["bytes"])] = c
        self.plan = plan
        self.profile = optional(folder / "profile" / "profile.csv", read_profile, [])
        self.profile_meta = optional(folder / "profile" / "meta.json", read_dict, {})


class Data:
    def __init__(self):
        self.steps = read_steps()
        self.names = [s for s, _ in self.steps]
        self.gpus = [Gpu(f) for f in gpu_dirs() if os.path.lexists(f / "progression" / "table.json")]
        if not self.gpus:
            raise Failure("no results/<gpu>/progression/table.json to render from")
        self.beyond, self.demo = {}, read_beyond_demo()
        for step in self.demo:
            plan = RunList(step) if os.path.lexists(ROOT / step / "runs.txt") else None
            self.beyond[step] = [Beyond(f / step, plan) for f in gpu_dirs() if os.path.lexists(f / step / "meta.json")]

    # --- the progression's blocks ---------------------------------------------------------------

    def point(self, gpu, step, n):
        """step's record at n: the table's at its n (so the two tables agree), else the sweep's."""
        if int(gpu.meta.get("n", 0)) == n:
            r = next((x for x in gpu.records if x["step"] == step), None)
            if r:
                return r
        return tables.at_n(gpu.sweep, step, n)

    def measured(self, step):
        n = dict(self.steps)[step]
        k = self.names.index(step)
        prev = self.names[k - 1] if k else None
        rows = []
        for g in self.gpus:
            r = self.point(g, step, n)
            if r is None:
                continue
            p = self.point(g, prev, n) if prev else None
            c = g.ceiling if g.ceiling and int(g.ceiling["n"]) == n else tables.at_n(g.sweep, CEILING_TOOL, n)
            ab = g.ab.get((step, n))  # the gain from the interleaved record where there is one
            rows.append(
                [
                    g.name,
                    count_text(n),
                    f"{r['gbps']:.0f}",
                    f"{p['gbps']:.0f}" if p else "-",
                    gain_text(ab) if ab else f"{p['median_ms'] / r['median_ms']:.2f}x (sweep)" if p else "-",
                    f"{100 * r['gbps'] / c['gbps']:.0f}" if c else "-",
                ]
            )
        if not rows:
            raise Failure(f"no GPU's records hold {step} at n = {count_text(n)}")
        return tables.markdown(
            [
                "GPU",
                "n",
                f"{step[:2]} GB/s",
                f"{prev[:2]} GB/s" if prev else "previous GB/s",
                "gain",
                "% of read ceiling",
            ],
            rows,
        )

    def gain(self, step, start):
        k = self.names.index(step)
        if not k:
            raise Failure(f"{step} is the first step: it has no gain block")
        fig = ROOT / "docs" / "figures" / f"gain_{step}.png"
        return (
            f"![{step}: its time against {self.names[k - 1]}'s at every n, every GPU]({rel(fig, start)}) "
            f"{step[:2]} against {self.names[k - 1][:2]} at every n, on every GPU (`scripts/suite figures`)."
        )

    def profile(self, step):
        """Nsight Compute's counters of the step's kernels and the previous step's, every GPU in one table."""
        k = self.names.index(step)
        shown = [step] + ([self.names[k - 1]] if k else [])
        rows, notes = [], []
        for g in self.gpus:
            mine = sorted((x for x in g.profile if x[0] in shown), key=lambda x: shown.index(x[0]))
            if mine:
                rows += [(f"{run[:2]}, {g.name.split()[0]}", *rest) for run, *rest in mine]
                clocks = (
                    "at its own clocks" if g.profile_meta.get("clock_control") == "none" else "clocks locked"
                )  # records from before --clock-control none
                notes.append(f"{g.name} n = {count_text(g.profile_meta.get('n', 1 << 24))}, {clocks}")
        if not rows:
            raise Failure(f"no GPU's profile.csv holds {step}")
        alike = {x.split(" n = ", 1)[1] for x in notes}  # one n and one clock setting for every GPU: said once
        said = f"n = {alike.pop()}" if len(alike) == 1 else "; ".join(notes)
        return f"Nsight Compute ({said}, caches flushed: its times are not the table's):\n\n" + tables.profile_table(
            rows
        )

    def named(self, records):
        """The records with each step's lesson as its kernel file words it now (a record keeps the words of
        the day it was measured)."""
        words = source_lessons(self.names)
        return [dict(r, lesson=words.get(r["step"], r.get("lesson", ""))) for r in records]

    def results(self, start):
        g = self.gpus[0]
        table = tables.markdown(*tables.speedup_table(self.named(g.records), g.ceiling), left=2) + cpu_note(g.records)
        others = ", ".join(x.name for x in self.gpus[1:])
        return (
            f"{g.name}, n = {count_text(g.meta.get('n', g.records[0]['n']))} floats, median of "
            f"{g.records[0].get('iters')} timed runs each, L2 flushed before each:\n\n{table}\n\n"
            + (f"The {others}: [docs/results.md]({rel(RESULTS_PAGE, start)})." if others else "")
        )

    def results_page(self):
        parts = [
            "# Results on every GPU\n\nGenerated by `scripts/suite readme` from "
            "`results/<gpu>/progression/table.json`; do not edit.\n"
        ]
        for g in self.gpus:
            parts.append(
                f"## {g.name}\n\nn = {count_text(g.meta.get('n', g.records[0]['n']))} floats, median of "
                f"{g.records[0].get('iters')} timed runs each, L2 flushed before each.\n\n"
                + tables.markdown(*tables.speedup_table(self.named(g.records), g.ceiling), left=2)
                + cpu_note(g.records)
                + "\n"
            )
        parts.append(
            "<!-- footer:begin -->\n"
            + "\n".join(footer_line(g.dir, g.meta, RESULTS_PAGE.parent) for g in self.gpus)
            + "\n<!-- footer:end -->\n"
        )
        figures = ROOT / "docs" / "figures"
        sweeps = [g for g in self.gpus if os.path.lexists(figures / f"sweep_{g.folder.name}.png")]
        if sweeps:
            parts.append(
                "## The sweeps\n\nEvery step's GB/s against n, with the read ceiling "
                "(`results/<gpu>/progression/sweep.json`, `scripts/suite figures`), "
                "then every step at the table's n:\n\n"
                + "\n\n".join(
                    f"![{g.name}: every step's GB/s against n](figures/sweep_{g.folder.name}.png)"
                    + (
                        f"\n![{g.name}: every step at the table's n](figures/steps_{g.folder.name}.png)"
                        if os.path.lexists(figures / f"steps_{g.folder.name}.png")
                        else ""
                    )
                    for g in sweeps
                )
                + "\n"
            )
        for step, name in self.full_tables():
            if name == step:
                parts.append(f"## {step}\n\nThe full tables behind [{step}'s README](../{step}/README.md).\n")
            parts.append(self.render(name, RESULTS_PAGE).rstrip("\n") + "\n")
        return "\n".join(parts)

    def full_tables(self):
        """[(step, block name)]: the tables docs/results.md holds whole for each step beyond the progression
        whose README shows a small table at its demo n: its main table, its named tables, its profile."""
        out = []
        for step, n in self.demo.items():
            held = self.beyond.get(step) or []
            plans = [b.plan for b in held if b.plan]
            if n is None or not plans or not plans[0].demo:
                continue
            names = (
                [step]
                + [f"{step}:{t}" for t in plans[0].tables]
                + ([f"{step}:profile"] if any(b.profile for b in held) else [])
            )
            out += [(step, name) for name in names if self.can_render(name, RESULTS_PAGE)]
        return out

    def path(self, start):
        lessons = {r["step"]: r.get("lesson", "") for g in reversed(self.gpus) for r in g.records}
        lessons.update(source_lessons(self.names))  # the kernel file's words, where a record is older
        rows = []
        for step, n in self.steps:
            rows.append(
                [f"[{step}]({rel(ROOT / step / 'README.md', start)})", lessons.get(step, ""), count_text(n)]
                + [gain_text(g.ab.get((step, n))) for g in self.gpus]
            )
        missing = [g.name for g in self.gpus if not g.ab]
        note = (
            "\n\nThe gain: the previous step's median time over this one's, in interleaved rounds "
            '(`scripts/suite ab`), with its 95% interval; "within noise" where that holds 1.'
        )
        if missing:
            note += (
                f" Not recorded yet on the {', '.join(missing)}: "
                f"`scripts/suite ab {' '.join(s[:2] for s in self.names[1:])} "
                "--out results` on that GPU writes the records."
            )
        return (
            tables.markdown(
                ["step", "the idea", "lesson shows at n"] + [f"gain there ({g.name})" for g in self.gpus], rows, left=2
            )
            + note
        )

    def ab_table(self):
        parts = []
        for g in self.gpus:
            if g.ab:
                m = g.ab_meta
                rows = [[r["step"], r["against"], count_text(r["n"]), gain_text(r)] for r in g.ab.values()]
                parts.append(
                    f"**{g.name}** (`{rel(g.folder / 'ab' / 'ab.json')}`; its commit in the footer), "
                    f"{m.get('rounds', '?')} interleaved rounds of "
                    f"{m.get('iters', '?')} timed runs per side:\n\n"
                    + tables.markdown(["step", "against", "n", "gain (95% interval)"], rows, left=2)
                )
        if not parts:  # said so, until the records are committed
            return (
                f"Not recorded yet: `scripts/suite ab {' '.join(s[:2] for s in self.names[1:])} --out results` on each "
                "GPU writes `results/<gpu>/ab/ab.json`."
            )
        return "\n\n".join(parts)

    def ab_line(self, step):
        if step not in self.names:
            raise Failure(f"ab:{step}: not a step of steps.txt")
        n = dict(self.steps)[step]
        got = [f"on the {g.name} {gain_text(g.ab[(step, n)])}" for g in self.gpus if (step, n) in g.ab]
        if not got:
            return (
                f"{step}'s interleaved A/B at {count_text(n)} is not recorded yet (`scripts/suite ab {step[:2]} "
                "--out results`)."
            )
        return (
            f"{step} against {self.names[self.names.index(step) - 1]} at n = {count_text(n)}: " + "; ".join(got) + "."
        )

    def check(self):
        lines = [
            f"- {g.name}: {g.check.get('tests', 'tests not run')}"
            + (f"; the Huge tests: {g.check['huge']}" if "huge" in g.check else "")
            + f"; compute-sanitizer {g.check.get('sanitizer', 'not run')} (its commit in the footer)"
            for g in self.gpus
            if g.check
        ]
        if not lines:
            raise Failure("no results/<gpu>/progression/check.json (scripts/suite gpu writes it)")
        return "\n".join(lines)

    def text_set(self, name, start, md=None):
        kind, _, which = name.partition(":")
        if kind == "ablation":
            g = next((g for g in self.gpus if g.folder.name == which), None)
        else:
            g = next((g for g in self.gpus if which in g.text_sets), None)
        body = g.text_sets.get("ablation" if kind == "ablation" else which) if g else None
        if not body:
            raise Failure(f"no results/<gpu>/progression/{kind}.txt holds the set '{which}'")
        if kind == "ablation":
            return tables.ablation_table(body)
        left_out = ""
        # The parts the lesson reads, where the file says so before the block: <!-- variants:SET shows: PART; PART -->
        # (a part: text of the set's "SET n = ..." lines); the rest named, with a link.
        said = re.search(rf"<!-- {re.escape(name)} shows: (.*?) -->", read_text(md)) if md else None
        shown = [part.strip() for part in said.group(1).split(";")] if said else None
        if shown:
            keep, out, others = False, [], []
            for line in body:
                if line.startswith(f"{which} n ="):
                    keep = any(k in line for k in shown)
                    parts = line[len(which) + 1 :].replace(" floats", "").split(", ")
                    others += [] if keep else [", ".join(p for p in parts[:2] if p.startswith(("n =", "pattern")))]
                out += [line] if keep or line.startswith("set ") else []
            body = out
            if others:
                where = rel(g.dir / "variants.txt", start)
                left_out = f"\n\nThe set's other parts ({'; '.join(others)}) are in [`{where}`]({where})."
        return "```text\n" + "\n".join(body).rstrip() + "\n```" + left_out

    # --- the steps beyond -------------------------------------------------------------------------

    def beyond_block(self, step, what):
        held = self.beyond.get(step) or []
        if not held:  # a new step, not measured yet: said so, until its records are committed
            return f"Not measured yet: `scripts/suite measure {step} --out results` on a GPU writes its records."
        parts = []
        for b in held:
            head = f"**{label(b.meta, b.folder.parent)}**"
            if what is None:
                iters = b.results[0][1][0].get("iters")
                note = (
                    f"{b.plan.title}; median of {iters} timed runs, L2 flushed before each."
                    if b.plan and b.plan.title
                    else ""
                )
                body = tables.beyond_table(b.plan, b.results, b.ceilings)
                if body:
                    parts.append(f"{head}: {note}\n\n{body}")
            elif what == "demo":
                n = self.demo.get(step)
                if n is None:
                    raise Failure(f"beyond.txt gives {step} no demo n (NN_name DEMO_N)")
                body = tables.demo_table(b.plan, b.results, b.ceilings, n) if b.plan else ""
                if body:  # one n, or each row's
                    at = "" if "n" in b.plan.columns else f", n = {count_text(n)}"
                    parts.append(f"{head}{at}:\n\n{body}")
            elif what == "profile":
                if b.profile:
                    parts.append(f"{head}\n\n" + tables.profile_table(b.profile))
            else:
                if b.plan is None or what not in b.plan.tables:
                    raise Failure(f"{step}/README.md's layout declares no 'table {what}:'")
                body = tables.declared_table(b.plan.tables[what], b.results)
                if body:
                    parts.append(f"{head}\n\n{body}")
        if not parts:
            raise Failure(f"no GPU's records of {step} fill its '{what}' block")
        return "\n\n".join(parts)

    @staticmethod
    def drawn_from(g, text):
        """The record files besides table.json and sweep.json that a progression README's blocks use."""
        files = [("profile.csv", g.profile_meta)] if "<!-- profile:begin" in text and g.profile_meta else []
        files += [("ab.json", g.ab_meta)] if g.ab and ("<!-- measured:begin" in text or "<!-- ab:" in text) else []
        return files + [(name, m) for name, m in g.set_metas.items() if f"<!-- {name[:-4]}:" in text]

    def footer(self, md):
        start = md.parent
        step = md.parent.name if md.parent != ROOT else None
        if step in self.beyond:
            text = read_text(md)
            return (
                "\n".join(
                    footer_line(
                        b.folder,
                        b.meta,
                        start,
                        others=[("profile/", b.profile_meta)]
                        if b.profile and b.profile_meta and f"<!-- {step}:profile:begin" in text
                        else [],
                    )
                    for b in self.beyond[step]
                )
                or "Not measured yet."
            )
        if step in self.names:
            text = read_text(md)
            return "\n".join(
                footer_line(g.dir, g.sweep_meta, start, also=g.meta, others=self.drawn_from(g, text)) for g in self.gpus
            )
        text = read_text(md)
        uses_ab = any(f"<!-- {b}" in text for b in ("path:begin", "ab:begin", "ab:"))
        uses_check = "<!-- check:begin" in text
        return "\n".join(
            footer_line(
                g.dir,
                g.meta,
                start,
                others=([("ab.json", g.ab_meta)] if uses_ab and g.ab else [])
                + ([("check.json", g.check)] if uses_check and g.check else []),
            )
            for g in self.gpus
        )

    # --- one block by name ----------------------------------------------------------------------------

    def render(self, name, md):
        start, step = md.parent, md.parent.name
        if name == "footer":
            return self.footer(md)
        if step in self.names and name in ("measured", "gain", "profile"):
            return {"measured": self.measured, "gain": lambda s: self.gain(s, start), "profile": self.profile}[name](
                step
            )
        if name == "results":
            return self.results(start)
        if name == "path":
            return self.path(start)
        if name == "ab":
            return self.ab_table()
        if name.startswith("ab:"):
            return self.ab_line(name[3:])
        if name == "check":
            return self.check()
        if name.startswith(("variants:", "ablation:")):
            return self.text_set(name, start, md)
        if name.startswith(("excerpt:", "diff:")):
            kind, _, spec = name.partition(":")
            return getattr(sources, kind)(spec)
        base, _, what = name.partition(":")
        if base in self.beyond:
            return self.beyond_block(base, what or None)
        raise Failure(f"{rel(md)}: no block is called '{name}' (see scripts/reduce_tools/readme.py)")

    def can_render(self, name, md):
        """Whether this file could hold the block (a retired name, or one whose data is gone, could not)."""
        try:
            self.render(name, md)
            return True
        except Failure:
            return False

    def required(self, md):
        step = md.parent.name
        if md == ROOT / "README.md":
            return {"results", "footer"}
        if md.name == "README.md" and step in self.names:
            return {"measured", "profile", "footer"} | ({"gain"} if self.names.index(step) else set())
        if md.name == "README.md" and step in self.beyond:
            plans = [b.plan for b in self.beyond[step] if b.plan]
            if self.demo.get(step) is not None and plans and plans[0].demo:  # the full tables: docs/results.md
                return {f"{step}:demo", "footer"}
            return {step, "footer"} | {f"{step}:{t}" for p in plans[:1] for t in p.tables}
        return set()


def cpu_note(records):
    """What "vs 1 CPU thread" divides: one CPU time, the median of every row's run of the plain loop."""
    cpu = [r["cpu_ms"] for r in records if isinstance(r.get("cpu_ms"), (int, float)) and r["cpu_ms"] > 0]
    if not cpu:
        return ""
    return (
        f"\n\nvs 1 CPU thread: one CPU time for every row, the median of the {len(cpu)} rows' single-threaded "
        f"loop times ({tables.median(cpu):.1f} ms), over the row's median time."
    )


def gain_text(r):
    """An A/B record as a gain (the old time over the new, the reciprocal of the record's ratio) with its
    95% interval: "1.17x (1.15-1.19)", or "within noise (0.99-1.02)" where the interval holds 1; "-" for none."""
    if not r:
        return "-"
    gain, low, high = 1 / r["ratio"], 1 / r["high"], 1 / r["low"]
    interval = f"{low:.2f}-{high:.2f}" if gain < 100 else f"{low:.0f}-{high:.0f}"
    return f"within noise ({interval})" if low <= 1 <= high else f"{tables.ratio_text(gain)} ({interval})"


def source_lessons(names):
    """{step: the lesson its kernel file registers}: the words after the step's name in its step record."""
    out = {}
    for step in names:
        for cu in sorted((ROOT / step).glob("*.cu")) if (ROOT / step).is_dir() else []:
            m = re.search(r'"' + re.escape(step) + r'",\s*"((?:[^"\\]|\\.)*)"', read_text(cu))
            if m:
                out[step] = m.group(1)
                break
    return out


def markdown_files():
    """README.md, the other Markdown files at the top and under docs/, and every step's README (a step
    folder without one fails)."""
    files = [ROOT / "README.md"] + sorted(p for p in ROOT.glob("*.md") if p.name != "README.md")
    files += sorted(p for p in (ROOT / "docs").rglob("*.md") if p != RESULTS_PAGE) if (ROOT / "docs").is_dir() else []
    for step in [s for s, _ in read_steps()] + list(read_beyond_demo()):
        md = ROOT / step / "README.md"
        if os.path.lexists(md):
            files.append(md)
        elif (ROOT / step).is_dir():
            raise Failure(f"{quote(rel(md))}: missing (every step's folder holds its README)")
    return files


def blocks(text, where):
    """[(name, start of its body, end of its body)] of a file's text; Failure for a marker written
    otherwise than `<!-- NAME:begin -->`, unpaired, nested or repeated."""
    found, open_name, open_at, seen = [], None, 0, set()
    for m in COMMENT.finditer(text):
        inner = m.group(1).strip()
        quoted = text[m.start() - 1 : m.start()] == "`"  # `<!-- x:begin -->` in prose names a marker, is none
        if not re.search(r":\s*(begin|end)$", inner) or quoted:
            continue
        name, _, edge = inner.rpartition(":")
        if m.group(0) != f"<!-- {name}:{edge} -->" or not re.fullmatch(NAME, name):
            line = text.count("\n", 0, m.start()) + 1
            raise Failure(
                f"{where}:{line}: marker {quote(m.group(0), 60)} is not written '<!-- NAME:begin -->' or "
                "'<!-- NAME:end -->'"
            )
        if edge == "begin":
            if open_name is not None:
                raise Failure(f"{where}: '{name}' begins inside '{open_name}'")
            if name in seen:
                raise Failure(f"{where}: block '{name}' appears twice")
            open_name, open_at = name, m.end()
        else:
            if open_name != name:
                raise Failure(f"{where}: '{name}:end' without its begin")
            found.append((name, open_at, m.start()))
            seen.add(name)
            open_name = None
    if open_name is not None:
        raise Failure(f"{where}: '{open_name}:begin' without its end")
    return found


def process_text(text, where, spans):
    """Failure for the first commit hash, ISO date or `git show` of a file's text outside its generated
    blocks (spans: the blocks' bodies); `git show` is allowed in docs/reference.md."""
    for m in PROCESS.finditer(text):
        if any(b <= m.start() < e for _, b, e in spans) or (m.group(0) == "git show" and where == "docs/reference.md"):
            continue
        line = text.count("\n", 0, m.start()) + 1
        raise Failure(
            f"{where}:{line}: {quote(m.group(0))} is process text (a commit or a date belongs in a footer, "
            "in git and in the issues)"
        )


def held_at_head(md):
    """The block names the file held at git's HEAD (empty where git or the file is not there)."""
    try:
        p = subprocess.run(["git", "show", f"HEAD:{rel(md)}"], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return set()
    found = re.finditer(rf"(?<!`)<!-- ({NAME}):begin -->", p.stdout) if p.returncode == 0 else []
    return {m.group(1) for m in found}


def render_all(data):
    """{path: (old text, new text)} for every Markdown file with blocks, and the results page. A block
    the file held at HEAD counts as lost unless another file holds it now (it moved) or it is retired."""
    raw = {md: read_text(md) for md in markdown_files()}
    files = {md: text.replace("\r\n", "\n") for md, text in raw.items()}  # written back with LF line endings
    found = {md: blocks(text, rel(md)) for md, text in files.items()}
    anywhere = {n for f in found.values() for n, _, _ in f} | {name for _, name in data.full_tables()}
    out = {}
    for md, text in files.items():
        names = {n for n, _, _ in found[md]}
        lost = (data.required(md) - names) | {
            n for n in held_at_head(md) - anywhere if not n.startswith(("excerpt:", "diff:")) and data.can_render(n, md)
        }
        if lost:
            raise Failure(f"{rel(md)}: lacks the block{'s' if len(lost) > 1 else ''} {', '.join(sorted(lost))}")
        process_text(text, rel(md), found[md])
        new, last = [], 0
        for name, begin, end in found[md]:
            new += [text[last:begin], "\n" + data.render(name, md).rstrip("\n") + "\n"]
            last = end
        out[md] = (raw[md], "".join(new) + text[last:])
    if len(data.gpus) > 1 or os.path.lexists(RESULTS_PAGE):
        out[RESULTS_PAGE] = (optional(RESULTS_PAGE, read_text, ""), data.results_page())
    return out


def main(args):
    rendered = render_all(Data())
    changed = {p: new for p, (old, new) in rendered.items() if old != new}
    if args.check or args.dry_run:
        for p, new in changed.items():
            if "\r" in rendered[p][0]:
                print(f"{rel(p)}: CRLF line endings (the READMEs use LF)")
            diff = difflib.unified_diff(
                rendered[p][0].splitlines(),
                new.splitlines(),
                f"{rel(p)} (now)",
                f"{rel(p)} (rendered)",
                lineterm="",
                n=1,
            )
            print("\n".join(list(diff)[:40]))
        if args.check and changed:
            raise Failure(
                f"{len(changed)} file(s) differ from what the records render: {', '.join(rel(p) for p in changed)}; "
                "run scripts/suite readme"
            )
        return 0
    write_files(changed)
    print(f"readme: {len(changed)} file(s) written" + (": " + ", ".join(rel(p) for p in changed) if changed else ""))
    return 0
