"""Summaries of a Lobsters run: a JSON-ready dict, a rich table, and a latency plot.

Two latencies are reported per page type (see ``driver``): *sojourn*, from the request's
scheduled arrival until it completes (what a user waits, queueing included), and *processing*,
from the moment a worker starts the page until it completes (the database's own time). A tail
percentile is only given where there are enough samples to mean something: p99 needs at least
``MIN_P99`` requests of the page type, p95 ``MIN_P95``; with fewer the page is marked.

Achieved throughput is compared with the offered rate allowing for the arrivals' own noise:
Poisson arrivals at rate r for T seconds number r*T +- sqrt(r*T), so a run that completed every
request can still show a rate a little under the offered one. Only a shortfall beyond
``NOISE_SIGMAS`` standard deviations (or requests left unfinished) is reported as falling
behind.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hdrh.histogram import HdrHistogram

from .data import PAGE_TYPES
from .driver import DIGITS, HIGH_US, LOW_US, RunResult

MIN_P99 = 100  # samples below which a p99 is not given (it would be about the maximum)
MIN_P95 = 20
NOISE_SIGMAS = 3.0  # a shortfall within this many standard deviations of arrivals is noise

SOJOURN_TEXT = (
    "sojourn: from a request's scheduled arrival until it completes, waiting for a free "
    "worker included (what a user sees)"
)
PROCESSING_TEXT = "processing: from a worker starting the page until it completes"


def _ms(hist, q: float) -> float | None:
    if hist.get_total_count() == 0:
        return None
    return round(hist.get_value_at_percentile(q) / 1000.0, 3)


def _tail(hist, q: float, minimum: int) -> float | None:
    """A tail percentile, or None with fewer than ``minimum`` samples."""
    return _ms(hist, q) if hist.get_total_count() >= minimum else None


def arrival_band(rate: float, duration: float) -> tuple[float, float]:
    """The pages/s a run that keeps up shows, given Poisson arrivals' noise: offered rate
    +- NOISE_SIGMAS * sqrt(rate / duration)."""
    if rate <= 0 or duration <= 0:
        return (rate, rate)
    sd = math.sqrt(rate / duration)
    return (max(0.0, rate - NOISE_SIGMAS * sd), rate + NOISE_SIGMAS * sd)


def throughput_text(summary: dict) -> str:
    """One sentence on achieved vs offered pages/s that says whether the gap is noise."""
    achieved = summary["pages_per_s"]
    offered = summary["offered_pages_per_s"]
    lo, hi = summary.get("offered_band_pages_per_s") or arrival_band(
        offered, summary.get("duration_s") or 0
    )
    head = f"{achieved:.1f} pages/s completed, {offered:g} offered"
    if summary.get("kept_up", achieved >= lo):
        return (
            f"{head}: kept up (Poisson arrivals over {summary.get('duration_s', 0):g} s give "
            f"{lo:.1f} to {hi:.1f} pages/s)"
        )
    why = f"below the {lo:.1f} pages/s arrival noise allows"
    if summary.get("unfinished"):
        why += f", {summary['unfinished']} requests unfinished"
    return f"{head}: fell behind ({why})"


def summarize(
    result: RunResult,
    rss_mb: float | None = None,
    cache: dict | None = None,
    meta: dict | None = None,
) -> dict[str, Any]:
    """The run as a dict (the ``--json`` file). Latencies are sojourn times unless noted."""
    cfg = result.config
    pages = {}
    for name in PAGE_TYPES:
        st = result.pages[name]
        pages[name] = {
            "count": st.count,
            "errors": st.errors,
            "p50_ms": _ms(st.sojourn, 50),
            "p95_ms": _tail(st.sojourn, 95, MIN_P95),
            "p99_ms": _tail(st.sojourn, 99, MIN_P99),
            "max_ms": _ms(st.sojourn, 100),
            "processing_p50_ms": _ms(st.processing, 50),
            "processing_p95_ms": _tail(st.processing, 95, MIN_P95),
            "processing_p99_ms": _tail(st.processing, 99, MIN_P99),
            "few_samples": st.count < MIN_P99,
        }
    band = arrival_band(cfg.rate, cfg.duration)
    out: dict[str, Any] = {
        "pages_per_s": round(result.pages_per_s, 2),
        "offered_pages_per_s": cfg.rate,
        "offered_band_pages_per_s": [round(band[0], 2), round(band[1], 2)],
        "kept_up": result.pages_per_s >= band[0] and result.unfinished == 0,
        "latency_definitions": {"sojourn": SOJOURN_TEXT, "processing": PROCESSING_TEXT},
        "errors": result.errors,
        "rss_mb": round(rss_mb, 1) if rss_mb is not None else None,
        "p95_ms": _overall(result, 95),
        "mean_ms": _mean(result),
        "issued": result.issued,
        "measured": result.measured,
        "unfinished": result.unfinished,
        "generator_lag_s": round(result.lag_s, 3),
        "duration_s": cfg.duration,
        "warmup_s": cfg.warmup,
        "in_flight": cfg.in_flight,
        "variant": cfg.variant,
        "mix": cfg.mix,
        "seed": cfg.seed,
        "pages": pages,
    }
    if cache is not None:
        out["cache"] = {
            k: v for k, v in cache.items() if k != "proxied" or v
        }  # list proxied queries only when there are some
    if result.error_samples:
        out["error_samples"] = result.error_samples
    if meta:
        out.update(meta)
    return out


def _overall(result: RunResult, q: float) -> float | None:
    """Percentile of sojourn over all page types together."""
    total = HdrHistogram(LOW_US, HIGH_US, DIGITS)
    for st in result.pages.values():
        total.add(st.sojourn)
    return _ms(total, q)


def _mean(result: RunResult) -> float | None:
    n = sum(st.sojourn.get_total_count() for st in result.pages.values())
    if not n:
        return None
    s = sum(
        st.sojourn.get_mean_value() * st.sojourn.get_total_count() for st in result.pages.values()
    )
    return round(s / n / 1000.0, 3)


def write_json(summary: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(summary, f, indent=2, default=str)
        f.write("\n")


def print_report(summary: dict, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    title = (
        f"Lobsters ({summary.get('backend', '?')}, {summary.get('variant')}): "
        + throughput_text(summary)
    )
    t = Table(title=title)
    t.add_column("page")
    t.add_column("count", justify="right")
    t.add_column("errors", justify="right")
    for col in ("p50", "p95", "p99"):
        t.add_column(f"sojourn {col} ms", justify="right")
    t.add_column("processing p50 ms", justify="right")

    def f(v):
        return "-" if v is None else f"{v:.2f}"

    few = []
    for name, p in summary["pages"].items():
        marked = p.get("few_samples", False)
        if marked:
            few.append(name)
        t.add_row(
            name,
            f"{p['count']}*" if marked else str(p["count"]),
            str(p["errors"]) if p["errors"] else "",
            f(p["p50_ms"]),
            f(p["p95_ms"]),
            f(p["p99_ms"]),
            f(p["processing_p50_ms"]),
        )
    console.print(t)
    lines = [
        SOJOURN_TEXT + "; " + PROCESSING_TEXT + ".",
    ]
    if few:
        lines.append(
            f"* fewer than {MIN_P99} samples: no p99 (no p95 under {MIN_P95}); "
            "run longer or with --mix uniform for a tail"
        )
    lines += [
        f"sojourn over all pages: mean {f(summary['mean_ms'])} ms, p95 {f(summary['p95_ms'])} ms",
        f"errors: {summary['errors']}   unfinished at the end: {summary['unfinished']}",
        "RSS: " + ("-" if summary["rss_mb"] is None else f"{summary['rss_mb']:.0f} MB"),
    ]
    cache = summary.get("cache")
    if cache:
        rate = cache.get("hit_rate")
        lines.append(
            "cache: "
            + ("-" if rate is None else f"hit rate {rate:.1%}")
            + f", {cache.get('cached_queries')} cached / {cache.get('proxied_queries')} proxied"
            " queries"
            + (
                f"; {cache['misses']} misses took {cache['miss_s']:.2f} s to fill (whole run)"
                if cache.get("miss_s") is not None
                else ""
            )
        )
    for line in lines:
        console.print(line, highlight=False)
    for e in summary.get("error_samples", [])[:5]:
        console.print(f"[red]error[/red] {e}")


def plot(summary: dict, path: str) -> None:
    """Sojourn p50/p95/p99 per page type on a linear axis in plain milliseconds. Every page
    type has its place; one without samples says so, and one with too few for a tail has
    only the percentiles its samples support (marked with its count)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    pages = summary["pages"]
    names = list(pages)
    fig, ax = plt.subplots(figsize=(10, 4.8))
    width = 0.27
    top = max((pages[n][f"{q}_ms"] or 0 for n in names for q in ("p50", "p95", "p99")), default=0)
    for i, q in enumerate(("p50", "p95", "p99")):
        xs, ys = [], []
        for j, n in enumerate(names):
            v = pages[n][f"{q}_ms"]
            if v is not None:
                xs.append(j + (i - 1) * width)
                ys.append(v)
        ax.bar(xs, ys, width, label=f"sojourn {q}")
    for j, n in enumerate(names):
        p = pages[n]
        if not p["count"]:
            note, x = "no samples", j
        elif p.get("few_samples"):
            note, x = f"n={p['count']}, no p99", j + width  # where its p99 bar would be
        else:
            continue
        ax.text(x, top * 0.02, note, rotation=90, ha="center", va="bottom", fontsize=8)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    fmt = ScalarFormatter(useOffset=False)
    fmt.set_scientific(False)
    ax.yaxis.set_major_formatter(fmt)
    ax.set_ylim(bottom=0, top=(top * 1.1) or 1)
    ax.set_ylabel("sojourn latency (ms)")
    kept = "kept up" if summary.get("kept_up", True) else "fell behind"
    ax.set_title(
        f"Lobsters {summary.get('backend', '')} {summary.get('variant', '')}: "
        f"{summary['pages_per_s']:.1f} pages/s completed, "
        f"{summary['offered_pages_per_s']:g} offered ({kept})"
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
