"""MySQL for paginate-vs-stream: the seed's database, given as ``--database mysql://...``.

There is no embedded MySQL; the user's own server is filled once like the
embedded PostgreSQL. The drivers are PyMySQL (sync grpcio) and aiomysql
(grpclib, grpc.aio): aiomysql is PyMySQL's protocol code on asyncio, so both
server families parse MySQL's replies with the same code and differ only in how
they wait. (asyncmy is faster, being compiled, but has no sync twin.)
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from grpcbench.backing.users_table import RowSource, UserRow, check_row_count
from grpcbench.base.errors import UsageError
from grpcbench.base.preparation import current
from grpcbench.base.secrets import redact

EXTRA_HINT = "pip install 'grpcbench[database]'"
BATCH = 5_000


def mysql_settings(uri: str) -> dict[str, Any]:
    """``mysql://user:password@host:port/database`` as PyMySQL's and aiomysql's arguments."""
    parts = urlsplit(uri)
    return {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or 3306,
        "user": unquote(parts.username or "root"),
        "password": unquote(parts.password or ""),
        "database": parts.path.lstrip("/") or None,
    }


def connect_checked(uri: str) -> Any:
    """A PyMySQL connection, or one line saying why not (password masked)."""
    try:
        import pymysql
    except ImportError:
        raise UsageError(f"--database mysql://... needs the database extra: {EXTRA_HINT}") from None
    try:
        return pymysql.connect(connect_timeout=5, autocommit=False, **mysql_settings(uri))
    except pymysql.MySQLError as error:
        raise UsageError(f"cannot reach MySQL at {redact(uri)}: {redact(str(error))}") from None


def load_table(
    uri: str,
    rows: int,
    generate: RowSource,
    create_sql: str,
) -> None:
    """As ``postgres.load_table``: made and filled when missing, refused when it differs."""
    db = connect_checked(uri)
    try:
        with db.cursor() as cursor:
            cursor.execute("SHOW TABLES LIKE 'users'")
            if cursor.fetchone():
                cursor.execute("SELECT COUNT(1) FROM users")
                check_row_count(int(cursor.fetchone()[0]), rows)
                return
            cursor.execute(create_sql)  # DDL commits by itself in MySQL
            try:
                batch: list[UserRow] = []
                for row in generate(rows):
                    batch.append(row)
                    if len(batch) == BATCH:
                        current().checkpoint()
                        cursor.executemany("INSERT INTO users VALUES (%s, %s, %s, %s)", batch)
                        batch.clear()
                if batch:
                    cursor.executemany("INSERT INTO users VALUES (%s, %s, %s, %s)", batch)
                db.commit()
            except BaseException:
                db.rollback()
                cursor.execute("DROP TABLE users")  # ours, half-filled: never left behind
                raise
    finally:
        db.close()
