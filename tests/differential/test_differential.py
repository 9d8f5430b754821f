"""noria_py against SQLite on random schemas, queries and write sequences.

One test per query family; each runs as many examples as the hypothesis profile says (see
tests/conftest.py). A failure's message holds a script that reproduces it (see harness.replay).
"""

from __future__ import annotations

import pytest
from hypothesis import given

from .harness import Scenario, run, scenarios
from .queries import FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_reads_match_sqlite(family: str) -> None:
    @given(scenarios(family))
    def check(scenario: Scenario) -> None:
        run(scenario)

    check()
