"""The Lobsters report: latency definitions, tails only with enough samples, every page type,
throughput wording that tells arrival noise from falling behind, and a plain linear plot."""

from __future__ import annotations

import io

import pytest

from noria_py.workloads.lobsters import report
from noria_py.workloads.lobsters.data import PAGE_TYPES
from noria_py.workloads.lobsters.driver import PageStats, RunConfig, RunResult


def make_result(
    counts: dict[str, int], rate: float = 20.0, duration: float = 20.0, measured=None, unfinished=0
) -> RunResult:
    pages = {name: PageStats() for name in PAGE_TYPES}
    for name, n in counts.items():
        st = pages[name]
        for i in range(n):
            st.processing.record_value(1000 + 10 * i)  # 1 ms and up
            st.sojourn.record_value(2000 + 20 * i)
        st.count = st.executed = n
    total = sum(counts.values()) if measured is None else measured
    return RunResult(
        config=RunConfig(rate=rate, duration=duration),
        pages=pages,
        issued=total,
        completed=total,
        measured=total,
        unfinished=unfinished,
        elapsed=duration,
        lag_s=0.0,
        error_samples=[],
    )


def render(summary: dict) -> str:
    from rich.console import Console

    buf = io.StringIO()
    report.print_report(summary, Console(file=buf, width=160, color_system=None))
    return buf.getvalue()


def test_tails_need_enough_samples_and_are_marked():
    s = report.summarize(make_result({"story": 500, "frontpage": 50, "login": 5}))
    story, front, login = s["pages"]["story"], s["pages"]["frontpage"], s["pages"]["login"]
    assert story["p99_ms"] is not None and story["few_samples"] is False
    assert front["p95_ms"] is not None and front["p99_ms"] is None and front["few_samples"]
    assert login["p50_ms"] is not None and login["p95_ms"] is None and login["p99_ms"] is None
    assert s["pages"]["submit"]["count"] == 0 and s["pages"]["submit"]["p50_ms"] is None
    text = render(s)
    assert "50*" in text and "5*" in text and "500*" not in text
    assert f"fewer than {report.MIN_P99} samples: no p99" in text


def test_every_page_type_is_listed_even_without_samples():
    s = report.summarize(make_result({"story": 200}))
    assert list(s["pages"]) == list(PAGE_TYPES)
    text = render(s)
    for name in PAGE_TYPES:
        assert f"\u2502 {name} " in text or f"| {name} " in text, name


def test_sojourn_and_processing_are_explained():
    s = report.summarize(make_result({"story": 200}))
    text = " ".join(render(s).split())
    assert "sojourn: from a request's scheduled arrival until it completes" in text
    assert "processing: from a worker starting the page until it completes" in text
    assert "proc p50" not in text
    assert s["latency_definitions"]["sojourn"] == report.SOJOURN_TEXT


def test_a_short_run_within_arrival_noise_is_not_called_saturated():
    # 20 pages/s for 20 s: 400 expected arrivals, sd 20: 364 completed is 18.2 pages/s
    s = report.summarize(make_result({"story": 364}, rate=20, duration=20))
    assert s["pages_per_s"] == pytest.approx(18.2)
    assert s["kept_up"] is True
    lo, hi = s["offered_band_pages_per_s"]
    assert lo == pytest.approx(20 - 3 * (20 / 20) ** 0.5, abs=0.01) and hi > 20
    text = report.throughput_text(s)
    assert "kept up" in text and "achieved of" not in text and "fell behind" not in text


def test_a_real_shortfall_is_called_falling_behind():
    s = report.summarize(make_result({"story": 2000}, rate=200, duration=20))  # 100 of 200
    assert s["kept_up"] is False
    assert "fell behind" in report.throughput_text(s)
    s = report.summarize(make_result({"story": 400}, rate=20, duration=20, unfinished=7))
    assert s["kept_up"] is False
    assert "7 requests unfinished" in report.throughput_text(s)


def test_arrival_band_narrows_with_longer_runs():
    short = report.arrival_band(20, 5)
    long = report.arrival_band(20, 500)
    assert short[0] < long[0] < 20 < long[1] < short[1]


def test_plot_is_linear_with_plain_labels_and_every_page(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    captured = {}
    real_close = plt.close

    def keep(fig):
        captured["fig"] = fig

    monkeypatch.setattr(plt, "close", keep)
    s = report.summarize(make_result({"story": 500, "frontpage": 30}))
    out = tmp_path / "lat.png"
    report.plot(s, str(out))
    assert out.stat().st_size > 0
    fig = captured["fig"]
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear"
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all(lbl.replace(".", "").replace("\u2212", "").isdigit() for lbl in labels)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(PAGE_TYPES)
    notes = [t.get_text() for t in ax.texts]
    assert notes.count("no samples") == len(PAGE_TYPES) - 2
    assert "n=30, no p99" in notes
    # bars: p50 for both sampled pages, p95 for both (30 >= 20), p99 only for story
    heights = [len(c.patches) for c in ax.containers]
    assert heights == [2, 2, 1]
    real_close(fig)
    assert "kept up" in ax.get_title()
