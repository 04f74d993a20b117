"""compare's and ab's method: a 95% confidence interval on the ratio of median times, NEW over OLD
(below 1 NEW is faster), from the timed samples the records keep.

Each side is a list of rounds, each round the samples of one run (an A/B measured in interleaved
rounds has one round per run; a committed record is one round). The ratio is NEW's median over OLD's,
each the median of all of a side's samples. The interval is log(ratio) +- t x se, on the log scale:
  - where both sides have k >= 2 rounds, the rounds are paired by index (interleaved runs share a
    round's drift, which then cancels): se is the standard deviation of the k rounds' log ratios
    over sqrt(k), and t Student's for k - 1 degrees of freedom;
  - otherwise each side adds its variance: a side of k >= 2 rounds the variance of its rounds' log
    medians over k (t for the fewer rounds), a side of one round that of its median's log, read off
    its order statistics (the values at ranks n/2 -+ 1.96 sqrt(n)/2 lie 1.96 standard errors either
    side of the median: the distribution-free interval of a median, the one a bootstrap gives).
The verdict is "faster" when the interval's high end is below 1, "slower" when its low end is above
1, else "within noise". The cost is a sort of each round: 2,000 points, or a point of 100,000
samples, take a second or so in pure Python.
"""

import math
import statistics

Z = 1.959964  # the normal distribution's 97.5% point
# Student's t at 97.5% for 1 to 30 degrees of freedom
T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def t95(dof):
    """Student's t at 97.5% (a two-sided 95% interval); beyond the table, its first Cornish-Fisher term."""
    return T95[dof - 1] if dof <= len(T95) else Z + (Z**3 + Z) / (4 * dof)


def median(values):
    """The median, or None for no values."""
    values = sorted(values)
    k = len(values)
    return None if not k else values[k // 2] if k % 2 else 0.5 * (values[k // 2 - 1] + values[k // 2])


def median_log_se(samples):
    """The standard error of log(median of samples), from the order statistics around the median."""
    s = sorted(samples)
    n = len(s)
    c = max(0, min(n - 1, math.floor((n - Z * math.sqrt(n)) / 2)))
    return (math.log(s[n - 1 - c]) - math.log(s[c])) / (2 * Z)


def _side(rounds):
    """(variance of the side's log median, degrees of freedom or None for one round)."""
    if len(rounds) == 1:
        return median_log_se(rounds[0]) ** 2, None
    logs = [math.log(median(r)) for r in rounds]
    return statistics.variance(logs) / len(logs), len(logs) - 1


def ratio_interval(old, new):
    """(ratio, low, high, verdict) for NEW's median time over OLD's; old and new are lists of rounds
    (lists of samples in ms, each above 0). None when a side has no samples."""
    old = [list(r) for r in old if r]
    new = [list(r) for r in new if r]
    if not old or not new:
        return None
    ratio = median([x for r in new for x in r]) / median([x for r in old for x in r])
    if len(old) == len(new) >= 2:
        d = [math.log(median(b) / median(a)) for a, b in zip(old, new)]
        se, dof = statistics.stdev(d) / math.sqrt(len(d)), len(d) - 1
    else:
        (var_old, dof_old), (var_new, dof_new) = _side(old), _side(new)
        se, dof = math.sqrt(var_old + var_new), min((d for d in (dof_old, dof_new) if d), default=None)
    half = min(700.0, (t95(dof) if dof else Z) * se)
    low, high = ratio * math.exp(-half), ratio * math.exp(half)
    verdict = "faster" if high < 1 else "slower" if low > 1 else "within noise"
    return ratio, low, high, verdict


def samples_of(record):
    """A record's timed samples (ms, each above 0), or [] for an older record without them."""
    s = record.get("samples_ms")
    return (
        [float(x) for x in s if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0]
        if isinstance(s, list)
        else []
    )
