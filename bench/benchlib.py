"""What the benchmarks share: timing a call several times."""

import statistics
import time


def timed(f, n):
    """Runs `f` `n` times; returns the median, fastest and slowest, in milliseconds."""
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[0], times[-1]
