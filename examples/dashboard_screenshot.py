"""The dashboard under load: a small news site (users, stories, votes) is read and written by a
background thread while ``noria_py.start_http_server`` serves the dashboard, and a headless
Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium) saves a screenshot.

    python examples/dashboard_screenshot.py                      # writes dashboard.png
    python examples/dashboard_screenshot.py docs/dashboard.png   # the picture in the README
"""

from __future__ import annotations

import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import noria_py

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

SCHEMA = [
    "CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)",
    "CREATE TABLE stories (id INT PRIMARY KEY, user_id INT NOT NULL, title VARCHAR(100) NOT NULL,"
    " KEY (user_id))",
    "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL,"
    " PRIMARY KEY (user_id, story_id), KEY (story_id))",
]
STORY = (
    "SELECT s.id, s.title, u.name, COUNT(v.user_id) AS votes FROM stories s"
    " JOIN users u ON u.id = s.user_id LEFT JOIN votes v ON v.story_id = s.id"
    " WHERE s.id = ? GROUP BY s.id, s.title, u.name"
)
BY_USER = "SELECT id, title FROM stories WHERE user_id = ? ORDER BY id DESC LIMIT 10"
# a correlated subquery: answered by base storage, listed as proxied
TOP = (
    "SELECT s.title FROM stories s WHERE"
    " (SELECT COUNT(*) FROM votes v WHERE v.story_id = s.id) > ? ORDER BY s.id LIMIT 5"
)
USERS, STORIES = 200, 2000


def build(conn: noria_py.Connection) -> None:
    """Create and fill the tables."""
    for ddl in SCHEMA:
        conn.execute(ddl)
    rng = random.Random(1)
    conn.executemany("INSERT INTO users VALUES (?, ?)", [(i, f"user{i}") for i in range(USERS)])
    conn.executemany(
        "INSERT INTO stories VALUES (?, ?, ?)",
        [(i, rng.randrange(USERS), f"story {i}") for i in range(STORIES)],
    )
    votes = {(rng.randrange(USERS), rng.randrange(STORIES)) for _ in range(10_000)}
    conn.executemany("INSERT INTO votes VALUES (?, ?)", sorted(votes))


class Workload:
    """Reads (skewed towards popular stories) and votes on a thread until ``stop``."""

    def __init__(self, conn: noria_py.Connection, writes_per_read: float = 0.1) -> None:
        self.conn = conn
        self.writes_per_read = writes_per_read
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="workload", daemon=True)

    def start(self) -> Workload:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        if self.failure is not None:
            raise self.failure

    def _run(self) -> None:
        rng = random.Random(2)
        cur = self.conn.cursor()
        n = 0
        try:
            while not self._stop.is_set():
                story = int(rng.paretovariate(1.2)) % STORIES
                cur.execute(STORY, (story,)).fetchall()
                cur.execute(BY_USER, (rng.randrange(USERS),)).fetchall()
                if rng.random() < self.writes_per_read:
                    cur.execute(
                        "INSERT IGNORE INTO votes VALUES (?, ?)",
                        (rng.randrange(USERS), rng.randrange(STORIES)),
                    )
                n += 1
                if n % 200 == 0:
                    cur.execute(TOP, (3,)).fetchall()
                    time.sleep(0.005)  # leave the HTTP thread some of the interpreter
        except BaseException as e:  # noqa: BLE001 - reported by stop()
            self.failure = e


def chromium(profile_dir: str, width: int = 1400, height: int = 1000):
    """A headless Chromium driven by Selenium, with a fresh profile in ``profile_dir`` and
    without the background traffic that hangs it on a machine without network."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile_dir}",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)


def refreshes(driver) -> int:
    """How many times the page has redrawn from ``/api/state``."""
    value = driver.execute_script(
        "return document.getElementById('status').dataset.refreshes || '0'"
    )
    return int(value)


def full_page_png(driver) -> bytes:
    """The whole page as a PNG, beyond the window's height (Chrome DevTools protocol)."""
    import base64

    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    return base64.b64decode(shot["data"])


def main(out: Path) -> None:
    conn = noria_py.connect(memory_limit="640KB")
    build(conn)
    workload = Workload(conn).start()
    monitor = noria_py.start_http_server(conn, "127.0.0.1", 0)
    try:
        with tempfile.TemporaryDirectory(prefix="noria-chromium-") as profile:
            driver = chromium(profile)
            try:
                driver.get(monitor.url + "/")
                deadline = time.monotonic() + 60
                while refreshes(driver) < 12 and time.monotonic() < deadline:
                    time.sleep(0.25)
                out.write_bytes(full_page_png(driver))
            finally:
                driver.quit()
    finally:
        monitor.close()
        workload.stop()
        conn.close()
    print(f"dashboard screenshot saved to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "dashboard.png"))
