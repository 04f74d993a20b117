"""Code in the Markdown files, rendered from the sources (readme's excerpt and diff blocks), so that
what a README shows is what the step compiles.

A region of a source file is named one of two ways:
  - a definition at the file's top level: a function, a struct or a constant whose name is NAME (its
    `template <...>` line and the `//` comment lines right above it come along);
  - lines between `// excerpt: NAME` and `// end excerpt` (the two marker lines are left out).
In a diff, STEP in a region's name stands for each step's name without its number (reduce_STEP is
01's reduce_interleaved and 02's reduce_sequential).
"""

import difflib
import re

from .common import ROOT, Failure, quote, read_text
from .lesson import kernel_file, strip_comments

MARKER = re.compile(r"// excerpt: .*|// end excerpt")
FENCE = {".cu": "cuda", ".cuh": "cuda", ".cpp": "cpp", ".hpp": "cpp", ".h": "cpp", ".py": "python"}


def region(lines, name, where):
    """The lines of region name in lines (a file's lines); Failure where the file has none."""
    marked = [k for k, line in enumerate(lines) if line.strip() == f"// excerpt: {name}"]
    if marked:
        end = next((k for k in range(marked[0] + 1, len(lines)) if lines[k].strip() == "// end excerpt"), None)
        if end is None:
            raise Failure(f"{where}: '// excerpt: {name}' without its '// end excerpt'")
        return lines[marked[0] + 1 : end]
    head = re.compile(rf"(?!\s|//|#|}})(?:.*[^\w.:])?{re.escape(name)}\s*(?:\(|\{{|=[^=])")
    for start, line in enumerate(lines):
        if not head.match(line):
            continue
        depth, opened = 0, False
        for end in range(start, len(lines)):
            code = strip_comments(lines[end])
            depth += code.count("{") - code.count("}")
            opened |= "{" in code
            if (opened and depth == 0) or (not opened and code.rstrip().endswith(";")):
                break
        if not opened and "=" not in "".join(lines[start : end + 1]):
            continue  # a declaration: the definition comes later
        while start and re.match(r"template\b|//", lines[start - 1]):
            start -= 1
        return lines[start : end + 1]
    raise Failure(f"{where}: no region '{name}' (a top-level definition, or '// excerpt: {name}' ... '// end excerpt')")


def cut(path, names, step=None, absent_ok=False):
    """The regions named (comma-separated) of path, a blank line between two; the whole file for none.
    absent_ok: a region the file lacks is left out (a diff's side where a region is added or removed)."""
    lines = read_text(path).splitlines()
    if not names:
        return [line for line in lines if not MARKER.fullmatch(line.strip())]
    title = step.split("_", 1)[-1] if step else None
    out = []
    for name in names.split(","):
        try:
            part = region(lines, name.replace("STEP", title) if title else name, quote(str(path.relative_to(ROOT))))
        except Failure:
            if absent_ok:
                continue
            raise
        out += ([""] if out else []) + part
    return [line for line in out if not MARKER.fullmatch(line.strip())]  # a region's markers are not its code


def excerpt(spec):
    """excerpt:PATH[:REGIONS]: the regions of ROOT/PATH in a fenced block of its language."""
    path, _, names = spec.partition(":")
    file = ROOT / path
    if not path or ".." in path.split("/") or not file.is_file():
        raise Failure(f"excerpt: no source file {quote(path)}")
    return f"```{FENCE.get(file.suffix, 'text')}\n" + "\n".join(cut(file, names)) + "\n```"


def diff(spec):
    """diff:A:B[:REGIONS]: the unified diff of two steps' kernel files, cut to the regions named (a
    region may stand in one file only: added or removed, but in one at least), one line of context
    (blank ones left out), ' ...' between hunks. Failure where the two are the same."""
    a, _, rest = spec.partition(":")
    b, _, names = rest.partition(":")
    if not a or not b or not (ROOT / a).is_dir() or not (ROOT / b).is_dir():
        raise Failure(f"diff:{spec}: expected diff:A:B or diff:A:B:REGIONS, A and B step folders")
    files = [(kernel_file(step), step) for step in (a, b)]
    for name in names.split(",") if names else []:
        if not any(cut(f, name, step, absent_ok=True) for f, step in files):
            raise Failure(
                f"diff:{spec}: neither kernel file has a region '{name}' (a top-level definition, or "
                f"'// excerpt: {name}' ... '// end excerpt')"
            )
    hunks = list(difflib.unified_diff(*(cut(f, names, step, absent_ok=True) for f, step in files), lineterm="", n=1))[
        2:
    ]
    if not hunks:
        raise Failure(f"diff:{spec}: the two steps' regions are the same")
    body = [
        " ..." if h.startswith("@@") else h.rstrip() for h in hunks if h.strip()
    ]  # a blank context line says nothing
    return "```diff\n" + "\n".join(body[1:]) + "\n```"
