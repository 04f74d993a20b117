"""What every subcommand shares: the repository's paths, the step lists, exit codes, checked option
values, messages, reading and writing files, and running the step executables.

Exit codes of every subcommand: 0 done, 1 a failure (one line says what), 2 bad usage (one line
names the problem), 77 no usable GPU; 130 and 143 after SIGINT and SIGTERM. Nothing prints a
traceback. Output that cannot be written (a closed or full stdout) is a failure too, reported once
the command has finished its files.
"""

import contextlib
import datetime
import errno
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# REDUCE_ROOT: another tree laid out like this one (the tests build small ones).
ROOT = Path(os.environ.get("REDUCE_ROOT") or Path(__file__).resolve().parent.parent.parent).resolve()
RESULTS = ROOT / "results"
MAX_N = 1 << 36
CEILING_TOOL = "read_ceiling"
SANITIZE_N = (1, 100003)  # the progression's compute-sanitizer sizes: one element, and a few blocks and a tail
MAX_READ = 64 << 20  # the most a record, a README or a run list read here may hold


class UsageError(Exception):
    """Bad usage: exit 2."""


class Failure(Exception):
    """Anything else that fails: exit 1."""


class NoGpu(Exception):
    """No usable GPU: exit 77."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is (so every cleanup runs): exit 128 + the signal."""


# --- messages ------------------------------------------------------------------------------------


def _escape(c):
    o = ord(c)
    if c in "\n\t\r":
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}[c]
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{o - 0xDC00:02X}"
    return f"\\x{o:02X}" if o < 0x100 else f"\\u{o:04X}" if o < 0x10000 else f"\\U{o:08X}"


def quote(value, limit=80):
    """A user's value as every message shows it: in single quotes, with newlines, ESC and every other
    control or unprintable character escaped (as \\n, \\x1B, \\u2028), backslashes and quotes too; a
    longer value is cut at limit characters and its length given."""
    text = os.fsdecode(value) if isinstance(value, (bytes, os.PathLike)) else str(value)
    body = "".join("\\" + c if c in "\\'" else c if c.isprintable() else _escape(c) for c in text[:limit])
    return f"'{body}'" + (f"... ({len(text)} characters)" if len(text) > limit else "")


def one_line(text):
    """text with every unprintable character escaped: a message is always one line."""
    return "".join(c if c.isprintable() else _escape(c) for c in text)


class _Stdout(io.TextIOBase):
    """sys.stdout while a command runs. A write that fails (stdout closed, a full disk, a reader gone)
    is kept, not raised, so the command still finishes its files; run_main reports it at the end."""

    def __init__(self, stream):
        super().__init__()
        self.stream, self.error = stream, None

    def _do(self, call):
        if self.error is None:
            try:
                if self.stream is None:  # started with stdout closed
                    raise OSError(errno.EBADF, "closed")
                call()
            except (OSError, ValueError) as e:
                self.error = e

    def write(self, text):
        if text:
            self._do(lambda: self.stream.write(text))
        return len(text)

    def flush(self):
        if self.stream is not None:
            self._do(self.stream.flush)

    def writable(self):
        return True

    def isatty(self):
        return self.stream is not None and self.error is None and self.stream.isatty()

    @property
    def encoding(self):
        return getattr(self.stream, "encoding", None) or "utf-8"


def _on_signal(signum, frame):
    raise Interrupted(signum)


def run_main(prog, main, argv):
    """main(argv) with its exceptions turned into one line on stderr and the exit code; SIGTERM and
    SIGHUP raise Interrupted (as SIGINT raises KeyboardInterrupt), so temporary files are removed."""
    for s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) == signal.SIG_DFL:
            signal.signal(s, _on_signal)
    saved = sys.stdout
    sys.stdout = out = _Stdout(saved)
    try:
        code, message = main(argv), None
    except SystemExit as e:  # argparse after --help
        code, message = e.code if isinstance(e.code, int) else 0 if e.code is None else 2, None
    except UsageError as e:
        code, message = 2, str(e)
    except Failure as e:
        code, message = 1, str(e)
    except NoGpu as e:
        code, message = 77, str(e)
    except Interrupted as e:
        code, message = 128 + e.args[0], "terminated"
    except KeyboardInterrupt:
        code, message = 130, "interrupted"
    except OSError as e:  # the machine said no: the file it concerns, quoted, and why
        code, message = 1, (f"{quote(e.filename, 60)}: " if e.filename else "") + (e.strerror or str(e))
    except Exception as e:  # a bug or an unexpected state of the machine: still one line
        code, message = 1, f"{type(e).__name__}: {e}"
    finally:
        out.flush()
        sys.stdout = saved
    if message:
        progress(f"{prog}: {one_line(message)}")
    if out.error is not None:
        if isinstance(out.error, BrokenPipeError):  # the reader went away (| head): not an error to report
            code = code or 141
        elif code == 0:
            why = getattr(out.error, "strerror", None) or str(out.error)
            progress(f"{prog}: standard output: {one_line(why)}; the output is lost")
            code = 1
        if saved is not None:  # Python flushes stdout again at exit: what is left there goes nowhere
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), saved.fileno())
    return code


# --- option values -------------------------------------------------------------------------------


def parse_int(text, what, lo, hi):
    """An ASCII decimal integer from lo to hi (at most 20 digits read: 5,000 digits are refused)."""
    if not re.fullmatch(r"[0-9]{1,20}", text or "", re.ASCII) or not lo <= int(text) <= hi:
        raise UsageError(f"{what}: expected an integer from {lo} to {hi}, got {quote(text, 40)}")
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
        raise UsageError(f"{what}: expected a count from 0 to 2^36 (1000, 4K, 16M, 1G or 2^20), got {quote(text, 40)}")
    return value


def parse_range(text, what, lo=0, hi=36):
    """MIN:MAX exponents with lo <= MIN <= MAX <= hi."""
    m = re.fullmatch(r"([0-9]{1,2}):([0-9]{1,2})", text or "", re.ASCII)
    if not m or not lo <= int(m.group(1)) <= int(m.group(2)) <= hi:
        raise UsageError(f"{what}: expected MIN:MAX with {lo} <= MIN <= MAX <= {hi}, got {quote(text, 40)}")
    return int(m.group(1)), int(m.group(2))


def count_text(n):
    """2^k for a power of two, else the number."""
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


# --- the steps -----------------------------------------------------------------------------------


def read_steps(path=None):
    """steps.txt as [(step, demo n)] in teaching order: "NN_name  2^k" per line, # comments."""
    path = Path(path or ROOT / "steps.txt")
    steps = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or not re.fullmatch(r"[0-9]{2}_[A-Za-z0-9_]+", words[0]):
            raise Failure(f"{path}:{number}: expected 'NN_name DEMO_N', got {quote(line.strip())}")
        try:
            steps.append((words[0], parse_count(words[1], f"{path.name}:{number}: demo n")))
        except UsageError as e:
            raise Failure(str(e)) from None
    if len({s for s, _ in steps}) != len(steps) or len(steps) < 2:
        raise Failure(f"{quote(path)}: expected two or more distinct steps, the library last")
    return steps


def step_names():
    return [s for s, _ in read_steps()]


def read_beyond(path=None):
    """beyond.txt's steps, one per line (none without the file)."""
    return list(read_beyond_demo(path))


def read_beyond_demo(path=None):
    """beyond.txt as {step: demo n or None}, in order: "NN_name [DEMO_N] [uses STEP...]" per line. The demo
    n is the one the step's README's small table shows."""
    path = Path(path or ROOT / "beyond.txt")
    if not os.path.lexists(path):
        return {}
    steps = {}
    for number, line in enumerate(read_text(path).splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if "uses" in words:  # the steps it builds on: CMake's (CMakeLists.txt links their libraries)
            words = words[: words.index("uses")]
        if not words:
            continue
        if len(words) > 2:
            raise Failure(f"{path}:{number}: expected 'NN_name [DEMO_N] [uses STEP...]', got {quote(line.strip())}")
        try:
            steps[words[0]] = parse_count(words[1], f"{path.name}:{number}: demo n") if len(words) == 2 else None
        except UsageError as e:
            raise Failure(str(e)) from None
    return steps


def resolve_step(spec, steps, what="step"):
    """A step by number (7, 07), by name, or by name without its number."""
    spec = (spec or "").strip()
    found = [
        s
        for s in steps
        if spec in (s, s.split("_", 1)[-1]) or (spec.isdigit() and len(spec) <= 2 and s[:2] == spec.zfill(2))
    ]
    if len(found) != 1:
        raise UsageError(f"{what}: unknown step {quote(spec, 40)} (known: {steps[0]} ... {steps[-1]})")
    return found[0]


# --- reading -------------------------------------------------------------------------------------


def kind_of(mode):
    """What a file that is not a regular one is, for a message."""
    kinds = [
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def read_bytes(path, limit=MAX_READ):
    """A regular file's bytes, at most limit of them. A FIFO, a device (a link to /dev/zero too), a
    folder or a larger file is refused with one line naming it (Failure) before anything is read."""
    name = quote(path)
    too_large = Failure(
        f"{name} is larger than {f'{limit >> 20} MiB' if limit >> 20 else f'{limit} bytes'}, the most read here"
    )
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise Failure(f"{name} is {kind_of(mode)}, not a file")
        # O_NONBLOCK: were it swapped for a FIFO since, the open returns at once and fstat refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Failure(f"{name} is {kind_of(st.st_mode)}, not a file")
            if st.st_size > limit:
                raise too_large
            data = f.read(limit + 1)  # the size is a hint only (a /proc file says 0)
    except OSError as e:
        raise Failure(f"cannot read {name}: {e.strerror or e}") from None
    if len(data) > limit:
        raise too_large
    return data


def read_text(path, limit=MAX_READ):
    """A regular file's text (UTF-8, its line endings as they are), as read_bytes reads it."""
    try:
        return read_bytes(path, limit).decode()
    except UnicodeDecodeError as e:
        raise Failure(f"{quote(path)}: not UTF-8 text (byte {e.start})") from None


def _object(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {quote(k, 40)} appears twice")
        out[k] = v
    return out


def _number(kind):
    def parse(text):
        if len(text) > 40:
            raise ValueError(f"a number of {len(text)} characters")
        return kind(text)

    return parse


def _constant(text):
    raise ValueError(f"{text} is not a JSON number")


def parse_json(text, where):
    """JSON as the executables write it; a duplicate key, a number of more than 40 characters, NaN or
    nesting deeper than Python's recursion limit is refused with one line naming where (Failure)."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_object,
            parse_int=_number(int),
            parse_float=_number(float),
            parse_constant=_constant,
        )
    except json.JSONDecodeError as e:
        raise Failure(f"{where}: not JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise Failure(f"{where}: not JSON the suite writes (nested too deeply)") from None
    except ValueError as e:
        raise Failure(f"{where}: not JSON the suite writes ({e})") from None


def read_json(path, kind=None):
    """A JSON file (read_text, parse_json); kind=dict requires an object."""
    value = parse_json(read_text(path), quote(path))
    if kind is dict and not isinstance(value, dict):
        raise Failure(f"{quote(path)}: expected a JSON object")
    return value


def read_json_lines(path):
    """A file of JSON objects, one per line."""
    out = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if line.strip():
            out.append(parse_json(line, f"{quote(path)}:{number}"))
            if not isinstance(out[-1], dict):
                raise Failure(f"{quote(path)}:{number}: not a JSON object")
    return out


def _is_number(v, positive=False):
    return (
        isinstance(v, (int, float))
        and not isinstance(v, bool)
        and v == v
        and abs(v) != float("inf")
        and (v > 0 if positive else v >= 0)
    )


FIELDS = {
    "step": lambda v: isinstance(v, str),
    "n": lambda v: (_is_number(v) and v == int(v)) or (isinstance(v, str) and bool(re.fullmatch("[0-9]{1,20}", v))),
    "median_ms": lambda v: _is_number(v, True),
    "gbps": _is_number,
    "pct_peak": _is_number,
    "peak_gbps": lambda v: _is_number(v, True),
    # an A/B record (results/<gpu>/ab/ab.json): the step against which, B's time over A's, its 95% interval
    "against": lambda v: isinstance(v, str),
    "ratio": lambda v: _is_number(v, True),
    "low": lambda v: _is_number(v, True),
    "high": lambda v: _is_number(v, True),
    "verdict": lambda v: v in ("faster", "slower", "within noise"),
}


def records_of(value, where, need=("step", "n", "median_ms", "gbps")):
    """value["records"] of a record file (table.json, sweep.json) as a list of objects, each with the
    fields need (checked as FIELDS says); else a Failure naming where and the first field missing."""
    records = value.get("records") if isinstance(value, dict) else None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise Failure(f"{where}: expected an object whose records are a list of objects")
    check_fields(records, where, need)
    return records


def check_fields(records, where, need):
    for r in records:
        bad = next((f for f in need if not FIELDS[f](r.get(f))), None)
        if bad:
            raise Failure(f"{where}: a record of step {quote(r.get('step'), 40)} has no valid {bad}")


# --- writing -------------------------------------------------------------------------------------

_UMASK = os.umask(0)
os.umask(_UMASK)
_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_held():
    """SIGINT, SIGTERM and SIGHUP wait until the block ends: renames are never cut in half."""
    main = threading.current_thread() is threading.main_thread()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD) if main else None
    try:
        yield
    finally:
        if main:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def check_folder(folder, what):
    """folder is a folder in which a file can be made, or can be made itself: refused (UsageError)
    before any work where it cannot (a file, a link loop, a dangling link, /proc, a read-only place)."""
    if not str(folder).strip():
        raise UsageError(f"{what}: empty")
    p = Path(os.path.abspath(folder))
    while True:
        try:
            mode = os.stat(p).st_mode
            break
        except FileNotFoundError:
            if os.path.lexists(p):
                raise UsageError(f"{what}: {quote(p)} is a symlink to nothing") from None
        except NotADirectoryError:
            pass
        except OSError as e:
            raise UsageError(f"{what}: cannot use {quote(folder)}: {e.strerror or e}") from None
        p = p.parent
    if not stat.S_ISDIR(mode):
        raise UsageError(f"{what}: {quote(p)} is {kind_of(mode) if not stat.S_ISREG(mode) else 'a file'}, not a folder")
    try:  # the one sure test: make a file there (and remove it)
        fd, probe = tempfile.mkstemp(dir=p, prefix=".reduce-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UsageError(f"{what}: cannot write in {quote(p)}: {e.strerror or e}") from None


def check_target(path):
    """The file a write of path replaces: path, or the file its symlink names (the link stays, as
    common/files.cpp's FileWriter does). Anything but a regular file or a new file is refused
    (Failure) before anything is written: a folder, FIFO, device or socket, a dangling link."""
    path, name = Path(path), quote(path)
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            st = os.stat(path)
            path = Path(os.path.realpath(path))
    except FileNotFoundError:
        if os.path.lexists(path):
            raise Failure(f"cannot write {name}: a symlink to nothing") from None
        st = None
    except OSError as e:
        raise Failure(f"cannot write {name}: {e.strerror or e}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise Failure(f"cannot write {name}: it is {kind_of(st.st_mode)}, not a file; nothing written")
    if st is not None and not os.access(path, os.W_OK):
        raise Failure(f"cannot write {name}: Permission denied; nothing written")
    try:
        check_folder(path.parent, "cannot write " + name)
    except UsageError as e:
        raise Failure(str(e)) from None
    return path


def write_files(files):
    """Writes {path: text or bytes} all or nothing. Every target is checked first (check_target); each
    file goes to a temporary file beside its target, and the temporary files are renamed over the
    targets only once every one is ready. On any exception (KeyboardInterrupt, SIGTERM) the temporary
    files and the folders made are removed and the old files stay; a rename that fails puts back the
    ones before it."""
    plan = [(check_target(p), p, d if isinstance(d, bytes) else d.encode()) for p, d in files.items()]
    if len({t for t, _, _ in plan}) != len(plan):
        raise Failure("two of the files to write are one file (a link and its target); nothing written")
    temps, made, path = [], [], None
    try:
        for target, path, data in plan:
            made += _make_folders(target.parent)
            old = os.stat(target) if os.path.exists(target) else None
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            temps.append((tmp, target))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, stat.S_IMODE(old.st_mode) if old else 0o666 & ~_UMASK)
            if old:
                with contextlib.suppress(OSError):  # root writing another's file keeps its owner
                    os.chown(tmp, old.st_uid, old.st_gid)
        with _signals_held():
            path = None
            _rename_all(temps)
            temps, made = [], []
    except OSError as e:
        raise Failure(f"cannot write {quote(path)}: {e.strerror or e}; nothing written") from None
    finally:
        with _signals_held():
            for tmp, _ in temps:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)


def _make_folders(folder):
    """Makes folder and the folders above it that are missing; returns those made, the outermost first."""
    missing = []
    while not os.path.isdir(folder):
        missing.append(folder)
        folder = folder.parent
    for f in reversed(missing):
        os.mkdir(f)
    return list(reversed(missing))


def _rename_all(pairs):
    """Renames each temporary file over its target; on any failure puts back the targets renamed."""
    backups, done = {}, []
    try:
        for _, target in pairs:  # the old files, under another name until every rename is done
            if os.path.exists(target):
                backups[target] = _keep(target)
        for tmp, target in pairs:
            os.replace(tmp, target)
            done.append(target)
    except BaseException as e:
        for target in reversed(done):
            if target in backups:
                os.replace(backups.pop(target), target)
            else:
                os.unlink(target)
        if isinstance(e, OSError):
            raise Failure(f"cannot write {quote(pairs[len(done)][1])}: {e.strerror or e}; nothing written") from None
        raise
    finally:
        for b in backups.values():
            with contextlib.suppress(OSError):
                os.unlink(b)


def _keep(path):
    """A hard link (else a copy) of path beside it, under a new name; returns that name."""
    fd, keep = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".old")
    os.close(fd)
    try:
        os.unlink(keep)
        os.link(path, keep)
    except OSError:
        shutil.copy2(path, keep)
    return keep


def dump_json(value):
    return json.dumps(value, indent=1) + "\n"


# --- provenance ----------------------------------------------------------------------------------


def git_commit():
    """$REDUCE_COMMIT, else git's HEAD (12 digits, +dirty when tracked files differ), else unknown."""
    if os.environ.get("REDUCE_COMMIT"):
        return os.environ["REDUCE_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty else "") if head.returncode == 0 else "unknown"


def today():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def meta_of(record, **extra):
    """The provenance of a measurement, from its first record."""
    return {
        "device": record.get("device"),
        "cuda_runtime": record.get("cuda_runtime"),
        "cuda_driver": record.get("cuda_driver"),
        "peak_gbps": record.get("peak_gbps"),
        "date": today(),
        "commit": git_commit(),
        **extra,
    }


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
        raise UsageError(f"no executable {quote(exe)}: build first (scripts/suite run builds build/release)")
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
            records.append(parse_json(line, f"{what}: its output"))
            if not isinstance(records[-1], dict):
                raise Failure(f"{what}: a line of its output is not a JSON record")
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
    """A line on stderr (none where stderr is closed)."""
    if sys.stderr is not None:
        with contextlib.suppress(OSError, ValueError):
            print(text, file=sys.stderr, flush=True)
