"""figures: the suite's figures, drawn from the records under results/ into docs/figures/ (matplotlib):
  gain_<step>.png   the step's time against the previous step's at every n of the sweeps, one line per GPU
  sweep_<gpu>.png   GB/s against n for every step, with the read ceiling
  steps_<gpu>.png   every step's GB/s at the table's n, the read ceiling as a line
  NAME_<gpu>.png    a figure a step's README layout declares (figure NAME:, runlist.py), from every
                    machine of that GPU
All are drawn before any is written, then written together."""

import io

from .common import CEILING_TOOL, FIELDS, ROOT, Failure, UsageError, check_target, count_text, quote, write_files
from .readme import Data, rel

OUT = ROOT / "docs" / "figures"


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise Failure("figures need matplotlib (python3 -m pip install matplotlib); nothing written") from None
    return plt


def _png(plt, fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def plans(data):
    """{file name: a function that draws it}."""
    out = {}
    for k, step in enumerate(data.names[1:], 1):
        out[f"gain_{step}.png"] = lambda plt, s=step, p=data.names[k - 1]: gain(plt, data, s, p)
    for g in data.gpus:
        if g.sweep:
            out[f"sweep_{g.folder.name}.png"] = lambda plt, g=g: sweep(plt, data, g)
        out[f"steps_{g.folder.name}.png"] = lambda plt, g=g: steps(plt, g)
    for (step, name, gpu), (spec, folders) in declared(data).items():
        out[f"{name}_{gpu}.png"] = lambda plt, s=step, sp=spec, f=folders: figure(plt, s, sp, f)
    return out


def declared(data):
    """{(step, figure, gpu): (the figure's spec, the record folders of every machine of that GPU)}: the figures
    the steps' README layouts declare (figure NAME:), where a line holds more than one point."""
    out = {}
    for step, held in data.beyond.items():
        for b in held:
            for name, spec in (b.plan.figures if b.plan else {}).items():
                out.setdefault((step, name, b.folder.parent.name.split("_x")[0]), (spec, []))[1].append(b)
    return {k: v for k, v in out.items() if any(len(points) > 1 for points in figure_lines(*v).values())}


def figure_lines(spec, folders):
    """{(panel label, line label): {x: y}}: a line per value of the lines field in each panel, and the alone
    field's line per panel; the first record of a point wins."""
    field, panels = spec["panels"]
    lines = {}
    for b in folders:
        for _, records in b.results:
            for r in records:
                panel = next((label for value, label in panels if str(r.get(field)) == value), None)
                if panel is None or any(r.get(w) for w in spec["without"]) or r.get(spec["y"]) is None:
                    continue
                x = r[spec["x"]]
                key = (panel, f"{r.get(spec['lines'][0])} {spec['lines'][1]}")
                lines.setdefault(key, {}).setdefault(x, r[spec["y"]])
                if spec["alone"] and r.get(spec["alone"][0]):
                    lines.setdefault((panel, spec["alone"][1]), {}).setdefault(x, r[spec["alone"][0]])
    return {k: v for k, v in lines.items() if len(v) > 1}


def figure(plt, step, spec, folders):
    lines = figure_lines(spec, folders)
    panels = [label for _, label in spec["panels"][1]]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), sharey=True, squeeze=False)
    alone = spec["alone"][1] if spec["alone"] else None
    for ax, panel in zip(axes[0], panels):
        for (p, label), points in sorted(lines.items(), key=lambda kv: (kv[0][1] == alone, kv[0][1])):
            if p == panel:
                xs = sorted(points)
                lone = label == alone
                ax.plot(
                    xs,
                    [points[x] for x in xs],
                    marker="" if lone else "o",
                    ms=3,
                    lw=2 if lone else 1.2,
                    ls="--" if lone else "-",
                    color="black" if lone else None,
                    label=label,
                )
        ax.set_xscale("log", base=2)  # ticks 2^k, as the runs name their sizes
        ax.set(yscale="log", xlabel=spec["x"], title=panel)
        ax.grid(True, which="major", lw=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    axes[0][0].set_ylabel(spec["y"])
    fig.suptitle(f"{step} on {label_of(folders)}: {spec['y']} against {spec['x']}", fontsize=9)
    return fig


def label_of(folders):
    return str(folders[0].meta.get("device", "?")).removeprefix("NVIDIA ")


def gain(plt, data, step, prev):
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for g in data.gpus:
        mine = {int(r["n"]): r["median_ms"] for r in g.sweep if r["step"] == step}
        before = {int(r["n"]): r["median_ms"] for r in g.sweep if r["step"] == prev}
        ns = sorted(n for n in mine if n in before and mine[n] > 0)
        if ns:
            ax.plot(ns, [before[n] / mine[n] for n in ns], marker="o", ms=3, label=g.name)
    ax.axhline(1, color="grey", lw=0.8)
    ax.axvline(data.steps[data.names.index(step)][1], color="grey", ls=":", lw=0.8)
    ax.set(
        xscale="log",
        xlabel="n (floats)",
        ylabel=f"{prev[:2]} time / {step[:2]} time",
        title=f"{step}: gain over {prev} (dotted: the demo n)",
    )
    ax.legend(fontsize=8)
    return fig


def sweep(plt, data, g):
    fig, ax = plt.subplots(figsize=(7, 4))
    colours = plt.get_cmap("tab20")
    for k, step in enumerate(data.names + [CEILING_TOOL]):
        pts = sorted((int(r["n"]), r["gbps"]) for r in g.sweep if r["step"] == step)
        ceiling = step == CEILING_TOOL
        if pts:
            ax.plot(
                *zip(*pts),
                lw=2 if ceiling else 1.2,
                ls="--" if ceiling else "-",
                label=step,
                color="black" if ceiling else colours(k),
            )
    ax.set(xscale="log", xlabel="n (floats)", ylabel="GB/s", title=f"{g.name}: every step against n")
    ax.legend(fontsize=6, ncol=2)
    return fig


def steps(plt, g):
    fig, ax = plt.subplots(figsize=(7, 3.5))
    colours = ["tab:blue"] * (len(g.records) - 1) + ["black"]  # the library is the last step
    ax.bar([r["step"][:2] for r in g.records], [r["gbps"] for r in g.records], color=colours)
    ax.axhline(peak(g), color="grey", ls=":", lw=1, label="theoretical bandwidth")
    if g.ceiling:
        ax.axhline(g.ceiling["gbps"], color="black", ls="--", lw=1, label="read ceiling")
    ax.legend(fontsize=8, loc="upper left")
    ax.set(xlabel="step", ylabel="GB/s", title=f"{g.name}: every step at n = {count_text(g.records[0]['n'])}")
    return fig


def peak(g):
    """The GPU's theoretical bandwidth, from its table's first record (else its meta)."""
    value = g.records[0].get("peak_gbps", g.meta.get("peak_gbps"))
    if not FIELDS["peak_gbps"](value):
        raise Failure(
            f"{quote(rel(g.dir / 'table.json'))}: its records hold no valid peak_gbps (the GPU's theoretical GB/s)"
        )
    return value


def main(args):
    data = Data()
    for g in data.gpus:
        peak(g)
    todo = plans(data)
    if args.only is not None:
        wanted = args.only.split(",")
        bad = [w for w in wanted if w + ".png" not in todo and w not in todo]
        if not args.only or bad:
            raise UsageError(f"--only: unknown figure {quote((bad or [''])[0], 40)} (known: {', '.join(sorted(todo))})")
        todo = {k: v for k, v in todo.items() if k in wanted or k[:-4] in wanted}
    for name in todo:  # before any is drawn
        check_target(OUT / name)
    plt = _plt()
    files = {OUT / name: _png(plt, draw(plt)) for name, draw in todo.items()}
    write_files(files)
    print(f"figures: wrote {len(files)} file(s) into {OUT.relative_to(ROOT)}")
    return 0
