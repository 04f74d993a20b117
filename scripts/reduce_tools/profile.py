"""profile [STEP]: Nsight Compute on the steps' kernels. Without STEP, every step of the progression at
--n (default 2^24), one launch each, into OUT/<gpu>/progression/profile.csv; with a step beyond it,
each `profile` line of STEP/runs.txt into OUT/<gpu>/STEP/profile/. ncu's durations are its own
(the GPU's own clocks, --clock-control none; caches flushed by ncu): they compare kernels of one run, not runs."""

import csv
import io
import shutil
import subprocess
from pathlib import Path

from . import tables
from .bench import probe
from .common import (
    Failure,
    check_target,
    dump_json,
    exe_path,
    gpu_folder,
    meta_of,
    progress,
    quote,
    step_names,
    write_files,
)
from .runlist import RunList

METRICS = [
    "gpu__time_duration.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
]
SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats"]


def ncu(exe, args, kernels, launches, metrics):
    """ncu's CSV rows (header first) for one run: the progression's counters (metrics), else the
    sections that decide a streaming kernel's speed."""
    cmd = ["ncu", "--csv", "--clock-control", "none", "-k", kernels, "-c", str(launches)]
    cmd += (
        [x for m in METRICS for x in ("--metrics", m)] if metrics else [x for s in SECTIONS for x in ("--section", s)]
    )
    p = subprocess.run(cmd + [str(exe), *args], capture_output=True, text=True)
    rows = list(csv.reader(io.StringIO("\n".join(line for line in p.stdout.splitlines() if line.startswith('"')))))
    if p.returncode != 0 or len(rows) < 2:
        why = [x for x in (p.stderr + p.stdout).splitlines() if "==ERROR==" in x or "==WARNING==" in x]
        why = why[-1:] or ["no counters"]
        raise Failure(f"ncu on {exe.name} {quote(' '.join(args))}: exit {p.returncode}: {why[0]}")
    return rows


def main(args):
    if not shutil.which("ncu"):
        raise Failure("ncu (Nsight Compute) is not on PATH")
    if args.step:
        runs = [(r.name, r.fields[0], r.args) for r in RunList(args.step).of("profile")]
        exe = exe_path(args.build_dir, args.step)
        targets = [(name, exe, a, k) for name, k, a in runs]
        if not targets:
            raise Failure(f"{args.step}/runs.txt lists no profile runs")
    else:
        n = str(args.n)
        targets = [
            (
                s,
                exe_path(args.build_dir, s),
                ["--n", n, "--iters", "1", "--warmup", "0", "--cpu-runs", "0"],
                "regex:reduce_|DeviceReduce",
            )
            for s in step_names()
        ]
    first = probe(targets[0][1])
    if args.out:  # the files, checked before the first run
        folder = Path(args.out) / gpu_folder(first) / (Path(args.step) / "profile" if args.step else "progression")
        names = (folder / "profile.csv", folder / ("meta.json" if args.step else "profile.meta.json"))
        for f in names:
            check_target(f)
    out, header = io.StringIO(), None
    writer = csv.writer(out, lineterminator="\n")
    for name, exe, a, kernels in targets:
        progress(f"profile: {name}")
        rows = ncu(exe, a, kernels, 12 if args.step else 1, metrics=not args.step)
        drop = {i for i, h in enumerate(rows[0]) if h in ("Process ID", "Process Name", "Host Name")}
        keep = lambda row: [x for i, x in enumerate(row) if i not in drop]  # noqa: E731
        if header is None:
            header = ["run" if args.step else "step"] + keep(rows[0])
            writer.writerow(header)
        writer.writerows([name] + keep(r) for r in rows[1:])
    text = out.getvalue()
    print(tables.profile_table(tables.read_profile(text)))
    if args.out:
        meta = dump_json(
            meta_of(first, by="scripts/suite profile", clock_control="none", **({} if args.step else {"n": args.n}))
        )
        write_files(dict(zip(names, (text, meta))))
    return 0
