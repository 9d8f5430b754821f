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

import os
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
    # run_processes: the load generator processes' CPU niceness (os.nice), so that on a small
    # machine they leave the server under test its CPU time, as clients on other machines would
    nice: int = 0


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
    ready: Callable[[], None] | None = None,
) -> RunResult:
    """Drive ``backend`` at ``cfg.rate`` pages/s for ``cfg.warmup + cfg.duration`` seconds.

    ``ready``, when given, is called just before the clock starts (several load generator
    processes wait on a barrier there, so their timelines line up)."""
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
    if ready is not None:
        ready()
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


# --- several load generator processes ------------------------------------------------------------
#
# One Python process issuing queries through pymysql spends most of a page's client time holding
# the GIL, so at high rates the load generator, not the database, becomes the bottleneck. With
# ``processes`` > 1 each of that many processes runs the open-loop driver above at rate/processes
# (the sum of independent Poisson streams is a Poisson stream at the total rate) with its own
# connections and in-flight cap; their timelines start together at a barrier and their
# histograms are merged afterwards. Only for servers reached over the network: the embedded
# engine lives in one process.


def _child_run(url, scale, workload_seed, cfg, part, parts, barrier, counters, out) -> None:
    from .backends import MySQLBackend
    from .data import Workload

    try:
        if cfg.nice:
            os.nice(cfg.nice)
        workload = Workload(scale, workload_seed)
        workload.partition(part, parts)
        backend = MySQLBackend(url)

        def progress(elapsed: float, issued: int, completed: int, inflight: int) -> None:
            counters[3 * part : 3 * part + 3] = [issued, completed, inflight]

        def ready() -> None:
            barrier.wait(timeout=120)

        result = run(backend, workload, cfg, progress=progress, ready=ready)
        if result.unfinished == 0:
            for sess in result.sessions:
                sess.close()
        backend.close()
        out.put(
            (
                part,
                {
                    "pages": {
                        name: (
                            st.count,
                            st.errors,
                            st.executed,
                            st.sojourn.encode(),
                            st.processing.encode(),
                        )
                        for name, st in result.pages.items()
                    },
                    "issued": result.issued,
                    "completed": result.completed,
                    "measured": result.measured,
                    "unfinished": result.unfinished,
                    "elapsed": result.elapsed,
                    "lag_s": result.lag_s,
                    "error_samples": result.error_samples,
                },
            )
        )
    except BaseException as e:  # reported by the parent, which must not wait forever
        barrier.abort()
        out.put((part, {"failed": f"{type(e).__name__}: {e}"}))


def run_processes(
    url: str,
    scale: float,
    workload_seed: int,
    cfg: RunConfig,
    processes: int,
    progress: ProgressFn | None = None,
) -> RunResult:
    """Drive the MySQL-protocol server at ``url`` from ``processes`` load generator processes
    at ``cfg.rate`` pages/s in all; the merged result reads like one ``run``'s."""
    import multiprocessing as mp
    import queue as queue_mod
    from dataclasses import replace

    if processes < 1:
        raise ValueError("processes must be at least 1")
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(processes + 1)
    counters = ctx.Array("q", 3 * processes, lock=False)
    out = ctx.Queue()
    per_flight = max(1, -(-cfg.in_flight // processes))
    children = []
    for part in range(processes):
        sub = replace(
            cfg,
            rate=cfg.rate / processes,
            in_flight=per_flight,
            seed=cfg.seed * 7919 + part,
        )
        proc = ctx.Process(
            target=_child_run,
            args=(url, scale, workload_seed, sub, part, processes, barrier, counters, out),
            name=f"lobsters-load-{part}",
            daemon=True,
        )
        proc.start()
        children.append(proc)
    reports: dict[int, dict] = {}
    try:
        try:
            barrier.wait(timeout=180)
        except Exception:
            pass  # a child failed to set up; its report says why
        t0 = time.perf_counter()
        drain = cfg.drain if cfg.drain is not None else max(10.0, cfg.duration)
        deadline = t0 + cfg.warmup + cfg.duration + drain + 60
        while len(reports) < processes and time.perf_counter() < deadline:
            try:
                part, rep = out.get(timeout=0.25)
                reports[part] = rep
            except queue_mod.Empty:
                if not any(p.is_alive() for p in children) and out.empty():
                    break
            if progress:
                c = list(counters)
                progress(time.perf_counter() - t0, sum(c[0::3]), sum(c[1::3]), sum(c[2::3]))
    finally:
        for proc in children:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
    failed = [
        f"load generator {part}: {rep['failed']}"
        for part, rep in reports.items()
        if "failed" in rep
    ]
    missing = [part for part in range(processes) if part not in reports]
    if failed or missing:
        raise RuntimeError(
            "; ".join(failed + [f"load generator {part} did not report" for part in missing])
        )
    stats = {p: PageStats() for p in PAGE_TYPES}
    for rep in reports.values():
        for name, (count, errors, executed, soj, proc_) in rep["pages"].items():
            st = stats[name]
            st.count += count
            st.errors += errors
            st.executed += executed
            st.sojourn.decode_and_add(soj)
            st.processing.decode_and_add(proc_)
    reps = list(reports.values())
    return RunResult(
        config=cfg,
        pages=stats,
        issued=sum(r["issued"] for r in reps),
        completed=sum(r["completed"] for r in reps),
        measured=sum(r["measured"] for r in reps),
        unfinished=sum(r["unfinished"] for r in reps),
        elapsed=max(r["elapsed"] for r in reps),
        lag_s=max(r["lag_s"] for r in reps),
        error_samples=[e for r in reps for e in r["error_samples"]][:20],
    )
