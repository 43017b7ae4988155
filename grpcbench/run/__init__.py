"""Orchestration: a run's options checked and frozen, the runner that starts servers
and drivers per level, the measurement of one level, and the capacity search."""
