"""The first schema: projects, runs (results and provenance), figures.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("started_at", sa.String(40), nullable=False),
        sa.Column("stored_at", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("git_commit", sa.String(64)),
        sa.Column("git_branch", sa.String(255)),
        sa.Column("git_dirty", sa.Boolean),
        sa.Column("host", sa.String(255)),
        sa.Column("cpus", sa.Integer),
        sa.Column("python", sa.String(40)),
        sa.Column("grpcbench", sa.String(40)),
        sa.Column("packages", sa.Text),
        sa.Column("format_version", sa.Integer, nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("source", sa.String(255)),
        sa.Column("results", sa.Text, nullable=False),
        sa.UniqueConstraint("project_id", "digest", name="runs_once_per_project"),
    )
    op.create_index("ix_runs_project_id", "runs", ["project_id"])
    op.create_table(
        "figures",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("series", sa.String(500), nullable=False),
        sa.Column("figure", sa.String(40), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("spread", sa.Float, nullable=False),
        sa.Column("verdict", sa.String(40), nullable=False),
    )  # fmt: skip
    op.create_index("figures_by_figure_series", "figures", ["figure", "series"])
    op.create_index("figures_by_run", "figures", ["run_id"])


def downgrade() -> None:
    op.drop_table("figures")
    op.drop_table("runs")
    op.drop_table("projects")
