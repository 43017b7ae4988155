"""The dashboard as a reader sees it: ``grpcbench web`` in its own process, opened in
Debian's Chromium driven by Playwright (by path: nothing downloads a browser)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

# A directory (docs): the docs' screenshots and the saved runs behind them, regenerated.
REGENERATE_ENV = "GRPCBENCH_REGENERATE_DOCS"


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: .ci/run must install Debian's chromium")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return found


@contextmanager
def dashboard(url: str) -> Iterator[str]:
    """``grpcbench web --store url`` on a free port of 127.0.0.1; its address."""
    server = subprocess.Popen(
        [sys.executable, "-m", "grpcbench", "web", "--store", url, "--port", "0"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert found, line + server.stderr.read()
        yield found.group(1)
    finally:
        server.terminate()
        server.wait(10)


@contextmanager
def browser_page() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser.new_page(viewport={"width": 1100, "height": 900})
        finally:
            browser.close()
