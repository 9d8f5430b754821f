"""The engine answers the natural page queries exactly as MariaDB does on the same data.

Both databases are primed with the same generated data, then receive the same sequence of
requests one at a time, with a deterministic clock, so they hold identical rows. A sample of the
pages' queries is then compared as multisets (ordered results as lists).
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections import Counter
from decimal import Decimal

import pytest

from noria_py.workloads.lobsters import backends, pages
from noria_py.workloads.lobsters.data import REQUEST_WEIGHTS, Workload, slug

SCALE = 0.02
REQUESTS = 400


def norm(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, Decimal)):
        return round(float(value), 6)
    if isinstance(value, dt.datetime):
        return value.replace(microsecond=0).isoformat(sep=" ")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode()
    return value


def rows_of(session, sql, params=()):
    return [tuple(norm(v) for v in r) for r in session.query(sql, params)[1]]


@pytest.fixture(scope="module")
def pair(mariadb):
    """(engine session, MariaDB session, workload) after priming and a burst of requests."""
    workload = Workload(SCALE, seed=11)
    engine = backends.EmbeddedBackend()
    maria = mariadb.backend()
    backends.prime(engine, workload)
    backends.prime(maria, workload, drop_existing=True)
    rng = random.Random(99)
    kinds = [k for k, _ in REQUEST_WEIGHTS] + ["logout"]
    # Many Story pages (they write read ribbons, which feed notifications) and every other kind.
    requests = [
        workload.make_request(
            rng, workload.users.sample(rng), "story" if i % 3 else rng.choice(kinds)
        )
        for i in range(REQUESTS)
    ]
    es, ms = engine.session(), maria.session()
    for session in (es, ms):
        ticks = itertools.count()
        old = pages.set_clock(
            lambda t=ticks: dt.datetime(2030, 1, 1) + dt.timedelta(seconds=next(t))
        )
        try:
            for req in requests:
                pages.run_request(session, req)
        finally:
            pages.set_clock(old)
    yield es, ms, workload
    ms.close()
    maria.close()
    engine.close()


def same_bag(es, ms, sql, params=()):
    a, b = rows_of(es, sql, params), rows_of(ms, sql, params)
    assert Counter(a) == Counter(b), f"{sql} {params}: engine {a[:5]} vs mariadb {b[:5]}"
    return a


def test_base_tables_agree(pair):
    es, ms, _ = pair
    for table in ("stories", "comments", "votes", "read_ribbons", "users", "taggings"):
        same_bag(es, ms, f"SELECT * FROM {table}")


def test_story_page_queries(pair):
    es, ms, w = pair
    rng = random.Random(1)
    nonempty = 0
    for _ in range(25):
        sid = w.story_votes.sample(rng)
        story = same_bag(es, ms, "SELECT * FROM story_with_votes WHERE short_id = ?", (slug(sid),))
        assert len(story) == 1
        comments = same_bag(
            es,
            ms,
            "SELECT * FROM comment_with_votes WHERE story_id = ? ORDER BY score DESC",
            (w.story_db_id(sid),),
        )
        nonempty += bool(comments)
    assert nonempty > 0


def test_scores_reflect_votes(pair):
    es, ms, _ = pair
    # the request burst cast down votes and new comments: scores other than 1 must exist
    rows = same_bag(es, ms, "SELECT id, upvotes, downvotes, score FROM story_with_votes")
    assert any(r[3] != 1 for r in rows)
    same_bag(es, ms, "SELECT id, upvotes, downvotes, score FROM comment_with_votes")


def test_frontpage_and_lists(pair):
    es, ms, _ = pair
    for order in ("ASC", "DESC"):
        sql = pages.FRONTPAGE_TOP.format(o=order)
        top_e, top_m = rows_of(es, sql), rows_of(ms, sql)
        assert top_e == top_m and len(top_e) == 51
    ids = [r[0] for r in top_e]
    same_bag(es, ms, "SELECT id, hotness FROM story_hotness")
    same_bag(
        es,
        ms,
        f"SELECT * FROM story_with_votes WHERE id IN ({', '.join('?' * len(ids))}) "
        "AND merged_story_id IS NULL AND is_expired = 0 AND score >= 0",
        ids,
    )
    recent = (
        "SELECT id FROM stories WHERE merged_story_id IS NULL AND is_expired = 0 "
        "ORDER BY id DESC LIMIT 51"
    )
    assert rows_of(es, recent) == rows_of(ms, recent)
    latest = (
        "SELECT id FROM comments WHERE is_deleted = 0 AND is_moderated = 0 "
        "ORDER BY id DESC LIMIT 40 OFFSET 0"
    )
    assert rows_of(es, latest) == rows_of(ms, latest)


def test_user_page_queries(pair):
    es, ms, w = pair
    for uid in range(0, w.nusers, 3):
        same_bag(es, ms, "SELECT * FROM user_stats WHERE id = ?", (uid,))
        same_bag(es, ms, pages.TOP_TAG_NATURAL, (uid,))


def test_notifications(pair):
    es, ms, w = pair
    counts = same_bag(es, ms, "SELECT user_id, notifications FROM notifications")
    assert counts, "the burst should leave some unread replies"
    for uid in range(w.nusers):
        same_bag(es, ms, "SELECT notifications FROM notifications WHERE user_id = ?", (uid,))
