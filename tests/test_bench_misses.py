"""Smoke test of benches/misses.py: a --quick run in process writes every section with positive
rates, and the bench's own answer check (noria vs sqlite3) stops a run on a wrong answer."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benches" / "misses.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_misses", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_run(tmp_path):
    bench = load_bench()
    out = tmp_path / "misses.json"
    result = bench.main(["--quick", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert set(result["settings"]) == {"5", "50", "500"}
    for votes, setting in result["settings"].items():
        assert setting["votes"] == setting["stories"] * int(votes)
        for section in ("cold", "mix", "hot", "writes"):
            s = setting[section]
            assert s["noria_ops_per_s"] > 0 and s["sqlite_ops_per_s"] > 0, (votes, section)
            assert s["ratio"] > 0, (votes, section)
        # every cold read is a first read: a miss each; the mix misses once per distinct key
        assert setting["cold"]["noria_reader"]["misses"] == setting["workload"]["cold_reads"]
        assert setting["mix"]["noria_reader"]["misses"] == setting["workload"]["mix_distinct_keys"]
        assert setting["hot"]["noria_reader"]["misses"] == 0
        full = setting["full_state"]
        assert full["state_bytes"] > 0 and full["bytes_per_vote"] > 0
        assert set(setting["targets_met"]) == {"cold", "mix", "hot", "writes", "full_state_bytes"}
        assert setting["answers_checked"] >= 20
    assert set(result["summary"]) == set(result["settings"])
    assert result["targets"]["mix_ratio_min"] == 5


def test_answer_check_fails_loudly():
    bench = load_bench()
    stories, votes = bench.story_rows(10), bench.vote_rows(10, 3)
    conn, _ = bench.build_noria(stories, votes)
    db, _ = bench.build_sqlite(stories, votes)
    ncur, scur = conn.cursor(), db.cursor()
    assert bench.check_answers(ncur, scur, range(10), "same rows") == 10
    db.execute("INSERT INTO votes VALUES (99, 4)")
    with pytest.raises(AssertionError, match="story 4"):
        bench.check_answers(ncur, scur, range(10), "one more vote in sqlite")
    conn.close()
    db.close()


def test_sqlite_uses_the_indexes():
    bench = load_bench()
    db, _ = bench.build_sqlite(bench.story_rows(50), bench.vote_rows(50, 2))
    plan = " ".join(r[3] for r in db.execute("EXPLAIN QUERY PLAN " + bench.VOTE_SQL, (1,)))
    assert "votes_story_id" in plan and "SCAN" not in plan
    assert isinstance(db, sqlite3.Connection)
    db.close()


def test_only_some_sections(tmp_path):
    bench = load_bench()
    out = tmp_path / "misses.json"
    result = bench.main(["--quick", "--votes", "5", "--only", "writes", "--out", str(out)])
    setting = result["settings"]["5"]
    assert "writes" in setting and setting["writes"]["ratio"] > 0
    for skipped in ("cold", "mix", "hot", "full_state"):
        assert skipped not in setting
    assert set(setting["targets_met"]) == {"writes"}
    assert set(result["summary"]["5"]) == {"stories", "writes_ratio", "targets_met"}
    # the reads left out still ran (untimed): the recheck after the writes compared answers
    assert setting["answers_checked"] > setting["workload"]["check_keys"]
    with pytest.raises(SystemExit):
        bench.parse_args(["--only", "nosuch"])
