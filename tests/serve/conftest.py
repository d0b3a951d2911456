"""The browser the served-app tests drive: Debian's Chromium, headless, through Playwright."""

from __future__ import annotations

import pytest
from browser import CHROMIUM


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        yield chromium
        chromium.close()
