"""Every script in examples/ runs to completion and prints what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

# Lines (after stripping surrounding spaces) each example must print; a listed example that is
# missing from examples/ fails too.
EXPECTED = {
    "dashboard_screenshot.py": ["dashboard screenshot saved to dashboard.png"],
    "quickstart.py": [
        "inserted stories 1, 2 and 3",
        "inserted 5 votes",
        "before:",
        "story 1 'Dataflow all the things': 3 votes",
        "story 2 'Partial state': 1 votes",
        "story 3 'Upqueries': 1 votes",
        "voters of story 1: alice, bob, carol",
        "stories by alice: ['Dataflow all the things', 'Partial state']",
        "updated 1 story title",
        "deleted 1 story",
        "after:",
        "story 1 'Dataflow, revisited': 4 votes",
        "story 2: (none)",
        "story 3 'Upqueries': 3 votes",
        "voters of story 1: alice, bob, carol, dave",
        "stories by alice: ['Dataflow, revisited', 'Upqueries']",
        "leaderboard:",
        "name | votes_cast",
        "alice | 1",
        "bob | 2",
        "carol | 2",
        "dave | 2",
        "alice after one more vote: 2",
        "SHOW CACHES:",
        "EXPLAIN story with votes:",
    ],
}


def test_expected_examples_exist():
    names = {path.name for path in EXAMPLES}
    assert set(EXPECTED) <= names


@pytest.mark.parametrize("script", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_example_runs(script, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line.strip() for line in proc.stdout.splitlines()]
    assert any(lines), "the example printed nothing"
    for expected in EXPECTED.get(script.name, []):
        assert expected in lines, f"{expected!r} not printed; output:\n{proc.stdout}"
    # Expected lines come out in order.
    positions = [lines.index(e) for e in EXPECTED.get(script.name, []) if e in lines]
    assert positions == sorted(positions), proc.stdout
