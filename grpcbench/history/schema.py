"""The store's tables, as SQLAlchemy Core declares them (migrations: ``migrations/``).

A run keeps its whole results file and its provenance; ``figures`` holds one row per
run, series and figure, so a history is one indexed query, not a parse of every file.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

projects = Table(
    "projects",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("created_at", String(40), nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False, index=True),
    Column("started_at", String(40), nullable=False),  # its own start, in UTC (times.utc_text)
    Column("stored_at", String(40), nullable=False),
    Column("kind", String(20), nullable=False),  # run, capacity
    Column("status", String(20), nullable=False),
    Column("git_commit", String(64)),
    Column("git_branch", String(255)),
    Column("git_dirty", Boolean),
    Column("host", String(255)),
    Column("cpus", Integer),
    Column("python", String(40)),
    Column("grpcbench", String(40)),
    Column("packages", Text),  # JSON: library -> version
    Column("format_version", Integer, nullable=False),
    Column("digest", String(64), nullable=False),  # sha256 of the results, for re-imports
    Column("source", String(255)),  # the file it came from, or how it arrived
    Column("results", Text, nullable=False),  # the whole results JSON
    UniqueConstraint("project_id", "digest", name="runs_once_per_project"),
)

figures = Table(
    "figures",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("series", String(500), nullable=False),  # scenario · level · column
    Column("figure", String(40), nullable=False),  # rps, p50, p99, capacity, ...
    Column("value", Float, nullable=False),
    Column("spread", Float, nullable=False),  # the run's own uncertainty of the value
    Column("verdict", String(40), nullable=False),  # what limited it (model.verdict)
    Index("figures_by_figure_series", "figure", "series"),
    Index("figures_by_run", "run_id"),
)

# The detector's answer for a project's figure up to its newest run (JSON), so history
# and the dashboard need not run it again until a run is added (history.analyses).
analyses = Table(
    "analyses",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("figure", String(40), nullable=False),
    Column("settings", String(200), nullable=False),  # the detector's parameters
    Column("newest_run_id", Integer, nullable=False),
    Column("change_points", Text, nullable=False),
    UniqueConstraint("project_id", "figure", "settings", name="one_analysis"),
)
