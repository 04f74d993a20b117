"""figures: the suite's figures, drawn from the records under results/ into docs/figures/ (matplotlib):
  gain_<step>.png   the step's time against the previous step's at every n of the sweeps, one line per GPU
  sweep_<gpu>.png   GB/s against n for every step, with the read ceiling
  steps_<gpu>.png   every step's GB/s at the table's n, the read ceiling as a line
  crossover_<gpu>.png  16_multi_gpu: time against n in each mode, a line per GPU count and one for the
                    mode's step alone on one GPU (timed in the same rounds), from every machine of that GPU
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
    for gpu, folders in crossover_folders(data).items():
        out[f"crossover_{gpu}.png"] = lambda plt, gpu=gpu, f=folders: crossover(plt, gpu, f)
    return out


MULTI_GPU = "16_multi_gpu"
MODES = {"ordinary": ("single_process",), "reproducible": ("reproducible",), "exact": ("exact",)}


def crossover_folders(data):
    """{gpu: 16's record folders of every machine of that GPU (h200, h200_x2, h200_x4)} where a sweep of
    one mode holds more than one n on more than one GPU."""
    out = {}
    for b in data.beyond.get(MULTI_GPU, []):
        out.setdefault(b.folder.parent.name.split("_x")[0], []).append(b)
    return {gpu: bs for gpu, bs in out.items() if any(len(lines) > 1 for lines in crossover_lines(bs).values())}


def crossover_lines(folders):
    """{(mode, label): {n: median ms}}: a line per GPU count of each mode (records over the whole array,
    no virtual ranks, one process), and per mode its step alone on one GPU; the first record of a point wins."""
    lines = {}
    for b in folders:
        for _, records in b.results:
            for r in records:
                mode = next((m for m, names in MODES.items() if r.get("mode") in names), None)
                if mode is None or r.get("n_per_gpu") or not isinstance(r.get("gpus"), int):
                    continue
                n = int(r["n"])
                lines.setdefault((mode, f"{r['gpus']} GPU" + "s" * (r["gpus"] > 1)), {}).setdefault(n, r["median_ms"])
                if r.get("single_gpu_median_ms"):
                    lines.setdefault((mode, "1 GPU, the step alone"), {}).setdefault(n, r["single_gpu_median_ms"])
    return {k: v for k, v in lines.items() if len(v) > 1}


def crossover(plt, gpu, folders):
    lines = crossover_lines(folders)
    fig, axes = plt.subplots(1, len(MODES), figsize=(12, 3.6), sharey=True)
    for ax, mode in zip(axes, MODES):
        for (m, label), points in sorted(lines.items(), key=lambda kv: (kv[0][1].endswith("alone"), kv[0][1])):
            if m == mode:
                ns = sorted(points)
                alone = label.endswith("alone")
                ax.plot(
                    ns,
                    [points[n] for n in ns],
                    marker="" if alone else "o",
                    ms=3,
                    lw=2 if alone else 1.2,
                    ls="--" if alone else "-",
                    color="black" if alone else None,
                    label=label,
                )
        ax.set_xscale("log", base=2)  # ticks 2^k, as the runs name their sizes
        ax.set(yscale="log", xlabel="n (floats in all)", title=mode)
        ax.grid(True, which="major", lw=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    axes[0].set_ylabel("median ms (L2 flushed)")
    name = label_of(folders)
    fig.suptitle(
        f"{MULTI_GPU} on {name}: time against n; more GPUs pay where their line is under the step alone", fontsize=9
    )
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
