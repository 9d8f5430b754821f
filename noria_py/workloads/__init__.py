"""Workloads that drive noria_py (and other databases) the way an application would."""
