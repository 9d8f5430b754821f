"""Summaries of a Lobsters run: a JSON-ready dict, a rich table, and a latency plot."""

from __future__ import annotations

import json
from typing import Any

from hdrh.histogram import HdrHistogram

from .data import PAGE_TYPES
from .driver import DIGITS, HIGH_US, LOW_US, RunResult


def _ms(hist, q: float) -> float | None:
    if hist.get_total_count() == 0:
        return None
    return round(hist.get_value_at_percentile(q) / 1000.0, 3)


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
            "p95_ms": _ms(st.sojourn, 95),
            "p99_ms": _ms(st.sojourn, 99),
            "max_ms": _ms(st.sojourn, 100),
            "processing_p50_ms": _ms(st.processing, 50),
            "processing_p95_ms": _ms(st.processing, 95),
            "processing_p99_ms": _ms(st.processing, 99),
        }
    out: dict[str, Any] = {
        "pages_per_s": round(result.pages_per_s, 2),
        "offered_pages_per_s": cfg.rate,
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
        f"{summary['pages_per_s']:.1f} pages/s achieved of {summary['offered_pages_per_s']:g} "
        "offered"
    )
    t = Table(title=title)
    t.add_column("page")
    t.add_column("count", justify="right")
    t.add_column("errors", justify="right")
    for col in ("p50", "p95", "p99"):
        t.add_column(f"{col} ms", justify="right")
    t.add_column("proc p50 ms", justify="right")

    def f(v):
        return "-" if v is None else f"{v:.2f}"

    for name, p in summary["pages"].items():
        t.add_row(
            name,
            str(p["count"]),
            str(p["errors"]) if p["errors"] else "",
            f(p["p50_ms"]),
            f(p["p95_ms"]),
            f(p["p99_ms"]),
            f(p["processing_p50_ms"]),
        )
    console.print(t)
    lines = [
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
        console.print(line)
    for e in summary.get("error_samples", [])[:5]:
        console.print(f"[red]error[/red] {e}")


def plot(summary: dict, path: str) -> None:
    """Sojourn p50/p95/p99 per page type, log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, p in summary["pages"].items() if p["count"]]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.27
    for i, q in enumerate(("p50", "p95", "p99")):
        xs = [j + (i - 1) * width for j in range(len(names))]
        ax.bar(xs, [summary["pages"][n][f"{q}_ms"] for n in names], width, label=q)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("sojourn latency (ms)")
    ax.set_title(
        f"Lobsters {summary.get('backend', '')} {summary.get('variant', '')}: "
        f"{summary['pages_per_s']:.0f} of {summary['offered_pages_per_s']:g} pages/s"
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
