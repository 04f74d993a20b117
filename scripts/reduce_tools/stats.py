"""compare's method: a 95% confidence interval on the ratio of median times by bootstrap over the
kept samples.

Each side is a list of rounds, each round the timed samples of one run (an A/B measured in
interleaved rounds has one round per run; a committed record is one round). The bootstrap resamples
whole rounds, paired by their index where both sides have as many (interleaved runs share a
round's drift, which then cancels), then the samples within each round, and takes the ratio
NEW median / OLD median of the pooled samples: below 1 NEW is faster. The verdict is "faster" when
the interval's high end is below 1, "slower" when its low end is above 1, else "within noise".
numpy does the resampling where installed; without it, the same in pure Python (seeded).
"""

import random

try:
    import numpy
except ImportError:  # the pure-Python path below gives the same kind of interval, slower
    numpy = None

RESAMPLES = 2000
SEED = 12345


def median(values):
    """The median, or None for no values."""
    values = sorted(values)
    k = len(values)
    return None if not k else values[k // 2] if k % 2 else 0.5 * (values[k // 2 - 1] + values[k // 2])


def _ratios_python(old, new, resamples, seed):
    rng = random.Random(seed)
    paired = len(old) == len(new)
    out = []
    for _ in range(resamples):
        pick_old = [rng.randrange(len(old)) for _ in old]
        pick_new = pick_old if paired else [rng.randrange(len(new)) for _ in new]
        a = [x for i in pick_old for x in rng.choices(old[i], k=len(old[i]))]
        b = [x for i in pick_new for x in rng.choices(new[i], k=len(new[i]))]
        out.append(median(b) / median(a))
    return out


def _ratios_numpy(old, new, resamples, seed):
    rng = numpy.random.default_rng(seed)
    paired = len(old) == len(new)
    old = [numpy.asarray(r, dtype=float) for r in old]
    new = [numpy.asarray(r, dtype=float) for r in new]

    def pooled(rounds, picks):
        return numpy.concatenate([rounds[i][rng.integers(0, len(rounds[i]), len(rounds[i]))] for i in picks])
    out = numpy.empty(resamples)
    for k in range(resamples):
        po = rng.integers(0, len(old), len(old))
        pn = po if paired else rng.integers(0, len(new), len(new))
        out[k] = numpy.median(pooled(new, pn)) / numpy.median(pooled(old, po))
    return out.tolist()


def ratio_interval(old, new, resamples=RESAMPLES, seed=SEED, level=0.95):
    """(ratio, low, high, verdict) for NEW's median time over OLD's; old and new are lists of rounds
    (lists of samples in ms). None when a side has no samples."""
    old = [list(r) for r in old if r]
    new = [list(r) for r in new if r]
    if not old or not new:
        return None
    ratio = median([x for r in new for x in r]) / median([x for r in old for x in r])
    draws = sorted((_ratios_numpy if numpy else _ratios_python)(old, new, resamples, seed))
    tail = (1 - level) / 2
    low, high = draws[int(tail * resamples)], draws[min(resamples - 1, int((1 - tail) * resamples))]
    verdict = "faster" if high < 1 else "slower" if low > 1 else "within noise"
    return ratio, low, high, verdict


def samples_of(record):
    """A record's timed samples (ms), or [] for an older record without them."""
    s = record.get("samples_ms")
    return [float(x) for x in s if isinstance(x, (int, float))] if isinstance(s, list) else []
