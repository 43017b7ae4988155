"""Continuous benchmarking: a results store, each run's figures over time, and the
change points in them (``grpcbench run --store``, ``store``, ``history``, ``web``).

Needs the ``history`` extra (SQLAlchemy, Alembic, Apache Otava), imported lazily.
"""
