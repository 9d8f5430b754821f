"""The dashboard in a real headless Chromium (Debian's chromium and chromium-driver, driven by
Selenium), loaded while the workload of examples/dashboard_screenshot.py reads and writes."""

from __future__ import annotations

import importlib.util
import json
import os
import time
import urllib.request
from pathlib import Path

import pytest

import noria_py

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent


def _example():
    spec = importlib.util.spec_from_file_location(
        "dashboard_screenshot", ROOT / "examples" / "dashboard_screenshot.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ex = _example()


def wait_for(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def api_state(url: str) -> dict:
    with urllib.request.urlopen(url + "/api/state", timeout=30) as resp:
        return json.loads(resp.read())


@pytest.fixture
def browser(tmp_path):
    for path in (ex.CHROMIUM, ex.CHROMEDRIVER):
        # not a skip: CI installs both (make sysdeps)
        assert os.access(path, os.X_OK), (
            f"{path} missing: run `make sysdeps` (chromium, chromium-driver)"
        )
    driver = ex.chromium(str(tmp_path / "profile"))
    yield driver
    driver.quit()


@pytest.fixture
def site():
    conn = noria_py.connect(memory_limit="640KB")
    ex.build(conn)
    workload = ex.Workload(conn).start()
    monitor = noria_py.start_http_server(conn)
    yield conn, monitor
    monitor.close()
    workload.stop()  # raises what the workload met
    conn.close()


def cache_rows(driver) -> dict[str, list[str]]:
    """The caches table as {name: cell texts}."""
    return driver.execute_script(
        """
        const out = {};
        for (const tr of document.querySelectorAll('#caches tbody tr[data-name]'))
          out[tr.dataset.name] = Array.from(tr.cells, td => td.textContent);
        return out;
        """
    )


def graph_nodes(driver) -> list[dict]:
    """The drawn nodes: id, classes, domain and first line of text."""
    return driver.execute_script(
        """
        return Array.from(document.querySelectorAll('svg#graph g.node'), g => ({
          id: Number(g.dataset.id), classes: g.getAttribute('class').split(' '),
          domain: g.dataset.domain, text: g.querySelector('text').textContent}));
        """
    )


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_dashboard_live(browser, site, tmp_path):
    conn, monitor = site
    driver = browser
    driver.get(monitor.url + "/")
    first = wait_for(lambda: ex.refreshes(driver) >= 2 and ex.refreshes(driver), "two refreshes")

    # the caches: one row per cached query, as SHOW CACHES lists them
    shown = {r[0]: r for r in conn.execute("SHOW CACHES").fetchall()}
    cached = {n: r[1] for n, r in shown.items() if r[2] == "cached"}
    rows = wait_for(lambda: len(cache_rows(driver)) == len(cached) and cache_rows(driver), "rows")
    assert {n: cells[1] for n, cells in rows.items()} == cached
    assert set(cached.values()) == {ex.STORY, ex.BY_USER}
    story = next(n for n, sql in cached.items() if sql == ex.STORY)

    # a metric moves between two refreshes: the story query's hits under the workload
    hits_before = number(cache_rows(driver)[story][2])
    wait_for(lambda: ex.refreshes(driver) >= first + 2, "two more refreshes")
    hits_after = number(cache_rows(driver)[story][2])
    assert hits_after > hits_before
    assert number(driver.find_element("id", "reads-rate").text) > 0
    for cell in cache_rows(driver)[story][3:]:
        assert cell not in ("", "-")  # misses, hit rate, keys, bytes, p50, p99 all known

    # the proxied query and why (read in one script: the page replaces its rows each second)
    proxied = wait_for(
        lambda: driver.execute_script(
            "return Array.from(document.querySelectorAll('#proxied tbody tr[data-name]'),"
            " tr => Array.from(tr.cells, td => td.textContent))"
        ),
        "proxied",
    )
    assert [cells[1] for cells in proxied] == [ex.TOP]

    # the graph: every node and edge of the engine, partial state marked, domains drawn
    state = api_state(monitor.url)
    drawn = {n["id"]: n for n in graph_nodes(driver)}
    assert sorted(drawn) == sorted(n["id"] for n in state["graph"]["nodes"])
    edges = driver.find_elements("css selector", "svg#graph path.edge")
    assert len(edges) == len(state["graph"]["edges"]) > 0
    plan = conn.execute("EXPLAIN " + ex.STORY).fetchall()
    for node_id, _op, _desc, _parents, materialization, _key, domain, _reused in plan:
        assert materialization in drawn[node_id]["classes"]
        assert drawn[node_id]["domain"] == str(domain)
    assert any("partial" in n["classes"] for n in drawn.values())
    (reader,) = [r[0] for r in plan if r[1] == "reader"]
    assert f" reader {story} " in drawn[reader]["text"]

    # memory against the budget and the rates over time
    assert driver.find_elements("css selector", "#memory-chart polyline.state_bytes")
    assert driver.find_elements("css selector", "#memory-chart line.budget")
    assert driver.find_elements("css selector", "#rate-chart polyline.reads_per_s")

    shot = tmp_path / "dashboard.png"
    assert driver.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
