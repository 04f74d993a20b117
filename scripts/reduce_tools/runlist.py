"""One run list per step beyond the progression: <step>/runs.txt, read here for scripts/suite and by
cmake/RunList.cmake for CTest (its smoke and cli lines; the tests check that the two readings agree).
tests/cli.txt and 14_reproducible/tests/bits_cli.txt hold the cli lines of the other executables.

One run per line, its kind first, fields separated by "|"; "#" starts a comment:
    smoke NAME | ARGUMENTS                a CTest smoke run (77 counts as skipped)
    smoke NAME | mpi NP | ARGUMENTS       <step>_mpi under mpirun -np NP, where built and NP GPUs are seen
    cli NAME | CODE | TEXT | ARGUMENTS    the command line's contract, checked without a GPU: exit CODE
                                          and TEXT in the one-line message (in stdout for CODE 0)
    sanitize TOOLS | ARGUMENTS            compute-sanitizer runs of `suite gpu` (TOOLS: all or a,b)
    measure NAME | [mpi NP|all |] ARGUMENTS  the runs behind the step's tables (`suite measure`)
    profile NAME | KERNELS | ARGUMENTS    Nsight Compute runs (`suite profile`), KERNELS ncu's -k filter
    program TARGET PREFIX                 the cli lines after it check TARGET, as tests PREFIX.NAME
                                          (in a list of cli lines only; in runs.txt they check the step)
The measured tables' layout lives with the README that shows them, in one comment of <step>/README.md:
    <!-- STEP:layout
    title: TEXT            what the main table shows (a line that starts with a space continues the one above)
    columns: a, b          the record fields that lead each row
    ceiling: no            no read-ceiling column (several GPUs)
    skip: FIELD            the main table leaves out the records that hold FIELD (they have a table of their own)
    rows: largest n        the main table shows only the records at the largest n, one per value of the columns
    demo: NAME, NAME       the README's small table (<!-- STEP:demo -->): these measure runs' records at
                           beyond.txt's demo n, the columns, GB/s, % read ceiling and each "vs" only
    table NAME: a, b | with c | without d, e=v | largest n | crossover f
                           a table of its own, <!-- STEP:NAME --> in the README: those columns (a field,
                           "a / b as LABEL", "a vs k=v as LABEL"), a row per record left by the clauses
                           (tables.parse_table says each), or with crossover a line per value of the columns
    figure NAME: y against x | panels f: v as LABEL, v | lines g as UNIT | without h | alone z as LABEL
                           docs/figures/NAME_<gpu>.png (scripts/suite figures) from every machine of a GPU:
                           a panel per value of f, a line per value of g ("2 UNIT"), y against x (log-log), the
                           records left out as in a table; alone: z of the same records as a line of its own
    -->
A product is written once: the lines between "for VAR in A B C" and "end" repeat for each value, {VAR}
replaced; loops nest. In ARGUMENTS, @DIR@ stands for the step's folder.
"""

import re
import shlex
from collections import namedtuple

from . import tables
from .common import ROOT, Failure, quote, read_text

# How many fields come before ARGUMENTS, at least and at most, for each kind.
KINDS = {"smoke": (1, 2), "cli": (3, 3), "sanitize": (1, 1), "measure": (1, 2), "profile": (2, 2)}
SANITIZERS = ("memcheck", "racecheck", "synccheck", "initcheck")
Run = namedtuple("Run", "kind name fields args where")


def _expand(items, i, path, inside):
    out = []
    while i < len(items):
        number, line = items[i]
        if line == "end":
            if not inside:
                raise Failure(f"{path}:{number}: 'end' without 'for'")
            return out, i + 1
        m = re.fullmatch(r"for ([A-Za-z_]\w*) in (.+)", line)
        if m:
            body, i = _expand(items, i + 1, path, True)
            key = "{" + m.group(1) + "}"
            out += [(n, text.replace(key, value)) for value in m.group(2).split() for n, text in body]
            continue
        out.append((number, line))
        i += 1
    if inside:
        raise Failure(f"{path}: a 'for' without its 'end'")
    return out, i


SETTINGS = ("title", "columns", "ceiling", "skip", "rows", "demo")


def layout_of(step):
    """The body of <step>/README.md's `<!-- STEP:layout ... -->` comment, and its first line's number."""
    path = ROOT / step / "README.md"
    text = read_text(path) if path.is_file() else ""
    m = re.search(rf"<!-- {re.escape(step)}:layout\n(.*?)-->", text, re.S)
    return (m.group(1), text.count("\n", 0, m.start()) + 2) if m else ("", 0)


def parse_figure(text, where):
    """A figure the layout declares (see the module's text): {y, x, panels: (field, [(value, label)]), lines,
    without, alone: (field, label) or None}."""
    parts = [p.strip() for p in text.split("|")]
    m = re.fullmatch(r"(\w+) against (\w+)", parts[0])
    if not m:
        raise Failure(f"{where}: a figure starts 'Y against X', got {quote(parts[0], 40)}")
    spec = {"y": m.group(1), "x": m.group(2), "panels": None, "lines": None, "without": [], "alone": None}
    for clause in parts[1:]:
        key, _, rest = clause.partition(" ")
        if key == "panels" and ":" in rest:
            name, _, values = rest.partition(":")
            pairs = [v.strip().partition(" as ") for v in values.split(",") if v.strip()]
            spec["panels"] = (name.strip(), [(v, label or v) for v, _, label in pairs])
        elif key == "lines" and re.fullmatch(r"\w+( as .+)?", rest):
            name, _, unit = rest.partition(" as ")
            spec["lines"] = (name, unit or name)
        elif key == "without" and rest.strip():
            spec["without"] += [v.strip() for v in rest.split(",") if v.strip()]
        elif key == "alone" and re.fullmatch(r"\w+ as .+", rest):
            name, _, label = rest.partition(" as ")
            spec["alone"] = (name, label)
        else:
            raise Failure(
                f"{where}: expected 'panels F: V, V', 'lines F', 'without F' or 'alone F as LABEL', "
                f"got {quote(clause, 40)}"
            )
    if not spec["panels"] or not spec["lines"]:
        raise Failure(f"{where}: a figure names its panels and its lines")
    return spec


class RunList:
    def __init__(self, step, text=None, path=None, layout=None):
        """layout: the README's layout comment's body (read from <step>/README.md when None)."""
        self.step, self.path = step, path or ROOT / step / "runs.txt"
        if text is None:
            text = read_text(self.path)
        self.runs, self.title, self.columns, self.ceiling, self.tables = [], "", [], True, {}
        self.skip, self.largest, self.demo, self.figures = None, False, [], {}
        items = [(k, line.split("#", 1)[0].strip()) for k, line in enumerate(text.splitlines(), 1)]
        lines, _ = _expand([x for x in items if x[1]], 0, self.where, False)
        for number, line in lines:
            self._line(number, line)
        first = 1
        if layout is None:
            layout, first = layout_of(step)
        settings = []  # [number, line]: a line that starts with white space continues the one above
        for number, line in enumerate(layout.splitlines(), first):
            if line[:1].isspace() and settings:
                settings[-1][1] += " " + line.strip()
            elif line.strip():
                settings.append([number, line.strip()])
        for number, line in settings:
            self._setting(f"{step}/README.md:{number}", line)

    def _setting(self, where, line):
        key, colon, value = line.partition(":")
        if not colon or not (key in SETTINGS or key.startswith(("table ", "figure "))):
            raise Failure(
                f"{where}: expected a setting ({', '.join(SETTINGS)}, table NAME, figure NAME), got {quote(line, 40)}"
            )
        items = [v.strip() for v in value.split(",") if v.strip()]
        if key == "title":
            self.title = value.strip()
        elif key == "columns":
            self.columns = items
        elif key == "demo":
            self.demo = items
        elif key == "ceiling":
            self.ceiling = value.strip() != "no"
        elif key == "skip":
            self.skip = value.strip()
        elif key == "rows" and value.strip() == "largest n":
            self.largest = True
        elif re.fullmatch(r"table [a-z_]+", key) and items:
            self.tables[key[6:]] = tables.parse_table(value, where)
        elif re.fullmatch(r"figure [a-z_]+", key):
            self.figures[key[7:]] = parse_figure(value, where)
        else:
            raise Failure(f"{where}: expected 'table NAME: COLUMN, COLUMN [| CLAUSE]'")

    @property
    def where(self):
        return self.path.relative_to(ROOT).as_posix() if self.path.is_relative_to(ROOT) else str(self.path)

    def _line(self, number, line):
        where = f"{self.where}:{number}"
        loose = re.search(r"\{[A-Za-z_]\w*\}", line)
        if loose:
            raise Failure(f"{where}: {loose.group(0)} outside a 'for' over it")
        key, colon, _ = line.partition(":")
        if colon and "|" not in key and (key in SETTINGS or key.startswith("table ")):
            raise Failure(
                f"{where}: '{key}:' is the README's layout: it belongs in {self.step}/README.md's "
                f"<!-- {self.step}:layout --> comment"
            )
        kind, _, rest = line.partition(" ")
        if kind == "program":
            words = rest.split()
            if len(words) != 2:
                raise Failure(f"{where}: expected program TARGET PREFIX")
            self.runs.append(Run(kind, words[0], words[1:], [], where))
            return
        if kind not in KINDS:
            raise Failure(f"{where}: expected a kind ({', '.join(KINDS)}) or a setting, got {quote(line, 40)}")
        parts = [p.strip() for p in rest.split("|")]
        lo, hi = KINDS[kind]
        if kind == "profile":  # the kernel filter may hold "|": NAME | KERNELS | ARGUMENTS
            parts = [parts[0], "|".join(parts[1:-1]), parts[-1]] if len(parts) >= 3 else parts
        fields = parts[:-1]
        if not lo <= len(fields) <= hi or not re.fullmatch(r"[A-Za-z0-9._,-]+", fields[0]):
            raise Failure(f"{where}: expected {kind} {'NAME | ' if kind != 'sanitize' else ''}... | ARGUMENTS")
        if len(fields) == 2 and kind in ("smoke", "measure") and not re.fullmatch(r"mpi ([0-9]+|all)", fields[1]):
            raise Failure(f"{where}: expected {kind} NAME | mpi NP | ARGUMENTS")
        if kind == "sanitize" and not set(fields[0].split(",")) <= {"all", *SANITIZERS}:
            raise Failure(
                f"{where}: expected sanitize all | ARGUMENTS or TOOL,TOOL | ARGUMENTS ({', '.join(SANITIZERS)})"
            )
        if kind == "cli" and not fields[1].isdigit():
            raise Failure(f"{where}: expected cli NAME | CODE | TEXT | ARGUMENTS")
        args = shlex.split(parts[-1].replace("@DIR@", str(ROOT / self.step)))
        name, fields = ("sanitize", fields) if kind == "sanitize" else (fields[0], fields[1:])
        self.runs.append(Run(kind, name, fields, args, where))

    def of(self, kind):
        return [r for r in self.runs if r.kind == kind]

    def cmake_lines(self):
        """The smoke and cli runs as cmake/BeyondStep.cmake reads them: fields joined by "|", the
        arguments by spaces (a cli argument ">FILE" sends the run's stdout to FILE)."""
        return [
            "|".join([r.kind, r.name, *r.fields] + ([" ".join(r.args)] if r.kind != "program" else []))
            for r in self.runs
            if r.kind in ("smoke", "cli", "program")
        ]
