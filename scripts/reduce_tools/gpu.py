"""gpu OUT: the whole GPU session in one command. Builds a fresh Release tree for sm_90 with Ninja
in BUILD (default OUT/build; -j from CMAKE_BUILD_PARALLEL_LEVEL, else every core), runs every test
(ctest, each GPU test on its own; "huge", the tests that need most of the GPU's memory, one at a
time after the others), compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every
progression step at n = 1 and 100003 and every `sanitize` line of the steps' runs.txt, then the
table, the sweep, each beyond step's measured runs, the profiles and perf/variants' sets, writing
the records under OUT/results/ (copy them into results/) and each part's log under OUT/logs/;
OUT/summary.txt holds one line per part. --parts picks some (each command of a GPU machine may have
to stay short: give --build-dir outside OUT to keep the build between calls, and the same OUT, whose
check.json gathers the parts run at one commit); "ab" (not run by default) is the A/A experiment at
20 sizes and every step against its predecessor at its demo n (the READMEs' gains:
OUT/results/<gpu>/ab/ab.json), logged in logs/ab_aa.log and logs/ab_steps.log. Nothing is made
before a GPU is seen. Progress (each part as it starts, each sanitizer run as it ends) goes to
stderr; stdout gets the summary's lines."""

import concurrent.futures
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from .bench import probe
from .common import (
    ROOT,
    SANITIZE_N,
    Failure,
    NoGpu,
    UsageError,
    dump_json,
    git_commit,
    gpu_count,
    gpu_folder,
    read_beyond,
    meta_of,
    quote,
    progress,
    read_bytes,
    read_json,
    step_names,
    today,
    write_files,
)
from .runlist import SANITIZERS, RunList

PARTS = ("build", "tests", "huge", "sanitizer", "table", "sweep", "measure", "profile", "variants", "ab")
DEFAULT_PARTS = PARTS[:-1]  # ab on request: the A/A rate (20 sizes) and every step against its predecessor
VARIANT_SETS = {"variants.txt": ("atomics", "latency", "tiles"), "ablation.txt": ("ablation",)}  # perf/variants.cu
SUITE = [sys.executable, str(Path(__file__).resolve().parent.parent / "suite")]


class Session:
    def __init__(self, out, build):
        self.out, self.build, self.logs = out, build, out / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.lines, self.ok, self.failed = [], True, []
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast off (the machines' rule)
        os.environ.setdefault("REDUCE_COMMIT", git_commit())

    def note(self, line):
        self.lines.append(line)
        print(line, flush=True)

    def part(self, name, cmd, **kw):
        progress(f"{name}: running (logs/{name}.log)")
        start = time.time()
        p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, **kw)
        write_files({self.logs / f"{name}.log": p.stdout})
        rc = p.returncode
        self.note(f"{name}: exit {rc} ({time.time() - start:.0f} s)")
        self.ok &= rc == 0
        if rc != 0:
            self.failed.append(name)
        return rc


def sanitizer_runs(build):
    """(label, command) of every compute-sanitizer run."""
    runs = []
    for step in step_names():
        for tool in SANITIZERS:
            for n in SANITIZE_N:
                extra = ["--leak-check", "full"] if tool == "memcheck" else []
                runs.append(
                    (
                        f"{tool} {step} --n {n}",
                        [
                            "compute-sanitizer",
                            "--tool",
                            tool,
                            *extra,
                            "--error-exitcode",
                            "99",
                            build / "bin" / step,
                            "--n",
                            str(n),
                            "--iters",
                            "2",
                            "--warmup",
                            "1",
                            "--cpu-runs",
                            "0",
                            "--pattern",
                            "int",
                        ],
                    )
                )
    for step in read_beyond():
        if not (build / "bin" / step).exists() or not (ROOT / step / "runs.txt").exists():
            continue
        for r in RunList(step).of("sanitize"):
            tools = SANITIZERS if r.fields[0] == "all" else r.fields[0].split(",")
            for tool in tools:
                runs.append(
                    (
                        f"{tool} {step} {' '.join(r.args)}",
                        [
                            "compute-sanitizer",
                            "--tool",
                            tool,
                            "--report-api-errors",
                            "no",
                            "--error-exitcode",
                            "99",
                            build / "bin" / step,
                            *r.args,
                        ],
                    )
                )
    return runs


def sanitize(session, jobs):
    runs = sanitizer_runs(session.build)
    start = time.time()
    progress(f"compute-sanitizer: {len(runs)} runs, {jobs} at a time")
    lock, finished = threading.Lock(), [0]

    def one(item):
        label, cmd = item
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        with lock:  # one whole line per run
            finished[0] += 1
            progress(
                f"compute-sanitizer [{finished[0]}/{len(runs)}] {label}: "
                f"{'clean' if p.returncode == 0 else f'exit {p.returncode}'}"
            )
        return label, p.returncode, f"=== {label}\n{p.stdout}{p.stderr}"

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        done = list(pool.map(one, runs))
    write_files({session.logs / "sanitizer.log": "".join(text for _, _, text in done)})
    bad = [f"{label} (exit {rc})" for label, rc, _ in done if rc != 0]
    session.note(
        f"compute-sanitizer: {len(runs) - len(bad)} of {len(runs)} runs clean ({time.time() - start:.0f} s)"
        + (f"; first failure: {bad[0]}" if bad else "")
    )
    session.ok &= not bad
    return f"clean ({len(runs)} runs)" if not bad else f"{len(bad)} of {len(runs)} runs failed"


def tests(session, huge=False):
    """ctest without the Huge tests (a job a core, up to 32) or the Huge tests one at a time; a skip for any
    reason but too few GPUs fails the session."""
    name = "huge" if huge else "tests"
    junit = session.logs / f"junit_{name}.xml"
    jobs = "1" if huge else str(min(32, os.cpu_count() or 4))  # a core each: the CPU references dominate
    session.part(
        name,
        [
            "ctest",
            "--test-dir",
            session.build,
            "-j",
            jobs,
            "-L" if huge else "-LE",
            "huge",
            "--timeout",
            "900",
            "--output-junit",
            junit,
        ],
    )
    log = read_bytes(session.logs / f"{name}.log", 1 << 30).decode(errors="replace")
    summary = (re.findall(r"^\d+% tests passed.*$", log, re.M) or ["no ctest summary"])[-1]
    failed = re.findall(
        r"^\s*\d+ - (\S+) \((?:Failed|Timeout|Exception|SEGFAULT)[^)]*\)", log, re.M
    )  # ctest's closing list
    if failed:
        summary += f" (failed: {', '.join(failed[:5])}{', ...' if len(failed) > 5 else ''})"
    skips = subprocess.run([*SUITE, "skips", junit, "--allow", "needs [0-9]+ GPUs"], capture_output=True, text=True)
    write_files({session.logs / f"skips_{name}.txt": skips.stdout + skips.stderr})
    if skips.returncode != 0:
        session.note(
            f"{name}: a test skipped on the GPU machine for a reason other than too few GPUs (logs/skips_{name}.txt)"
        )
        session.ok = False
    skipped = skips.stdout.splitlines()[0].removesuffix(", for these reasons:") if skips.stdout else ""
    skipped = "" if skipped.startswith("0 of") else skipped
    return summary + (f" ({skipped})" if skipped else "")


def variants(session, build, where, first):
    """perf/variants.cu's sets as text (the READMEs' variants:SET and ablation:GPU blocks), each file
    with its provenance beside it."""
    files = {}
    for name, sets in VARIANT_SETS.items():
        texts = []
        for one in sets:
            p = subprocess.run(
                [build / "bin" / "perf" / "perf_variants", one, "--format", "text"], capture_output=True, text=True
            )
            write_files({session.logs / f"variants_{one}.log": p.stdout + p.stderr})
            session.note(f"variants {one}: exit {p.returncode}")
            session.ok &= p.returncode == 0
            texts.append(p.stdout.rstrip())
        if session.ok:
            files[where / name] = "\n\n".join(texts) + "\n"
            meta = dict(meta_of(first), by="perf/variants.cu (scripts/suite gpu)")
            files[where / name.replace(".txt", ".meta.json")] = dump_json(meta)
    write_files(files)


def newest_cccl():
    """-DCCCL_DIR=... from $CCCL_DIR, else where the newest CCCL was unpacked into .cccl/
    (docs/reference.md says how)."""
    if os.environ.get("CCCL_DIR"):
        return [f"-DCCCL_DIR={os.environ['CCCL_DIR']}"]
    cccl = Path(ROOT) / ".cccl" / "nvidia" / "cu13" / "cccl" / "lib" / "cmake" / "cccl"
    return [f"-DCCCL_DIR={cccl}"] if cccl.is_dir() else []


def main(args):
    parts = args.parts or list(DEFAULT_PARTS)
    count = gpu_count()  # before any folder is made: no GPU, nothing written
    out = Path(args.out).resolve()
    build = Path(args.build_dir).resolve() if args.build_dir else out / "build"
    s = Session(out, build)
    s.note(f"GPUs: {count}; commit {os.environ['REDUCE_COMMIT']}; {today()}")
    results = out / "results"
    if "build" in parts:
        rc = s.part(
            "configure",
            [
                "cmake",
                "-S",
                ROOT,
                "-B",
                build,
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DCMAKE_CUDA_ARCHITECTURES=90",
                "-DREDUCE_GPU_TESTS=each",
                "-DREDUCE_BUILD_PERF=ON",
                *newest_cccl(),
            ],
        )
        jobs = [] if os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") else ["--parallel", str(os.cpu_count() or 1)]
        if rc != 0 or s.part("build", ["cmake", "--build", build, *jobs]) != 0:
            raise Failure(f"the build failed (see {s.logs})")
    check = {}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # the sanitizer beside the tests: neither is timed
        sanitizer = pool.submit(sanitize, s, args.sanitizer_jobs) if "sanitizer" in parts else None
        if "tests" in parts:
            check["tests"] = tests(s)
        if "huge" in parts:
            check["huge"] = tests(s, huge=True)
        if sanitizer:
            check["sanitizer"] = sanitizer.result()
    common = ["--no-build", "--build-dir", build, "--out", results]
    if "table" in parts:
        s.part("table", [*SUITE, "run", *common])
    if "sweep" in parts:
        s.part("sweep", [*SUITE, "sweep", *common])
    if "measure" in parts:
        for step in read_beyond():
            if not (build / "bin" / step).exists():
                s.note(f"measure {step}: not built here, left out")
                continue
            only = []
            if step.startswith("16_") and count < 2:  # one GPU: the virtual ranks only
                only = [
                    "--only",
                    ",".join(r.name for r in RunList(step).of("measure") if r.name.startswith(("repro_v", "exact_v"))),
                ]
            s.part(f"measure_{step}", [*SUITE, "measure", step, "--build-dir", build, "--out", results, *only])
    if "profile" in parts:
        s.part("profile", [*SUITE, "profile", "--build-dir", build, "--out", results])
        for step in read_beyond():
            if (build / "bin" / step).exists() and RunList(step).of("profile"):
                s.part(f"profile_{step}", [*SUITE, "profile", step, "--build-dir", build, "--out", results])
    try:  # the GPU's folder, as the records name it
        first = probe(build / "bin" / step_names()[0])
        where = results / gpu_folder(first) / "progression"
    except (Failure, UsageError, NoGpu):
        first, where = {}, results
    if "variants" in parts:
        variants(s, build, where, first)
    if "ab" in parts:
        common = ["--no-build", "--build-dir", build, "--rounds", "5"]
        s.part("ab_aa", [*SUITE, "ab", "10", "--aa", "--range", "10:29", *common])
        s.part("ab_steps", [*SUITE, "ab", *[n[:2] for n in step_names()[1:]], *common, "--out", results])
    if check:  # with the parts an earlier call of this session ran at the same commit into the same OUT
        held = read_json(where / "check.json", dict) if os.path.lexists(where / "check.json") else {}
        if held.get("commit") != os.environ["REDUCE_COMMIT"]:
            held = {}
        write_files(
            {where / "check.json": dump_json({**held, **check, "commit": os.environ["REDUCE_COMMIT"], "date": today()})}
        )
    s.note(f"gpu: {'PASS' if s.ok else 'FAIL'}")
    write_files({out / "summary.txt": "\n".join(s.lines) + "\n"})
    if not s.ok:  # the one line on stderr, as for every failure (the summary may be on a lost stdout)
        raise Failure(f"FAIL: {', '.join(s.failed) or 'a check'} (see {quote(str(out / 'summary.txt'), 80)})")
    return 0
