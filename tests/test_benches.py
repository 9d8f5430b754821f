"""Smoke tests of the partial-state benchmarks: each script runs at a tiny size as a subprocess
and writes JSON with the expected keys (and the migration plot)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent.parent / "benches"


def run(script: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, str(BENCHES / script), *args],
        check=True,
        timeout=50,
        capture_output=True,
    )


def test_vote_bench(tmp_path):
    out = tmp_path / "vote.json"
    run("vote.py", "--stories", "2000", "--ops", "2000", "--out", str(out))
    result = json.loads(out.read_text())
    for key in ("partial_state_bytes", "full_state_bytes", "memory_ratio", "targets"):
        assert key in result
    for mode in ("full", "partial", "budget"):
        run_ = result[mode]
        for key in ("reads_per_s", "p50_ms", "p95_ms", "p99_ms", "hit_rate", "state_bytes"):
            assert run_[key] is not None, (mode, key)
        assert run_["rss_mb"] > 0
    assert result["full"]["hit_rate"] == 1.0
    assert result["partial_state_bytes"] < result["full_state_bytes"]
    assert result["budget"]["evictions"] > 0
    assert result["answer_mismatches_vs_full"] == {"partial": 0, "budget": 0}


def test_migration_bench(tmp_path):
    out = tmp_path / "migration.json"
    png = tmp_path / "migration.png"
    run(
        "migration.py",
        "--stories",
        "2000",
        "--warmup-ops",
        "500",
        "--window",
        "2",
        "--out",
        str(out),
        "--png",
        str(png),
    )
    result = json.loads(out.read_text())
    for key in ("first_read_ms", "full_build_ms", "hit_rate_per_s", "seconds_to_90pct_hits"):
        assert key in result
    assert len(result["hit_rate_per_s"]) == 2
    assert result["partial"]["view_status"] == "cached"
    assert result["same_first_answer"]
    assert png.stat().st_size > 0


def test_upqueries_bench(tmp_path):
    out = tmp_path / "upqueries.json"
    run("upqueries.py", "--stories", "300", "--reads", "300", "--out", str(out))
    result = json.loads(out.read_text())
    for name in ("cold_vote", "cold_union", "zipf_mixed", "zipf_mixed_evicting"):
        assert set(result[name]) == {"direct", "messages"}
        assert result["ratio_" + name] > 0


def test_msg_lookup_joins_bench(tmp_path):
    out = tmp_path / "msg_lookup_joins.json"
    run(
        "msg_lookup_joins.py",
        "--stories",
        "300",
        "--ops",
        "200",
        "--repeat",
        "1",
        "--out",
        str(out),
    )
    result = json.loads(out.read_text())
    for metric in ("cold_us", "hot_us", "write_us"):
        assert set(result["us_per_op_best"][metric]) == {
            "direct",
            "messages_copying",
            "messages_lookup",
        }
        assert result["ratio_messages_lookup_vs_direct"][metric] > 0


def test_concurrency_bench(tmp_path):
    out = tmp_path / "concurrency.json"
    run(
        "concurrency.py",
        *("--stories", "300", "--seconds", "0.3", "--writes", "200", "--out", str(out)),
    )
    result = json.loads(out.read_text())
    for mode in ("inline", "threads", "domain_threads"):
        assert result[mode]["single_thread_writes_per_s"] > 0
        assert result[mode]["reads_alone"]["reads_per_s"] > 0
    for key in ("read_ratio_under_writes", "domain_threads_over_threads_writes"):
        assert result[key] > 0


def test_ranges_bench(tmp_path):
    out = tmp_path / "ranges.json"
    run(
        "ranges.py",
        "--rows",
        "3000",
        "--keys",
        "30",
        "--reads",
        "1500",
        "--rounds",
        "1",
        "--writes",
        "300",
        "--out",
        str(out),
    )
    result = json.loads(out.read_text())
    for key in (
        "range_read_ratio",
        "page_read_ratio",
        "range_aggregate_ratio",
        "range_distinct_ratio",
        "partial_range_bytes",
        "full_bytes",
    ):
        assert result[key] is not None, key
    queries = ("key", "page", "agg", "distinct")
    for mode in ("partial", "full"):
        for query in queries:
            assert result[mode][query]["reads_per_s"] > 0
    assert 0 < result["partial_range_bytes"] < result["full_bytes"]
    assert result["answer_mismatches_after_writes"] == {
        "partial": dict.fromkeys(queries, 0),
        "full": dict.fromkeys(queries, 0),
    }
    partial_readers = result["partial"]["readers"].values()
    assert all(r["materialization"] == "partial" for r in partial_readers)


def test_like_prefix_bench(tmp_path):
    out = tmp_path / "like_prefix.json"
    run(
        "like_prefix.py",
        *("--rows", "3000", "--reads", "800", "--rounds", "1", "--writes", "200"),
        *("--out", str(out)),
    )
    result = json.loads(out.read_text())
    assert result["like_prefix_ratio"] > 0 and result["like_count_ratio"] > 0
    assert set(result["caches"].values()) == {"cached"}
    assert result["answer_mismatches_after_writes"] == {"prefix": 0, "count": 0}


def test_write_split_bench(tmp_path):
    out = tmp_path / "write_split.json"
    run(
        "write_split.py",
        *("--stories", "500", "--votes", "3", "--writes", "400", "--chunk", "50"),
        *("--out", str(out)),
    )
    result = json.loads(out.read_text())
    for side in ("with_view", "without_view"):
        r = result[side]
        assert r["noria_us"] > 0 and r["sqlite_us"] > 0 and r["ratio"] > 0
        assert r["storage_insert_us"] > 0 and r["engine_path_us"] > 0
    assert result["with_view"]["dataflow_us"] > result["without_view"]["dataflow_us"]


def test_load_stream_bench(tmp_path):
    out = tmp_path / "load_stream.json"
    run(
        "load_stream.py",
        *("--rows", "20000", "--rounds", "1", "--cache-mb", "1"),
        "--out",
        str(out),
    )
    result = json.loads(out.read_text())
    for label, ways in (
        ("beyond_the_cache", ("written_while_checked", "read_twice")),
        ("within_the_cache", ("written_while_checked", "checked_first")),
    ):
        for source in ("csv", "parquet"):
            assert all(result[label][source][w] > 0 for w in ways)


def test_cold_start_bench(tmp_path):
    out = tmp_path / "cold_start.json"
    run("cold_start.py", "--scale", "0.005", "--rounds", "1", "--out", str(out))
    result = json.loads(out.read_text())
    assert result["answers_checked"] == 1
    for side in ("noria", "sqlite"):
        r = result[side]
        assert r["total_s"] >= r["connect_s"] > 0 and r["import_s"] > 0
        assert set(r["read_s"]) == {
            "frontpage_top",
            "frontpage_stories",
            "story",
            "story_comments",
            "user_stats",
            "notifications",
        }
    assert result["ratio"] > 0
