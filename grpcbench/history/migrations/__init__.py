"""Alembic's migrations of the results store (``history.database.open_store`` runs
them to the newest on every open, so a store made by an older grpcbench is upgraded)."""
