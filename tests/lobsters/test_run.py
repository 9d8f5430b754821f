"""Short open-loop runs: every page type executes without error on each backend."""

from __future__ import annotations

import argparse
import json

import pytest

from noria_py.workloads.lobsters import backends, cli
from noria_py.workloads.lobsters.data import PAGE_TYPES, Workload
from noria_py.workloads.lobsters.driver import RunConfig, run, run_processes

SCALE = 0.02


def _short_run(backend, variant: str) -> None:
    workload = Workload(SCALE, seed=2)
    backends.prime(
        backend, workload, variant, drop_existing=not isinstance(backend, backends.EmbeddedBackend)
    )
    cfg = RunConfig(
        rate=150, duration=3, warmup=0.5, in_flight=8, seed=3, variant=variant, mix="uniform"
    )
    result = run(backend, workload, cfg)
    for s in result.sessions:
        s.close()
    assert result.error_samples == []
    for page in PAGE_TYPES:
        st = result.pages[page]
        assert st.executed > 0, f"{page} never ran"
        assert st.errors == 0
    assert result.unfinished == 0
    assert result.measured > 0
    # sojourn includes processing, so it is never shorter
    for st in result.pages.values():
        if st.count:
            assert st.sojourn.get_max_value() >= st.processing.get_value_at_percentile(50)


@pytest.mark.parametrize("variant", ["natural", "optimized"])
def test_embedded_every_page(variant):
    backend = backends.EmbeddedBackend()
    try:
        _short_run(backend, variant)
        cache = backend.cache_stats()
        # only the frontpage_ids view (ORDER BY ... LIMIT inside a view) is proxied; pages read
        # the equivalent ad-hoc query, which is cached
        assert all("frontpage_ids" in q for q in cache["proxied"]), cache["proxied"]
    finally:
        backend.close()


@pytest.mark.parametrize("variant", ["natural", "optimized"])
def test_mariadb_every_page(mariadb, variant):
    backend = mariadb.backend()
    try:
        _short_run(backend, variant)
        assert backend.rss_mb() > 0
    finally:
        backend.close()


def test_mariadb_from_two_load_generator_processes(mariadb):
    """Two processes at half the rate each: their histograms merge into one result, their new
    stories and comments never collide, and every page type runs without error."""
    backend = mariadb.backend()
    try:
        workload = Workload(SCALE, seed=2)
        backends.prime(backend, workload, "natural", drop_existing=True)
        cfg = RunConfig(
            rate=120, duration=3, warmup=0.5, in_flight=8, seed=5, mix="uniform", nice=5
        )
        result = run_processes(backend.url, SCALE, 2, cfg, processes=2)
        assert result.error_samples == []
        assert result.unfinished == 0
        for page in PAGE_TYPES:
            assert result.pages[page].executed > 0, f"{page} never ran"
            assert result.pages[page].errors == 0
        counted = sum(st.count for st in result.pages.values())
        assert counted == result.measured
        assert sum(st.sojourn.get_total_count() for st in result.pages.values()) == counted
        # about 120/s * 3 s measured, from both processes together
        assert 200 <= result.measured <= 560
        session = backend.session()
        try:
            _, rows = session.query("SELECT COUNT(*), COUNT(DISTINCT short_id) FROM comments")
            assert rows[0][0] == rows[0][1]
        finally:
            session.close()
    finally:
        backend.close()


def test_open_loop_rate_is_met_at_light_load():
    backend = backends.EmbeddedBackend()
    try:
        workload = Workload(SCALE, seed=1)
        backends.prime(backend, workload)
        result = run(backend, workload, RunConfig(rate=40, duration=3, warmup=1, in_flight=4))
        # Poisson arrivals: about 120 requests measured in 3 s; achieved close to offered
        assert 70 <= result.measured <= 180
        assert result.pages_per_s == pytest.approx(result.measured / 3, rel=0.2)
    finally:
        backend.close()


def test_cli_json_report(tmp_path):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    out, png = tmp_path / "run.json", tmp_path / "run.png"
    args = parser.parse_args(
        [
            "--scale",
            "0.01",
            "--rate",
            "60",
            "--duration",
            "2",
            "--warmup",
            "0.5",
            "--in-flight",
            "4",
            "--json",
            str(out),
            "--plot",
            str(png),
        ]
    )
    assert cli.run_from_args(args) == 0
    summary = json.loads(out.read_text())
    for key in ("pages_per_s", "offered_pages_per_s", "errors", "rss_mb", "pages"):
        assert key in summary
    assert summary["offered_pages_per_s"] == 60
    assert summary["errors"] == 0
    assert summary["rss_mb"] > 0
    assert set(summary["pages"]) == set(PAGE_TYPES)
    story = summary["pages"]["story"]
    assert story["count"] > 0
    # a page with fewer than 100 samples has no p99 (and under 20 no p95), and is flagged
    assert story["p50_ms"] is not None
    if story["count"] < 100:
        assert story["p99_ms"] is None and story["few_samples"]
    else:
        assert story["p50_ms"] <= story["p95_ms"] <= story["p99_ms"]
    if story["p95_ms"] is not None:
        assert story["p50_ms"] <= story["p95_ms"]
    assert png.stat().st_size > 0


def test_cli_refuses_processes_for_the_embedded_engine(capsys):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["--scale", "0.01", "--processes", "2"])
    assert cli.run_from_args(args) == 2
    assert "--processes applies to MySQL-protocol backends" in capsys.readouterr().err
