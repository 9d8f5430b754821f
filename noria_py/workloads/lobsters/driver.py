"""The open-loop driver: Poisson arrivals at a target rate, a cap on requests in flight.

The generator thread draws requests from the workload and schedules them on an absolute
timeline (``next += Exp(rate)``). It waits until a request's scheduled time, then until fewer
than ``in_flight`` requests are outstanding, and hands it to a worker thread (one database
session per worker). When it falls behind it sends overdue requests back to back; none is ever
dropped. Latencies per page type go into HdrHistograms (1 us .. 60 s, 3 significant digits):

* processing: from when a worker starts the page until it completes;
* sojourn: from the request's *scheduled* arrival until it completes, so generator lag and
  waiting for the in-flight cap or a worker count too.

Requests scheduled during ``warmup`` run but are not measured. After the run the driver waits
for outstanding requests (up to ``drain`` seconds); achieved pages/s is the number of measured
requests completed divided by the time from the start of measurement until the last of them
completed (or the measurement window, if longer).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

from . import pages
from .data import PAGE_TYPES, REQUEST_WEIGHTS, Request, Workload

LOW_US, HIGH_US, DIGITS = 1, 60_000_000, 3


@dataclass
class RunConfig:
    rate: float  # offered pages/s
    duration: float = 20.0  # measured seconds
    warmup: float = 0.0
    in_flight: int = 50
    seed: int = 1
    variant: str = "natural"
    frontpage_order: str = "asc"
    mix: str = "lobsters"  # or "uniform": every request type equally likely (tests)
    drain: float | None = None  # wait for outstanding requests (default: max(10, duration))


@dataclass
class PageStats:
    sojourn: HdrHistogram = field(default_factory=lambda: HdrHistogram(LOW_US, HIGH_US, DIGITS))
    processing: HdrHistogram = field(default_factory=lambda: HdrHistogram(LOW_US, HIGH_US, DIGITS))
    count: int = 0
    errors: int = 0
    executed: int = 0  # including warm-up


@dataclass
class RunResult:
    config: RunConfig
    pages: dict[str, PageStats]
    issued: int
    completed: int
    measured: int
    unfinished: int
    elapsed: float  # seconds from the start of measurement until the last measured completion
    lag_s: float  # how far behind schedule the generator was at the end
    error_samples: list[str]
    sessions: list = field(default_factory=list, repr=False)

    @property
    def errors(self) -> int:
        return sum(p.errors for p in self.pages.values())

    @property
    def pages_per_s(self) -> float:
        return self.measured / self.elapsed if self.elapsed > 0 else 0.0


ProgressFn = Callable[[float, int, int, int], None]  # (elapsed, issued, completed, in flight)


def _clamp(us: float) -> int:
    return min(max(int(us), LOW_US), HIGH_US)


class _Uniform:
    """Every request type equally likely (for tests that must see every page quickly)."""

    def __init__(self, workload: Workload):
        self.workload = workload
        self.kinds = [name for name, _ in REQUEST_WEIGHTS] + ["logout"]

    def next_request(self, rng: random.Random) -> Request:
        w = self.workload
        return w.make_request(rng, w.users.sample(rng), rng.choice(self.kinds))


def run(
    backend,
    workload: Workload,
    cfg: RunConfig,
    progress: ProgressFn | None = None,
) -> RunResult:
    """Drive ``backend`` at ``cfg.rate`` pages/s for ``cfg.warmup + cfg.duration`` seconds."""
    if cfg.rate <= 0:
        raise ValueError("rate must be positive")
    rng = random.Random(f"lobsters-run-{cfg.seed}")
    source = _Uniform(workload) if cfg.mix == "uniform" else workload
    optimized = cfg.variant == "optimized"
    stats = {p: PageStats() for p in PAGE_TYPES}
    stats_lock = threading.Lock()
    slots = threading.Semaphore(cfg.in_flight)
    local = threading.local()
    sessions = []
    counters = {"completed": 0, "measured": 0, "last_end": 0.0}
    error_samples: list[str] = []
    outstanding = [0]
    done_cv = threading.Condition(stats_lock)

    def session():
        s = getattr(local, "session", None)
        if s is None:
            s = backend.session()
            local.session = s
            with stats_lock:
                sessions.append(s)
        return s

    def task(req: Request, scheduled: float, measured: bool) -> None:
        start = time.perf_counter()
        ok = True
        err = None
        try:
            pages.run_request(session(), req, optimized, cfg.frontpage_order)
        except Exception as e:  # counted per page type; the run carries on
            ok = False
            err = f"{req.kind}: {type(e).__name__}: {e}"
        end = time.perf_counter()
        slots.release()
        with stats_lock:
            st = stats[req.page]
            st.executed += 1
            counters["completed"] += 1
            if not ok:
                st.errors += 1
                if len(error_samples) < 20:
                    error_samples.append(err)
            if measured:
                if ok:
                    st.count += 1
                    st.sojourn.record_value(_clamp((end - scheduled) * 1e6))
                    st.processing.record_value(_clamp((end - start) * 1e6))
                counters["measured"] += 1
                counters["last_end"] = max(counters["last_end"], end)
            outstanding[0] -= 1
            done_cv.notify_all()

    total = cfg.warmup + cfg.duration
    issued = 0
    pool = ThreadPoolExecutor(max_workers=cfg.in_flight, thread_name_prefix="lobsters")
    t0 = time.perf_counter()
    measure_start = t0 + cfg.warmup
    offset = 0.0
    last_report = t0
    lag = 0.0
    try:
        while True:
            offset += rng.expovariate(cfg.rate)
            if offset >= total:
                break
            req = source.next_request(rng)
            scheduled = t0 + offset
            now = time.perf_counter()
            if scheduled > now:
                time.sleep(scheduled - now)
            slots.acquire()
            with stats_lock:
                outstanding[0] += 1
            pool.submit(task, req, scheduled, offset >= cfg.warmup)
            issued += 1
            now = time.perf_counter()
            lag = max(0.0, now - scheduled)
            if progress and now - last_report >= 0.25:
                last_report = now
                with stats_lock:
                    progress(now - t0, issued, counters["completed"], outstanding[0])
        # Do not catch up after the run: wait out the remaining scheduled time, then drain.
        end_of_run = t0 + total
        now = time.perf_counter()
        if end_of_run > now:
            time.sleep(end_of_run - now)
        drain = cfg.drain if cfg.drain is not None else max(10.0, cfg.duration)
        deadline = time.perf_counter() + drain
        with done_cv:
            while outstanding[0] > 0:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                done_cv.wait(min(left, 0.25))
                if progress:
                    progress(
                        time.perf_counter() - t0, issued, counters["completed"], outstanding[0]
                    )
            unfinished = outstanding[0]
            measured = counters["measured"]
            last_end = counters["last_end"]
            completed = counters["completed"]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if progress:
        progress(time.perf_counter() - t0, issued, completed, unfinished)
    elapsed = max(cfg.duration, last_end - measure_start) if measured else cfg.duration
    result = RunResult(
        config=cfg,
        pages=stats,
        issued=issued,
        completed=completed,
        measured=measured,
        unfinished=unfinished,
        elapsed=elapsed,
        lag_s=lag,
        error_samples=error_samples,
        sessions=sessions,
    )
    return result
