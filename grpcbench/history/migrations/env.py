"""Alembic's environment: the connection comes from ``history.database`` (never a URL
in a config file, where a password would sit in plain text)."""

from __future__ import annotations

from alembic import context

from grpcbench.history.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
