"""Shared pytest configuration for the test suite."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# ---------------------------------------------------------------------------
# Hypothesis profiles
#
#   ci    the default: enough examples to catch regressions in a few minutes.
#   long  many more examples, for hunting bugs locally:
#             pytest tests/differential --hypothesis-profile=long
#
# Tests set no max_examples of their own, so the profile decides how many examples each runs.
# ---------------------------------------------------------------------------
_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=300, **_COMMON)
settings.register_profile("long", max_examples=5000, **_COMMON)
settings.load_profile("ci")
# ---------------------------------------------------------------------------
