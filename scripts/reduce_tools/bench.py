"""Running the steps on a GPU: the build, the progression's table (run), the lecture, the sweep, a
beyond step's measured runs (measure) and interleaved A/B and A/A experiments (ab)."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import stats, tables
from .common import (
    CEILING_TOOL,
    ROOT,
    Failure,
    UsageError,
    check_folder,
    check_target,
    count_text,
    dump_json,
    exe_path,
    gpu_folder,
    meta_of,
    progress,
    quote,
    read_json,
    read_steps,
    records_of,
    run_records,
    write_files,
)
from .runlist import RunList


def build(build_dir, steps, ceiling=True):
    """Configures build_dir once (Release; CMake picks the GPU it sees, else sm_75..sm_90), without the
    tests, so that no GoogleTest is needed (the test workflow's preset turns them on in the same
    folder), then builds only the steps to run and the read ceiling. -j from CMAKE_BUILD_PARALLEL_LEVEL,
    else the cores, at most 8."""
    check_folder(build_dir, "--build-dir")
    if not shutil.which("cmake"):
        raise Failure("cmake is not on PATH (it builds the suite; --no-build runs what is built)")
    build_dir = Path(build_dir)
    if not (build_dir / "CMakeCache.txt").exists():
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        _cmake(["cmake", "-S", ROOT, "-B", build_dir, *gen, "-DCMAKE_BUILD_TYPE=Release", "-DREDUCE_BUILD_TESTS=OFF"])
    jobs = [] if os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") else ["--parallel", str(min(os.cpu_count() or 1, 8))]
    targets = [*dict.fromkeys(steps), *([CEILING_TOOL] if ceiling else [])]
    progress(f"build: {len(targets)} targets in {build_dir} ({', '.join(targets)})")
    _cmake(["cmake", "--build", build_dir, *jobs, "--target", *targets])


def _cmake(cmd):
    rc = subprocess.run([str(c) for c in cmd], cwd=ROOT, stdout=sys.stderr).returncode
    if rc != 0:
        raise Failure(f"build failed: {' '.join(str(c) for c in cmd)} exited with {rc}")


def probe(exe, extra=()):
    """One tiny run before anything else: 77 without a GPU, 2 for options the step refuses."""
    return run_records(
        [exe, "--n", "1", "--iters", "1", "--warmup", "0", "--cpu-runs", "0", "--format", "json", *extra], exe.name
    )[0]


def one(exe, n, extra=(), iters=None, cpu=False):
    """One step's record at n, with iters timed runs (else the step's default); the CPU sum is timed
    only for the table (cpu), whose column compares with it."""
    timing = (["--iters", str(iters), "--warmup", "5"] if iters else []) + ([] if cpu else ["--cpu-runs", "0"])
    return run_records([exe, "--n", str(n), "--format", "json", *timing, *extra], f"{exe.name} --n {count_text(n)}")[0]


def ceiling(build, n, iters=None):
    exe = Path(build) / "bin" / CEILING_TOOL
    if not os.access(exe, os.X_OK):
        return None
    timing = ["--iters", str(iters)] if iters else []
    return run_records([exe, "--n", str(n), "--format", "json", *timing], CEILING_TOOL)[0]


def sweep_iters(n):
    """Timed runs per point: many where a run takes microseconds, fewer where it takes milliseconds."""
    return 200 if n <= 1 << 20 else 50 if n <= 1 << 26 else 20


def write_under(out, folder, files):
    """files {name: text} into OUT/<gpu>/<folder>/ all or nothing; the folder is made only now, once
    the records have named the GPU."""
    target = Path(out) / folder
    write_files({target / name: text for name, text in files.items()})
    progress(f"wrote {target}: {', '.join(files)}")


# --- the progression ---------------------------------------------------------------------------


def run(args):
    steps = [s for s, _ in read_steps()]
    chosen = args.steps or steps
    if args.out is not None and chosen != steps:
        raise UsageError("--out writes the whole table: leave out --steps")
    if not args.no_build:
        build(args.build_dir, chosen)
    exes = [exe_path(args.build_dir, s) for s in chosen]
    first = [probe(exe, args.extra) for exe in exes][0]  # every step takes the options after --, before any is timed
    if args.out:
        check_target(Path(args.out) / gpu_folder(first) / "progression" / "table.json")
    records, failed = [], False
    for k, exe in enumerate(exes, 1):
        progress(f"[{k}/{len(exes)}] {exe.name} ...")
        records.append(one(exe, args.n, args.extra, cpu=True))
        failed |= not tables.passed(records[-1])
    ceil = ceiling(args.build_dir, args.n)
    r0 = records[0]
    print(
        f"{r0['device']}, CUDA {r0.get('cuda_runtime')}, theoretical DRAM {r0.get('peak_gbps', 0):.0f} GB/s; "
        f"n = {count_text(r0['n'])} floats, pattern {r0.get('pattern')}, median of {r0.get('iters')} runs, "
        "L2 flushed before each"
    )
    print(tables.text(*tables.speedup_table(records, ceil)))
    if args.out:
        table = {"meta": meta_of(r0, n=args.n, args=args.extra), "records": records}
        if ceil:
            table["ceiling"] = ceil
        write_under(args.out, Path(gpu_folder(r0)) / "progression", {"table.json": dump_json(table)})
    return 1 if failed else 0


def lecture(args):
    """Every step at its demo n, each row printed as its step finishes, beside the step before it at
    the same n (the lesson's gain) and the read ceiling there. Writes nothing."""
    steps = read_steps()
    if not args.no_build:
        build(args.build_dir, [s for s, _ in steps])
    exes = {s: exe_path(args.build_dir, s) for s, _ in steps}
    probe(exes[steps[0][0]])
    start = time.time()
    head = ["step", "n", "median ms", "GB/s", "% ceiling", "previous GB/s", "gain", "check"]
    widths = [20, 6, 10, 8, 9, 13, 7, 5]

    def line(cells):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    print(line(head) + "\n" + "  ".join("-" * w for w in widths), flush=True)
    cache, ceilings, failed = {}, {}, False

    def get(step, n):  # a step at n, run once (the previous step at the same demo n is reused)
        if (step, n) not in cache:
            cache[step, n] = one(exes[step], n, iters=args.iters)
        return cache[step, n]

    for k, (step, n) in enumerate(steps, 1):
        if k > 1 and n != steps[k - 2][1]:  # said in the table, where the class reads it
            print(
                f"-- n changes to {count_text(n)}: {step}'s lesson shows there; the previous step runs again at it",
                flush=True,
            )
        progress(f"[{k}/{len(steps)}] {step} at n = {count_text(n)} ...")
        r = get(step, n)
        prev = get(steps[k - 2][0], n) if k > 1 else None
        if n not in ceilings:
            ceilings[n] = ceiling(args.build_dir, n, args.iters)
        c = ceilings[n]
        failed |= not tables.passed(r)
        print(
            line(
                [
                    step,
                    count_text(n),
                    f"{r['median_ms']:.4f}",
                    f"{r['gbps']:.1f}",
                    f"{100 * r['gbps'] / c['gbps']:.1f}" if c else "-",
                    f"{prev['gbps']:.1f}" if prev else "-",
                    f"{prev['median_ms'] / r['median_ms']:.2f}x" if prev else "-",
                    "PASS" if tables.passed(r) else "FAIL",
                ]
            ),
            flush=True,
        )
    progress(f"lecture: {len(steps)} steps in {time.time() - start:.0f} s")
    return 1 if failed else 0


def sweep(args):
    steps = [s for s, _ in read_steps()]
    if not args.no_build:
        build(args.build_dir, steps)
    exes = [exe_path(args.build_dir, s) for s in steps]
    first = probe(exes[0])
    memory = first.get("memory_bytes") or float("inf")
    lo, hi = args.range
    sizes = [1 << k for k in range(lo, hi + 1) if (1 << k) * 4 <= memory / 2]
    if not sizes:
        raise Failure(f"--range: no size fits in half of the GPU's {memory / 1e9:.0f} GB")
    folder = Path(gpu_folder(first)) / "progression"
    held_file = check_target(Path(args.out) / folder / "sweep.json") if args.out else None
    held = records_of(read_json(held_file), quote(held_file), ("n",)) if held_file and held_file.exists() else []
    other = sorted({int(p["n"]) for p in held if int(p["n"]) not in sizes})
    if other and not args.add:
        raise UsageError(
            f"--out: {quote(held_file)} holds sizes this --range leaves out (2^{other[0].bit_length() - 1}, ...); "
            "give --add to keep them, or write to another --out"
        )
    points, failed = [], False
    for n in sizes:
        for exe in exes:
            points.append(one(exe, n, iters=sweep_iters(n)))
            failed |= not tables.passed(points[-1])
            progress(f"sweep 2^{n.bit_length() - 1:<2} {exe.name:<20} {points[-1]['gbps']:8.1f} GB/s")
        c = ceiling(args.build_dir, n, sweep_iters(n))
        if c:
            points.append(dict(c, step=CEILING_TOOL, passed=True))
    if args.out:
        if args.add:  # a sweep measured in parts
            points = sorted([p for p in held if int(p["n"]) not in sizes] + points, key=lambda p: int(p["n"]))
        write_under(args.out, folder, {"sweep.json": dump_json({"meta": meta_of(points[0]), "records": points})})
    return 1 if failed else 0


# --- a step beyond the progression ----------------------------------------------------------------


def mpi_command(exe, ranks):
    """mpirun -np RANKS EXE, or (None, why) where it cannot run here."""
    from .common import gpu_count

    mpirun = shutil.which("mpirun")
    if not os.access(exe, os.X_OK):
        return None, f"no {quote(exe)} (configure found no MPI)"
    if mpirun is None:
        return None, "no mpirun on PATH"
    np = str(gpu_count()) if ranks == "all" else ranks
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")  # Open MPI refuses root (containers) unless told
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return [mpirun, "--bind-to", "none", "-np", np, exe], ""


def with_option(args, name, value):
    """args with every `name v` / `name=v` replaced by `name value` at the end."""
    out, i = [], 0
    while i < len(args):
        if args[i] == name:
            i += 2
            continue
        if not args[i].startswith(name + "="):
            out.append(args[i])
        i += 1
    return out + [name, value]


def measure(args):
    plan = RunList(args.step)
    runs = plan.of("measure")
    if args.only is not None:
        names = [r.name for r in runs]
        wanted = args.only.split(",")
        bad = [w for w in wanted if w not in names]
        if not args.only or bad:
            raise UsageError(
                f"--only: unknown run {quote((bad or [''])[0], 40)} ({args.step}/runs.txt measures {', '.join(names)})"
            )
        runs = [r for r in runs if r.name in wanted]
    if not runs:
        raise Failure(f"{args.step}/runs.txt lists no measure runs")
    exe = exe_path(args.build_dir, args.step)
    results, ceilings, skipped = [], {}, []
    for r in runs:
        cmd = [exe]
        if r.fields:
            cmd, why = mpi_command(Path(args.build_dir) / "bin" / f"{args.step}_mpi", r.fields[0].split()[1])
            if cmd is None:
                progress(f"measure: {r.name} skipped: {why}")
                skipped.append(f"{r.name} ({why})")
                continue
        a = list(r.args)
        for name, value in (("--n", args.n), ("--iters", args.iters)):
            if value is not None:
                a = with_option(a, name, str(value))
        progress(f"measure: {args.step} {r.name}")
        records = run_records(cmd + with_option(a, "--format", "json"), f"{args.step} {r.name}")
        results.append((r.name, records))
        if args.out and len(results) == 1:  # the files, checked before the next run
            for name in [x.name + ".json" for x in runs] + ["meta.json"]:
                check_target(Path(args.out) / gpu_folder(records[0]) / args.step / name)
        for rec in records:
            b = int(rec.get("bytes", 0))
            if plan.ceiling and b >= 4 and b not in ceilings:
                ceilings[b] = ceiling(args.build_dir, b // 4, args.iters or rec.get("iters"))
    if not results:
        raise Failure(f"every run of {args.step} was skipped: {'; '.join(skipped)}")
    print(tables.beyond_table(plan, results, {b: c for b, c in ceilings.items() if c}))
    bad = [f"{name} (n = {r.get('n')})" for name, rs in results for r in rs if not tables.passed(r)]
    if bad:
        raise Failure(f"{len(bad)} record(s) failed, first {bad[0]}; nothing written")
    if args.out:
        widest = max((r for _, rs in results for r in rs), key=lambda r: r.get("gpus", 1))
        files = {f"{name}.json": "".join(dump_json(r).replace("\n", "") + "\n" for r in rs) for name, rs in results}
        files.update({f"read_ceiling_{b}.json": dump_json(c) for b, c in ceilings.items() if c})
        files["meta.json"] = dump_json(
            meta_of(
                results[0][1][0],
                step=args.step,
                runs=[n for n, _ in results],
                **({"skipped": skipped} if skipped else {}),
            )
        )
        folder = Path(args.out) / gpu_folder(widest) / args.step
        others = sorted(p.name for p in folder.glob("*.json") if p.name not in files)
        if others and (args.only is not None or skipped):
            raise Failure(
                f"{quote(folder)} holds records this partial run did not measure ({others[0]}, ...); nothing "
                "written: write a partial run to another --out"
            )
        write_under(args.out, folder.relative_to(args.out), files)
        for old in folder.glob("*.json"):  # the folder holds the current run only
            if old.name not in files:
                old.unlink()
    return 0


# --- interleaved A/B and A/A ------------------------------------------------------------------------


def ab(args):
    """Each STEP against --against (default: its predecessor in steps.txt; with --aa, itself) at the
    sizes asked (default: the step's demo n), in interleaved rounds; a verdict per point, and for
    --aa the share of points that read "within noise" (the false-positive rate is the rest)."""
    steps = read_steps()
    names = [s for s, _ in steps]
    if not args.aa and not args.against and names[0] in args.steps:
        raise UsageError(f"{names[0]} is the first step, with none before it: give --against")
    pairs = [(step if args.aa else args.against or names[names.index(step) - 1], step) for step in args.steps]
    if not args.no_build:
        build(args.build_dir, [s for p in pairs for s in p], ceiling=False)
    exes = {s: exe_path(args.build_dir, s) for p in pairs for s in p}
    first = probe(exes[pairs[0][0]])
    if args.out and args.aa:
        raise UsageError("--out keeps gains against another step: an A/A (--aa) writes nothing")
    target = Path(args.out) / gpu_folder(first) / "ab" / "ab.json" if args.out else None
    if target:
        check_target(target)
    sizes = lambda step: args.sizes or [dict(steps)[step]]  # noqa: E731
    samples = {}  # (old, new, n) -> ([rounds of old], [rounds of new])
    for k in range(args.rounds):
        for old, new in pairs:
            for n in sizes(new):
                a_b = [(0, old), (1, new)] if k % 2 == 0 else [(1, new), (0, old)]  # the order turns each round
                slot = samples.setdefault((old, new, n), ([], []))
                for side, step in a_b:
                    r = one(exes[step], n, iters=args.iters)
                    if not tables.passed(r):
                        raise Failure(f"{step} at n = {count_text(n)} did not pass")
                    slot[side].append(stats.samples_of(r))
        progress(f"ab: round {k + 1} of {args.rounds} done")
    print(f"{'B':<20} {'against A':<20} {'n':>6}  {'B/A time':>9}  95% interval    verdict")
    calm, records = 0, []
    for (old, new, n), (a, b) in samples.items():
        got = stats.ratio_interval(a, b)
        if got is None:
            raise Failure(f"{new}: its records keep no samples (rebuild: common/report.cpp writes samples_ms)")
        ratio, low, high, verdict = got
        calm += verdict == "within noise"
        print(f"{new:<20} {old:<20} {count_text(n):>6}  {ratio:9.4f}  [{low:.4f}, {high:.4f}]  {verdict}")
        records.append(
            {
                "step": new,
                "against": old,
                "n": n,
                "ratio": ratio,
                "low": low,
                "high": high,
                "verdict": verdict,
                "a_ms": stats.median([x for r in a for x in r]),
                "b_ms": stats.median([x for r in b for x in r]),
            }
        )
    if target:  # the records of other pairs and sizes already there are kept
        kept = records_of(read_json(target, dict), quote(str(target)), ()) if target.is_file() else []
        mine = {(r["step"], r["against"], r["n"]) for r in records}
        kept = [r for r in kept if (r.get("step"), r.get("against"), r.get("n")) not in mine]
        ab_file = {"meta": meta_of(first, rounds=args.rounds, iters=args.iters), "records": kept + records}
        write_under(args.out, Path(gpu_folder(first)) / "ab", {"ab.json": dump_json(ab_file)})
    if args.aa:
        print(
            f"A/A: {calm} of {len(samples)} points within noise: false-positive rate "
            f"{100 * (len(samples) - calm) / len(samples):.1f}%"
        )
    return 0
