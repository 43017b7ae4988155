"""What the databases of paginate-vs-stream share: the row type and the size check.

A table already there is used only when it has exactly the rows asked for, and is
never dropped: it may be the user's."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from grpcbench.base.errors import UsageError

UserRow = tuple[int, str, str, int]  # id, name, email, created_at
RowSource = Callable[[int], Iterable[UserRow]]  # the first N users, the same every time


def check_row_count(count: int, rows: int) -> None:
    if count != rows:
        raise UsageError(
            f"the database's users table has {count:,} rows where the scenario wants"
            f" {rows:,} (--server-param users=N): point --database at an empty database,"
            " or drop the table yourself"
        )
