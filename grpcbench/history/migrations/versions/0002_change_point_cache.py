"""Change points kept per project, figure and newest run, so `history` and the
dashboard answer without running the detector again (history.analyses).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "analyses",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("figure", sa.String(40), nullable=False),
        sa.Column("settings", sa.String(200), nullable=False),
        sa.Column("newest_run_id", sa.Integer, nullable=False),
        sa.Column("change_points", sa.Text, nullable=False),
        sa.UniqueConstraint("project_id", "figure", "settings", name="one_analysis"),
    )


def downgrade() -> None:
    op.drop_table("analyses")
