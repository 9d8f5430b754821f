"""Shared pytest configuration for the test suite."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# ---------------------------------------------------------------------------
# Hypothesis profiles
#
#   ci    the default: hypothesis' usual 100 examples per test.
#   long  20 times as many, for hunting bugs locally (lift pytest-timeout's 600 s limit):
#             pytest tests/differential --hypothesis-profile=long --timeout=0
#
# A test that needs more examples than others scales the profile's count (the differential
# tests run 4 times max_examples per query family) instead of fixing a number.
# ---------------------------------------------------------------------------
_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=100, **_COMMON)
settings.register_profile("long", max_examples=2000, **_COMMON)
settings.load_profile("ci")
# ---------------------------------------------------------------------------
