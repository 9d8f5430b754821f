"""One function per Lobsters request: the statements that request sends (LOBSTERS.md 4 and 5).

Each page talks to a :class:`Session`, one database connection: ``query`` returns
``(column names, rows)`` and ``execute`` returns ``(rowcount, lastrowid)``. Statements use ``?``
placeholders; backends translate them. Every request runs as the acting user (logged in, not
priming), so the [L] steps always run and the [NP] steps are never skipped.

Deliberate differences from upstream, all result-preserving:

* IN-lists are bound parameters (``IN (?, ?, ...)``) instead of literals pasted into the text, and
  their length is padded to the next power of two by repeating the last value (a repeated value
  matches nothing new), so a prepared-statement cache sees a handful of statement texts instead
  of one per list length. Empty lists skip the statement.
* Frontpage step 1 selects the top 51 from ``story_hotness`` with the same ORDER BY/LIMIT as the
  ``frontpage_ids`` view instead of reading the view (the two are the same query).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Protocol

from . import data as D
from .data import Request


class Session(Protocol):
    """One connection to the database under test."""

    def query(self, sql: str, params: Sequence = ()) -> tuple[list[str], list[tuple]]: ...

    def execute(self, sql: str, params: Sequence = ()) -> tuple[int, int | None]: ...


class PageError(Exception):
    """A page found the database in a state it cannot continue from (e.g. a missing story)."""


@lru_cache(maxsize=512)
def _marks(n: int) -> str:
    return ", ".join("?" * n)


SIGNED_SCORE = "(CAST(upvotes AS SIGNED) - CAST(downvotes AS SIGNED))"


def _col(names: list[str], name: str) -> int:
    return names.index(name)


def wall_clock() -> dt.datetime:
    """Local wall-clock time in whole seconds (what DATETIME columns store)."""
    return dt.datetime.now().replace(microsecond=0)


_clock: Callable[[], dt.datetime] = wall_clock


def set_clock(fn: Callable[[], dt.datetime]) -> Callable[[], dt.datetime]:
    """Make pages take timestamps from ``fn`` (tests use a deterministic clock); returns the old."""
    global _clock
    old, _clock = _clock, fn
    return old


def _now() -> dt.datetime:
    return _clock()


def _distinct(values) -> list:
    return list(dict.fromkeys(values))


def _padded(values: list) -> list:
    """``values`` padded to the next power of two by repeating the last one."""
    n = len(values)
    size = 1 << (n - 1).bit_length()
    return values if size == n else values + [values[-1]] * (size - n)


def _select_in(s: Session, sql_head: str, values: list, tail: str = "", prefix: tuple = ()):
    """``sql_head IN (?, ...) tail`` with ``prefix`` params first; skipped when ``values`` is empty."""
    if not values:
        return [], []
    values = _padded(values)
    return s.query(f"{sql_head} IN ({_marks(len(values))}){tail}", (*prefix, *values))


# --- notifications (after every read page) --------------------------------------------------------


def _notifications(s: Session, uid: int, optimized: bool) -> None:
    if optimized:
        s.query(
            "SELECT COUNT(*) FROM replying_comments_for_count WHERE user_id = ? GROUP BY user_id",
            (uid,),
        )
    else:
        s.query("SELECT notifications FROM notifications WHERE user_id = ?", (uid,))
    s.query("SELECT * FROM keystores WHERE `key` = ?", (f"user:{uid}:unread_messages",))


# --- read pages -------------------------------------------------------------------------------------


def story(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    table = "stories" if optimized else "story_with_votes"
    names, rows = s.query(f"SELECT * FROM {table} WHERE short_id = ?", (D.slug(req.story),))
    if not rows:
        raise PageError(f"story {D.slug(req.story)} not found")
    sid = rows[0][_col(names, "id")]
    author = rows[0][_col(names, "user_id")]
    s.query("SELECT * FROM users WHERE id = ?", (author,))
    names, ribbons = s.query(
        "SELECT * FROM read_ribbons WHERE user_id = ? AND story_id = ?", (uid, sid)
    )
    now = _now()
    if ribbons:
        s.execute(
            "UPDATE read_ribbons SET updated_at = ? WHERE id = ?",
            (now, ribbons[0][_col(names, "id")]),
        )
    else:
        s.execute(
            "INSERT INTO read_ribbons (created_at, updated_at, user_id, story_id) "
            "VALUES (?, ?, ?, ?)",
            (now, now, uid, sid),
        )
    s.query("SELECT id FROM stories WHERE merged_story_id = ?", (sid,))
    if optimized:
        names, comments = s.query(
            f"SELECT * FROM comments WHERE story_id = ? ORDER BY ({SIGNED_SCORE} < 0) ASC, "
            "confidence DESC",
            (sid,),
        )
    else:
        names, comments = s.query(
            "SELECT * FROM comment_with_votes WHERE story_id = ? ORDER BY score DESC", (sid,)
        )
    ci, ui = _col(names, "id"), _col(names, "user_id")
    comment_ids = [r[ci] for r in comments]
    _select_in(s, "SELECT * FROM users WHERE id", _distinct(r[ui] for r in comments))
    if optimized:
        _select_in(s, "SELECT * FROM votes WHERE comment_id", comment_ids)
    else:
        _select_in(
            s, "SELECT * FROM votes WHERE user_id = ? AND comment_id", comment_ids, prefix=(uid,)
        )
    s.query(
        "SELECT * FROM votes WHERE user_id = ? AND story_id = ? AND comment_id IS NULL", (uid, sid)
    )
    s.query("SELECT * FROM hidden_stories WHERE user_id = ? AND story_id = ?", (uid, sid))
    s.query("SELECT * FROM saved_stories WHERE user_id = ? AND story_id = ?", (uid, sid))
    names, taggings = s.query("SELECT * FROM taggings WHERE story_id = ?", (sid,))
    ti = _col(names, "tag_id")
    _select_in(s, "SELECT * FROM tags WHERE id", _distinct(r[ti] for r in taggings))
    _notifications(s, uid, optimized)


def _story_list_tail(s: Session, uid: int, ids: list, authors: list, optimized: bool) -> None:
    """Frontpage/Recent steps 3-12 (natural) or 2-12 (optimized), given the listed story ids."""
    if optimized:
        s.query("SELECT story_id FROM hidden_stories WHERE user_id = ?", (uid,))
        s.query("SELECT * FROM tag_filters WHERE user_id = ?", (uid,))
    else:
        s.query("SELECT * FROM tag_filters WHERE user_id = ?", (uid,))
        _select_in(s, "SELECT story_id FROM taggings WHERE story_id", ids)
    _select_in(s, "SELECT * FROM users WHERE id", authors)
    _select_in(s, "SELECT * FROM suggested_titles WHERE story_id", ids)
    _select_in(s, "SELECT * FROM suggested_taggings WHERE story_id", ids)
    names, taggings = _select_in(s, "SELECT * FROM taggings WHERE story_id", ids)
    if taggings:
        ti = _col(names, "tag_id")
        _select_in(s, "SELECT * FROM tags WHERE id", _distinct(r[ti] for r in taggings))
    _select_in(
        s,
        "SELECT * FROM votes WHERE user_id = ? AND story_id",
        ids,
        " AND comment_id IS NULL",
        prefix=(uid,),
    )
    _select_in(s, "SELECT * FROM hidden_stories WHERE user_id = ? AND story_id", ids, prefix=(uid,))
    _select_in(s, "SELECT * FROM saved_stories WHERE user_id = ? AND story_id", ids, prefix=(uid,))


FRONTPAGE_TOP = "SELECT id FROM story_hotness ORDER BY hotness {o}, id {o} LIMIT 51"


def frontpage(s: Session, req: Request, optimized: bool, order: str = "asc") -> None:
    uid = req.uid
    if optimized:
        names, stories = s.query(
            "SELECT * FROM stories WHERE merged_story_id IS NULL AND is_expired = 0 AND "
            f"{SIGNED_SCORE} >= 0 ORDER BY hotness LIMIT 51 OFFSET 0"
        )
        ids = [r[_col(names, "id")] for r in stories]
    else:
        _, top = s.query(FRONTPAGE_TOP.format(o=order.upper()))
        if not top:
            raise PageError("the frontpage is empty")
        ids = [r[0] for r in top]
        names, stories = _select_in(
            s,
            "SELECT * FROM story_with_votes WHERE id",
            ids,
            " AND merged_story_id IS NULL AND is_expired = 0 AND score >= 0",
        )
    authors = _distinct(r[_col(names, "user_id")] for r in stories) if stories else []
    _story_list_tail(s, uid, ids, authors, optimized)
    _notifications(s, uid, optimized)


def recent(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    if optimized:
        names, stories = s.query(
            "SELECT * FROM stories WHERE merged_story_id IS NULL AND is_expired = 0 AND "
            f"{SIGNED_SCORE} <= 5 ORDER BY id DESC LIMIT 51"
        )
        ids = [r[_col(names, "id")] for r in stories]
    else:
        _, top = s.query(
            "SELECT id FROM stories WHERE merged_story_id IS NULL AND is_expired = 0 "
            "ORDER BY id DESC LIMIT 51"
        )
        ids = [r[0] for r in top]
        names, stories = _select_in(s, "SELECT * FROM story_with_votes WHERE id", ids)
    authors = _distinct(r[_col(names, "user_id")] for r in stories) if stories else []
    _story_list_tail(s, uid, ids, authors, optimized)
    _notifications(s, uid, optimized)


def comments(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    if optimized:
        names, rows = s.query(
            "SELECT * FROM comments WHERE is_deleted = 0 AND is_moderated = 0 "
            "ORDER BY id DESC LIMIT 40"
        )
    else:
        _, top = s.query(
            "SELECT id FROM comments WHERE is_deleted = 0 AND is_moderated = 0 "
            "ORDER BY id DESC LIMIT 40 OFFSET 0"
        )
        names, rows = _select_in(
            s, "SELECT * FROM comment_with_votes WHERE id", [r[0] for r in top]
        )
    if rows:
        ci, ui, si = _col(names, "id"), _col(names, "user_id"), _col(names, "story_id")
        comment_ids = [r[ci] for r in rows]
        authors = _distinct(r[ui] for r in rows)
        story_ids = _distinct(r[si] for r in rows)
    else:
        comment_ids, authors, story_ids = [], [], []
    _select_in(
        s, "SELECT 1 FROM hidden_stories WHERE user_id = ? AND story_id", story_ids, prefix=(uid,)
    )
    _select_in(s, "SELECT * FROM users WHERE id", authors)
    table = "stories" if optimized else "story_with_votes"
    names, stories = _select_in(s, f"SELECT * FROM {table} WHERE id", story_ids)
    story_authors = _distinct(r[_col(names, "user_id")] for r in stories) if stories else []
    _select_in(
        s, "SELECT * FROM votes WHERE user_id = ? AND comment_id", comment_ids, prefix=(uid,)
    )
    _select_in(s, "SELECT * FROM users WHERE id", story_authors)
    _notifications(s, uid, optimized)


TOP_TAG_NATURAL = (
    "SELECT t.id, COUNT(*) AS cnt FROM taggings tg JOIN tags t ON tg.tag_id = t.id "
    "JOIN stories s ON s.id = tg.story_id WHERE t.inactive = 0 AND s.user_id = ? "
    "GROUP BY t.id ORDER BY cnt DESC LIMIT 1"
)
TOP_TAG_OPTIMIZED = (
    "SELECT t.* FROM tags t JOIN taggings tg ON tg.tag_id = t.id "
    "JOIN stories s ON s.id = tg.story_id WHERE t.inactive = 0 AND s.user_id = ? "
    "GROUP BY t.id ORDER BY COUNT(*) DESC LIMIT 1"
)


def user(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    names, rows = s.query("SELECT * FROM users WHERE username = ?", (f"user{req.profile}",))
    if not rows:
        raise PageError(f"user{req.profile} not found")
    pid = rows[0][_col(names, "id")]
    if optimized:
        s.query(TOP_TAG_OPTIMIZED, (pid,))
        s.query("SELECT * FROM keystores WHERE `key` = ?", (f"user:{pid}:stories_submitted",))
        s.query("SELECT * FROM keystores WHERE `key` = ?", (f"user:{pid}:comments_posted",))
    else:
        s.query("SELECT * FROM user_stats WHERE id = ?", (pid,))
        _, top = s.query(TOP_TAG_NATURAL, (pid,))
        if top:
            s.query("SELECT * FROM tags WHERE id = ?", (top[0][0],))
    s.query("SELECT 1 FROM hats WHERE user_id = ? LIMIT 1", (pid,))
    _notifications(s, uid, optimized)


# --- writes ----------------------------------------------------------------------------------------


def _hotness_inputs(s: Session, story_id: int) -> None:
    """The three reads the optimized variant makes before recomputing a story's hotness."""
    s.query(
        "SELECT t.* FROM tags t JOIN taggings tg ON t.id = tg.tag_id WHERE tg.story_id = ?",
        (story_id,),
    )
    s.query(
        "SELECT c.upvotes, c.downvotes FROM comments c JOIN stories s ON s.id = c.story_id "
        "WHERE c.story_id = ? AND c.user_id <> s.user_id",
        (story_id,),
    )
    s.query("SELECT id FROM stories WHERE merged_story_id = ?", (story_id,))


def _bump_keystore(s: Session, key: str) -> None:
    """keystores[key] += 1, creating it at 1."""
    s.execute(
        "INSERT INTO keystores (`key`, value) VALUES (?, 1) "
        "ON DUPLICATE KEY UPDATE value = value + 1",
        (key,),
    )


def story_vote(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    names, rows = s.query("SELECT * FROM stories WHERE short_id = ?", (D.slug(req.story),))
    if not rows:
        raise PageError(f"story {D.slug(req.story)} not found")
    row = rows[0]
    sid = row[_col(names, "id")]
    s.query(
        "SELECT * FROM votes WHERE user_id = ? AND story_id = ? AND comment_id IS NULL", (uid, sid)
    )
    s.execute(
        "INSERT INTO votes (user_id, story_id, vote) VALUES (?, ?, ?)", (uid, sid, int(req.up))
    )
    if not optimized:
        return
    author = row[_col(names, "user_id")]
    h = Decimal(row[_col(names, "hotness")])
    s.execute("UPDATE users SET karma = karma + ? WHERE id = ?", (1 if req.up else -1, author))
    _hotness_inputs(s, sid)
    s.execute(
        "UPDATE stories SET upvotes = upvotes + ?, downvotes = downvotes + ?, hotness = ? "
        "WHERE id = ?",
        (int(req.up), int(not req.up), str(h - 1 if req.up else h + 1), sid),
    )


def comment_vote(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    names, rows = s.query("SELECT * FROM comments WHERE short_id = ?", (D.slug(req.comment),))
    if not rows:
        raise PageError(f"comment {D.slug(req.comment)} not found")
    row = rows[0]
    cid, sid = row[_col(names, "id")], row[_col(names, "story_id")]
    s.query(
        "SELECT * FROM votes WHERE user_id = ? AND story_id = ? AND comment_id = ?", (uid, sid, cid)
    )
    s.execute(
        "INSERT INTO votes (user_id, story_id, comment_id, vote) VALUES (?, ?, ?, ?)",
        (uid, sid, cid, int(req.up)),
    )
    if not optimized:
        return
    author = row[_col(names, "user_id")]
    up, down = int(row[_col(names, "upvotes")]), int(row[_col(names, "downvotes")])
    confidence = Decimal(up) / Decimal(up + down) if up + down else Decimal(0)
    s.execute("UPDATE users SET karma = karma + ? WHERE id = ?", (1 if req.up else -1, author))
    s.execute(
        "UPDATE comments SET upvotes = upvotes + ?, downvotes = downvotes + ?, confidence = ? "
        "WHERE id = ?",
        (int(req.up), int(not req.up), str(round(confidence, 19)), cid),
    )
    names, stories = s.query("SELECT * FROM stories WHERE id = ?", (sid,))
    h = Decimal(stories[0][_col(names, "hotness")]) if stories else Decimal(0)
    _hotness_inputs(s, sid)
    s.execute(
        "UPDATE stories SET upvotes = upvotes + ?, downvotes = downvotes + ?, hotness = ? "
        "WHERE id = ?",
        (int(req.up), int(not req.up), str(h - 1 if req.up else h + 1), sid),
    )


def comment(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    snames, rows = s.query("SELECT * FROM stories WHERE short_id = ?", (D.slug(req.story),))
    if not rows:
        raise PageError(f"story {D.slug(req.story)} not found")
    row = rows[0]
    sid, author = row[_col(snames, "id")], row[_col(snames, "user_id")]
    s.query("SELECT * FROM users WHERE id = ?", (author,))
    parent = thread = None
    if req.parent is not None:
        names, prow = s.query(
            "SELECT * FROM comments WHERE story_id = ? AND short_id = ?", (sid, D.slug(req.parent))
        )
        if prow:  # a missing parent makes it a top-level comment, as upstream does
            parent, thread = prow[0][_col(names, "id")], prow[0][_col(names, "thread_id")]
    short = D.slug(req.comment)
    s.query("SELECT 1 FROM comments WHERE short_id = ?", (short,))
    now = _now()
    cols = "created_at, updated_at, short_id, story_id, user_id, parent_comment_id, thread_id, "
    cols += "comment, markeddown_comment"
    values = [now, now, short, sid, uid, parent, thread, D.COMMENT_TEXT, D.COMMENT_HTML]
    if optimized:
        cols += ", upvotes, confidence"
        values += [1, D.NEW_COMMENT_CONFIDENCE]
    _, new_id = s.execute(
        f"INSERT INTO comments ({cols}) VALUES ({_marks(len(values))})", tuple(values)
    )
    s.query(
        "SELECT * FROM votes WHERE user_id = ? AND story_id = ? AND comment_id = ?",
        (uid, sid, new_id),
    )
    s.execute(
        "INSERT INTO votes (user_id, story_id, comment_id, vote) VALUES (?, ?, ?, 1)",
        (uid, sid, new_id),
    )
    if not optimized:
        return
    h = Decimal(row[_col(snames, "hotness")])
    s.query("SELECT id FROM stories WHERE merged_story_id = ?", (sid,))
    _, story_comments = s.query(
        "SELECT * FROM comments WHERE story_id = ? ORDER BY "
        f"({SIGNED_SCORE} < 0) ASC, confidence DESC",
        (sid,),
    )
    s.execute("UPDATE stories SET comments_count = ? WHERE id = ?", (len(story_comments), sid))
    _hotness_inputs(s, sid)
    s.execute("UPDATE stories SET hotness = ? WHERE id = ?", (str(h - 1), sid))
    _bump_keystore(s, f"user:{uid}:comments_posted")


def submit(s: Session, req: Request, optimized: bool) -> None:
    uid = req.uid
    names, tags = s.query("SELECT * FROM tags WHERE inactive = 0 AND tag IN ('test')")
    if not tags:
        raise PageError("tag 'test' not found")
    tag_id = tags[0][_col(names, "id")]
    short = D.slug(req.story)
    s.query("SELECT 1 FROM stories WHERE short_id = ?", (short,))
    cols = "created_at, user_id, title, description, short_id, markeddown_description"
    values = [_now(), uid, f"benchmark {req.story}", D.STORY_DESCRIPTION, short, D.STORY_HTML]
    if optimized:
        cols += ", upvotes, hotness"
        values += [1, D.SUBMIT_HOTNESS]
    _, sid = s.execute(f"INSERT INTO stories ({cols}) VALUES ({_marks(len(values))})", values)
    s.execute("INSERT INTO taggings (story_id, tag_id) VALUES (?, ?)", (sid, tag_id))
    if optimized:
        key = f"user:{uid}:stories_submitted"
        _bump_keystore(s, key)
        s.query("SELECT * FROM keystores WHERE `key` = ?", (key,))
    s.query(
        "SELECT * FROM votes WHERE user_id = ? AND story_id = ? AND comment_id IS NULL", (uid, sid)
    )
    s.execute("INSERT INTO votes (user_id, story_id, vote) VALUES (?, ?, 1)", (uid, sid))
    if optimized:
        s.query(
            "SELECT c.upvotes, c.downvotes FROM comments c JOIN stories s ON s.id = c.story_id "
            "WHERE c.story_id = ? AND c.user_id <> s.user_id",
            (sid,),
        )
        s.execute("UPDATE stories SET hotness = ? WHERE id = ?", (D.SUBMIT_HOTNESS_FINAL, sid))


def login(s: Session, req: Request, optimized: bool) -> None:
    name = f"user{req.uid}"
    _, rows = s.query("SELECT 1 FROM users WHERE username = ?", (name,))
    if not rows:
        s.execute("INSERT IGNORE INTO users (id, username) VALUES (?, ?)", (req.uid, name))


def logout(s: Session, req: Request, optimized: bool) -> None:
    return None


PageFn = Callable[[Session, Request, bool], None]

HANDLERS: dict[str, PageFn] = {
    "story": story,
    "frontpage": frontpage,
    "user": user,
    "comments": comments,
    "recent": recent,
    "comment_vote_up": comment_vote,
    "comment_vote_down": comment_vote,
    "story_vote_up": story_vote,
    "story_vote_down": story_vote,
    "comment": comment,
    "comment_reply": comment,
    "login": login,
    "submit": submit,
    "logout": logout,
}


def warm(
    s: Session,
    workload: D.Workload,
    optimized: bool = False,
    rounds: int = 3,
    order: str = "asc",
    seed: int = 0,
) -> None:
    """Send every request type ``rounds`` times, so that each statement is prepared once."""
    rng = random.Random(f"lobsters-warm-{seed}")
    for _ in range(rounds):
        for kind in [k for k, _ in D.REQUEST_WEIGHTS] + ["logout"]:
            req = workload.make_request(rng, workload.users.sample(rng), kind)
            run_request(s, req, optimized, order)


def run_request(s: Session, req: Request, optimized: bool = False, order: str = "asc") -> None:
    """Send every statement of ``req`` on ``s``."""
    if req.kind == "frontpage":
        frontpage(s, req, optimized, order)
    else:
        HANDLERS[req.kind](s, req, optimized)
