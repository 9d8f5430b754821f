"""noria_py against SQLite on random schemas, queries and write sequences.

One test per query family. Each runs EXAMPLES_FACTOR times the hypothesis profile's
max_examples (tests/conftest.py): 100 per family, 700 in all, with the default "ci" profile
(`--hypothesis-profile=long` runs 2,000 per family).
A failure's message holds a script that reproduces it (see harness.replay).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from .harness import Scenario, run, scenarios
from .queries import FAMILIES

EXAMPLES_FACTOR = 1


@pytest.mark.parametrize("family", FAMILIES)
def test_reads_match_sqlite(family: str) -> None:
    # Built here, not at import, so that --hypothesis-profile (loaded after import) counts.
    @settings(max_examples=EXAMPLES_FACTOR * settings.default.max_examples)
    @given(scenarios(family))
    def check(scenario: Scenario) -> None:
        run(scenario)

    check()
