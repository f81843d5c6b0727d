"""Real headless Chromium (Debian's package, driven by Playwright with executable_path; never
`playwright install`). A missing browser fails the tests: `make test` installs it."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("EXPRESS_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path("/tmp/review-shots")  # the final screenshots, to look at by hand


@pytest.fixture(scope="module")  # a live Playwright keeps an event loop in this thread: not past its module
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: `make test` installs it "
                    "(apt-get install -y chromium chromium-driver)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: `make test` installs the dev extra")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


class Page:
    """A browser tab that lets only file:, data: and 127.0.0.1 through and records the rest."""

    def __init__(self, browser, shots: Path):
        self.context = browser.new_context(viewport={"width": 1100, "height": 800})
        self.tab = self.context.new_page()
        self.external: list[str] = []
        self.errors: list[str] = []
        self.shots = shots
        self.tab.route("**/*", self._route)
        self.tab.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.tab.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "http://127.0.0.1:")):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def shot(self, name: str, full_page: bool = True) -> Path:
        """Screenshot under pytest's tmp path, copied to /tmp/review-shots/."""
        path = self.shots / f"{name}.png"
        self.tab.screenshot(path=str(path), full_page=full_page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, SHOTS / path.name)
        return path


@pytest.fixture
def page(browser, tmp_path):
    p = Page(browser, tmp_path)
    yield p
    p.context.close()
