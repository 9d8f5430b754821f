"""Operations: Prometheus metrics and a live dashboard over HTTP.

``noria-py serve --http HOST:PORT`` and ``noria_py.start_http_server(conn, host, port)`` start
one small HTTP server (stdlib ``http.server`` on a daemon thread) next to the engine:

* ``/metrics``: the Prometheus text format (``metrics.py``), one ``CollectorRegistry`` per
  server, every value read from the engine when scraped (nothing is counted twice on the read
  path: the counters are the ones ``SHOW CACHES`` already shows);
* read latency: a thread asks the cached lookups, a few at a time, to time their next read
  (``SelectPrepared.sample_next``); every other read runs untimed, and without a monitor no
  read is timed except the misses;
* ``/``: a self-contained page (``page.py``, no external scripts) that polls ``/api/state``
  every second and draws the caches, the proxied queries, the dataflow graph and memory and
  rates over time;
* ``/api/state``: that page's data as JSON (``state.py``).

Reads of the engine's state take the engine lock, the one writes and fills take, so a
snapshot never sees a half-applied write.
"""

from __future__ import annotations

from typing import Any


def start_http_server(target: Any, host: str = "127.0.0.1", port: int = 0) -> Any:
    """Serve metrics and the dashboard of ``target`` (a ``noria_py.connect()`` connection or an
    ``Engine``) on ``host:port`` (0 picks a free port). Returns the running server: its
    ``.port``, ``.url`` and ``.close()``."""
    from .http import MonitorServer

    return MonitorServer(target, host=host, port=port)


__all__ = ["start_http_server"]
