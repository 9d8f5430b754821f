"""Differential tests: random schemas, queries and writes, checked against SQLite.

``schema`` draws tables and literal values, ``queries`` draws SELECTs and views over them,
``writes`` draws INSERT/UPDATE/DELETE statements, ``harness`` runs a scenario on noria_py and on
an in-memory SQLite database side by side and compares every read.

``test_differential`` runs random scenarios per query family, ``test_regressions`` replays
shrunk failures, ``test_harness`` checks that the comparison itself reports wrong answers.
"""
