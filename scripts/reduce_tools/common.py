"""What every subcommand shares: the repository's paths, the step lists, exit codes, checked option
values, all-or-nothing writes and running the step executables.

Exit codes of every subcommand: 0 done, 1 a failure (one line says what), 2 bad usage (one line
names the problem), 77 no usable GPU. Nothing prints a traceback; a closed stdout ends quietly.
"""

import datetime
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

# REDUCE_ROOT: another tree laid out like this one (the tests build small ones).
ROOT = Path(os.environ.get("REDUCE_ROOT") or Path(__file__).resolve().parent.parent.parent).resolve()
RESULTS = ROOT / "results"
MAX_N = 1 << 36
CEILING_TOOL = "read_ceiling"
SANITIZE_N = (1, 100003)  # the progression's compute-sanitizer sizes: one element, and a few blocks and a tail


class UsageError(Exception):
    """Bad usage: exit 2."""


class Failure(Exception):
    """Anything else that fails: exit 1."""


class NoGpu(Exception):
    """No usable GPU: exit 77."""


def run_main(prog, main, argv):
    """main(argv) with its exceptions turned into one line on stderr and the exit code."""
    try:
        code, message = main(argv), None
    except UsageError as e:
        code, message = 2, str(e)
    except Failure as e:
        code, message = 1, str(e)
    except NoGpu as e:
        code, message = 77, str(e)
    except KeyboardInterrupt:
        code, message = 130, "interrupted"
    except BrokenPipeError:
        code, message = 141, None
    except Exception as e:  # a bug or an unexpected state of the machine: still one line
        code, message = 1, f"{type(e).__name__}: {e}"
    if message:
        print(f"{prog}: {message}", file=sys.stderr)
    if sys.stdout is None:  # started with stdout closed: nothing to flush
        return code
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: not an error to report
        code = code or 141
    except OSError as e:  # a full disk or device: the output is lost
        print(f"{prog}: standard output: {e.strerror}", file=sys.stderr)
        code = code or 1
    # Python flushes stdout again at exit; a closed pipe would print a traceback there.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


# --- option values -------------------------------------------------------------------------------

def parse_int(text, what, lo, hi):
    """An ASCII decimal integer from lo to hi (at most 20 digits read: 5,000 digits are refused)."""
    if not re.fullmatch(r"[0-9]{1,20}", text or "", re.ASCII) or not lo <= int(text) <= hi:
        raise UsageError(f"{what}: expected an integer from {lo} to {hi}, got '{text[:40]}'")
    return int(text)


def parse_count(text, what="--n"):
    """A count as the executables take it: 1000, 4K, 16M, 1G or 2^k, at most 2^36."""
    m = re.fullmatch(r"2\^([0-9]{1,2})|([0-9]{1,12})([KMG]?)", text or "", re.ASCII)
    value = None
    if m and m.group(1) is not None:
        value = 1 << int(m.group(1))
    elif m:
        value = int(m.group(2)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(3)]
    if value is None or value > MAX_N:
        raise UsageError(f"{what}: expected a count from 0 to 2^36 (1000, 4K, 16M, 1G or 2^20), got '{text[:40]}'")
    return value


def parse_range(text, what, lo=0, hi=36):
    """MIN:MAX exponents with lo <= MIN <= MAX <= hi."""
    m = re.fullmatch(r"([0-9]{1,2}):([0-9]{1,2})", text or "", re.ASCII)
    if not m or not lo <= int(m.group(1)) <= int(m.group(2)) <= hi:
        raise UsageError(f"{what}: expected MIN:MAX with {lo} <= MIN <= MAX <= {hi}, got '{text[:40]}'")
    return int(m.group(1)), int(m.group(2))


def count_text(n):
    """2^k for a power of two, else the number."""
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


# --- the steps -----------------------------------------------------------------------------------

def read_steps(path=None):
    """steps.txt as [(step, demo n)] in teaching order: "NN_name  2^k" per line, # comments."""
    path = Path(path or ROOT / "steps.txt")
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror}") from None
    steps = []
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or not re.fullmatch(r"[0-9]{2}_[A-Za-z0-9_]+", words[0]):
            raise Failure(f"{path}:{number}: expected 'NN_name DEMO_N', got '{line.strip()}'")
        try:
            steps.append((words[0], parse_count(words[1], f"{path.name}:{number}: demo n")))
        except UsageError as e:
            raise Failure(str(e)) from None
    if len({s for s, _ in steps}) != len(steps) or len(steps) < 2:
        raise Failure(f"{path}: expected two or more distinct steps, the library last")
    return steps


def step_names():
    return [s for s, _ in read_steps()]


def read_beyond(path=None):
    path = Path(path or ROOT / "beyond.txt")
    if not path.is_file():
        return []
    return [s for s in (line.split("#", 1)[0].strip() for line in path.read_text().splitlines()) if s]


def resolve_step(spec, steps, what="step"):
    """A step by number (7, 07), by name, or by name without its number."""
    spec = (spec or "").strip()
    found = [s for s in steps if spec in (s, s.split("_", 1)[-1])
             or (spec.isdigit() and len(spec) <= 2 and s[:2] == spec.zfill(2))]
    if len(found) != 1:
        raise UsageError(f"{what}: unknown step '{spec[:40]}' (known: {steps[0]} ... {steps[-1]})")
    return found[0]


# --- writing -------------------------------------------------------------------------------------

def check_can_create(folder, what):
    """folder is a folder or can be made (its nearest existing ancestor is a writable folder)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{what}: {folder} is not a folder")
    parent = folder
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"{what}: cannot create {folder} ({parent} is not a writable folder)")


def write_files(files):
    """Writes {path: text or bytes} all or nothing. A regular file (or a new one) is written to a
    temporary file beside it and renamed over it only when every file is ready; a rename that fails
    puts back the ones before it. A device, FIFO or symlink is never replaced: a symlink or a
    character device is written in place after all the others are ready, anything else is refused."""
    temps, in_place = [], []
    try:
        for path, data in files.items():
            path = Path(path)
            data = data if isinstance(data, bytes) else data.encode()
            try:
                mode = os.lstat(path).st_mode if os.path.lexists(path) else None
                if mode is not None and not stat.S_ISREG(mode):
                    if stat.S_ISLNK(mode) or stat.S_ISCHR(mode):
                        in_place.append((path, data))
                        continue
                    raise Failure(f"cannot write {path}: not a regular file; nothing written")
                if mode is not None and not os.access(path, os.W_OK):
                    raise PermissionError(13, "Permission denied")
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                temps.append((Path(tmp), path))
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o644)
            except OSError as e:
                raise Failure(f"cannot write {path}: {e.strerror or e}; nothing written") from None
        _rename_all(temps)
        temps = []
        for path, data in in_place:
            try:
                with open(path, "wb") as f:
                    f.write(data)
            except OSError as e:
                raise Failure(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)


def _rename_all(pairs):
    done, backups = [], {}
    try:
        for tmp, path in pairs:
            if path.exists():
                backups[path] = path.with_name(f".{path.name}.old")
                os.link(path, backups[path])  # the old contents, until all are renamed
            os.replace(tmp, path)
            done.append(path)
    except OSError as e:
        for p in done:
            os.replace(backups.pop(p), p) if p in backups else p.unlink()
        raise Failure(f"cannot write {path}: {e.strerror or e}; nothing written") from None
    finally:
        for b in backups.values():
            b.unlink(missing_ok=True)


def dump_json(value):
    return json.dumps(value, indent=1) + "\n"


def read_json(path):
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise Failure(f"{path}: not JSON ({e})") from None


def read_json_lines(path):
    """A file of JSON objects, one per line."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise Failure(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                raise Failure(f"{path}:{number}: not a JSON record") from None
            if not isinstance(out[-1], dict):
                raise Failure(f"{path}:{number}: not a JSON object")
    return out


# --- provenance ----------------------------------------------------------------------------------

def git_commit():
    """$REDUCE_COMMIT, else git's HEAD (12 digits, +dirty when tracked files differ), else unknown."""
    if os.environ.get("REDUCE_COMMIT"):
        return os.environ["REDUCE_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty else "") if head.returncode == 0 else "unknown"


def today():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def meta_of(record, **extra):
    """The provenance of a measurement, from its first record."""
    return {"device": record.get("device"), "cuda_runtime": record.get("cuda_runtime"),
            "cuda_driver": record.get("cuda_driver"), "peak_gbps": record.get("peak_gbps"),
            "date": today(), "commit": git_commit(), **extra}


def gpu_folder(record):
    """h200, h100, ... from the device name; _x<N> for a record over N GPUs."""
    name = str(record.get("device", "unknown")).lower().replace("-", " ").split()
    short = next((w for w in name if any(c.isdigit() for c in w)), "gpu")
    gpus = record.get("gpus", 1)
    return short + (f"_x{gpus}" if isinstance(gpus, int) and gpus > 1 else "")


# --- running the executables ---------------------------------------------------------------------

def exe_path(build, name):
    exe = Path(build) / "bin" / name
    if not os.access(exe, os.X_OK) or exe.is_dir():
        raise UsageError(f"no executable {exe}: build first (scripts/suite run builds build/release)")
    return exe


def run_records(cmd, what, timeout=None):
    """Runs cmd (a step with --format json); returns its records. 77 and 2 stop everything; another
    failure without a record raises Failure; a record that did not pass is returned as it is."""
    try:
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    except OSError as e:
        raise Failure(f"{what}: cannot run it: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise Failure(f"{what}: no result within {timeout} s") from None
    err = p.stderr.strip().splitlines()
    last = err[-1] if err else f"exit {p.returncode}"
    if p.returncode == 77:
        raise NoGpu(f"no usable GPU: {last}")
    if p.returncode == 2:
        raise UsageError(f"{what}: {last}")
    records = []
    for line in p.stdout.splitlines():
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                raise Failure(f"{what}: a line of its output is not JSON: {line[:60]}") from None
    if not records:
        raise Failure(f"{what}: exit {p.returncode} and no record: {last}")
    return records


def gpu_count():
    """How many GPUs nvidia-smi lists; NoGpu where none (checked before any folder is made)."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    except OSError:
        raise NoGpu("no GPU: nvidia-smi is not installed") from None
    count = sum(1 for line in p.stdout.splitlines() if line.startswith("GPU "))
    if p.returncode != 0 or not count:
        raise NoGpu("no GPU: nvidia-smi lists none")
    return count


def progress(text):
    print(text, file=sys.stderr, flush=True)
