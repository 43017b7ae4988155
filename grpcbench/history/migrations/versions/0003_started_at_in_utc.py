"""Every run's start written in UTC, one shape, so that the store orders runs by time
with a plain ``ORDER BY`` (before, a run written at +02:00 sorted by its text).

A start that is not a time (the store took any text before) becomes the time the run
was stored. Kept change points are dropped: the order they were found in may change.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from grpcbench.history.times import utc_text

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    connection = op.get_bind()
    runs = sa.table("runs", sa.column("id"), sa.column("started_at"), sa.column("stored_at"))
    for run_id, started_at, stored_at in connection.execute(
        sa.select(runs.c.id, runs.c.started_at, runs.c.stored_at)
    ).all():
        try:
            normal = utc_text(started_at)
        except ValueError:
            normal = stored_at
        if normal != started_at:
            connection.execute(sa.update(runs).where(runs.c.id == run_id).values(started_at=normal))
    connection.execute(sa.delete(sa.table("analyses")))


def downgrade() -> None:
    pass  # the UTC text is a valid start for every earlier revision
