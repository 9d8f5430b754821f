"""Seeded Lobsters data and request generator.

Popularity follows the four lobste.rs histograms (LOBSTERS.md 1.4): ids are handed out bin by
bin, low ids least popular; each id of bin 0 weighs ``width`` and each id of bin b > 0 weighs
``4 * b``. ``scale`` multiplies every histogram count (rounding half away from zero), so the data
set keeps its shape at any size: scale 1 is 5,797 users, 40,650 stories and 121,270 comments.
The request rate is set separately (``--rate``), as the thesis-era generator did.

The primed state equals what upstream's priming requests leave behind (LOBSTERS.md 1.8): every
story has the ``test`` tag and an upvote from its author, comments are spread round-robin over
stories (about half of the later rounds are replies), and each comment has its author's upvote.
Everything is a pure function of (scale, seed), so two backends loaded with the same arguments
hold identical rows.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
import random
from dataclasses import dataclass, field

# (width, "bin:count ...") per histogram, from lobste.rs on 2018-03-12.
_HISTOGRAMS = {
    "votes_per_user": (
        100,
        "0:4439 100:562 200:206 300:131 400:92 500:45 600:28 700:31 800:29 900:32 1000:14 "
        "1100:23 1200:18 1300:18 1400:13 1500:10 1600:3 1700:7 1800:8 1900:6 2000:3 2100:3 "
        "2200:4 2300:6 2400:4 2500:2 2600:3 2700:2 2800:2 2900:3 3000:2 3100:3 3200:2 3300:2 "
        "3400:1 3600:1 3800:1 3900:1 4000:1 4100:3 4200:1 4300:6 4400:1 4500:2 4600:1 4800:1 "
        "5000:1 5100:1 5400:1 5500:1 5800:2 5900:1 6000:1 6400:2 6800:1 7100:1 7700:1 8400:1 "
        "8700:1 8900:1 10100:1 10900:1 13500:1 14500:1 15100:1",
    ),
    "votes_per_story": (
        10,
        "0:16724 10:16393 20:4601 30:1707 40:680 50:281 60:128 70:60 80:35 90:16 100:4 110:4 "
        "120:10 130:1 140:2 160:1 210:1 250:1 290:1",
    ),
    "votes_per_comment": (
        10,
        "0:89907 10:27614 20:2825 30:637 40:177 50:61 60:29 70:6 80:5 90:5 100:3 150:1",
    ),
    "comments_per_story": (
        10,
        "0:33974 10:4831 20:1029 30:401 40:193 50:103 60:50 70:24 80:18 90:10 100:5 110:1 "
        "120:5 130:2 140:1 150:2 170:1",
    ),
}

SLUG_SPACE = 36**6
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"

# Request types in the order the generator tests them, with weights out of 100,000
# (LOBSTERS.md 1.1). The remainder (3) is Logout.
REQUEST_WEIGHTS = (
    ("story", 55842),
    ("frontpage", 30105),
    ("user", 6702),
    ("comments", 4674),
    ("recent", 967),
    ("comment_vote_up", 630),
    ("story_vote_up", 475),
    ("comment", 316),
    ("login", 87),
    ("comment_reply", 71),
    ("comment_vote_down", 54),
    ("submit", 53),
    ("story_vote_down", 21),
)

# Statistics are kept per page type (report order).
PAGE_TYPES = (
    "story",
    "frontpage",
    "user",
    "comments",
    "recent",
    "comment_vote",
    "story_vote",
    "comment",
    "login",
    "submit",
    "logout",
)

# Where primed timestamps start; one second apart per created row.
EPOCH = dt.datetime(2018, 3, 12, 0, 0, 0)

COMMENT_TEXT = "moar benchmarking"
COMMENT_HTML = "<p>moar benchmarking</p>\n"
STORY_DESCRIPTION = "to infinity"
STORY_HTML = "<p>to infinity</p>\n"
# Values the hand-optimized variant writes (LOBSTERS.md 5.2).
SUBMIT_HOTNESS = "-19216.2884921"
SUBMIT_HOTNESS_FINAL = "-19216.5479744"
NEW_COMMENT_CONFIDENCE = "0.1828847834138887"


def slug(n: int) -> str:
    """The 6-character base-36 short id of story or comment number ``n``."""
    if not 0 <= n < SLUG_SPACE:
        raise ValueError(f"{n} is outside the short id space")
    out = []
    for _ in range(6):
        n, d = divmod(n, 36)
        out.append(_DIGITS[d])
    return "".join(reversed(out))


def round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


class Sampler:
    """Draws ids from a popularity histogram (bin 0 holds the least popular, lowest ids)."""

    def __init__(self, width: int, bins: list[tuple[int, int]]):
        self.width = width
        self.bins: list[tuple[int, int, int]] = []  # (first id, count, weight per id)
        self._cum: list[int] = []
        first = 0
        total = 0
        for b, count in bins:
            if count <= 0:
                continue
            weight = width if b == 0 else 4 * b
            self.bins.append((first, count, weight))
            first += count
            total += count * weight
            self._cum.append(total)
        self.nvalues = first
        self.total_weight = total

    @classmethod
    def from_histogram(cls, name: str, scale: float = 1.0) -> Sampler:
        width, text = _HISTOGRAMS[name]
        bins = []
        for item in text.split():
            b, c = item.split(":")
            bins.append((int(b), round_half_up(int(c) * scale)))
        return cls(width, bins)

    def sample(self, rng: random.Random) -> int:
        r = rng.randrange(self.total_weight)
        i = bisect.bisect_right(self._cum, r)
        first, count, _ = self.bins[i]
        return first + rng.randrange(count)

    def probability(self, ident: int) -> float:
        """Probability that ``sample`` returns ``ident``."""
        for first, count, weight in self.bins:
            if first <= ident < first + count:
                return weight / self.total_weight
        return 0.0


@dataclass
class Table:
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)


@dataclass
class Request:
    """One generated request: its type, the acting user, and its parameters."""

    kind: str  # one of REQUEST_WEIGHTS' names, or "logout"
    uid: int
    story: int | None = None  # sid
    comment: int | None = None  # cid (target, or the new comment's number)
    parent: int | None = None  # cid of the parent, for replies
    profile: int | None = None  # uid shown by the User page
    up: bool = True

    @property
    def page(self) -> str:
        """The page type statistics are kept under."""
        k = self.kind
        if k.startswith("comment_vote"):
            return "comment_vote"
        if k.startswith("story_vote"):
            return "story_vote"
        if k == "comment_reply":
            return "comment"
        return k


class Workload:
    """Sizes, samplers and the priming data of one (scale, seed) pair."""

    def __init__(self, scale: float = 1.0, seed: int = 1):
        if scale <= 0:
            raise ValueError("scale must be positive")
        self.scale = scale
        self.seed = seed
        self.users = Sampler.from_histogram("votes_per_user", scale)
        self.story_votes = Sampler.from_histogram("votes_per_story", scale)
        self.comment_votes = Sampler.from_histogram("votes_per_comment", scale)
        self.story_comments = Sampler.from_histogram("comments_per_story", scale)
        self.nusers = self.users.nvalues
        self.nstories = max(self.story_votes.nvalues, self.story_comments.nvalues)
        self.ncomments = self.comment_votes.nvalues
        if min(self.nusers, self.nstories, self.ncomments) == 0:
            raise ValueError(f"scale {scale} is too small: some histogram is empty")
        self._used_stories: set[int] = set()
        self._used_comments: set[int] = set()
        # new story and comment ids are drawn from residue class ``part`` modulo ``parts``, so
        # several load generator processes never submit the same id (see ``partition``)
        self._part, self._parts = 0, 1

    # --- ids ----------------------------------------------------------------------------------
    @staticmethod
    def story_db_id(sid: int) -> int:
        return sid + 1

    @staticmethod
    def comment_db_id(cid: int) -> int:
        return cid + 1

    # --- priming data -------------------------------------------------------------------------
    def prime(self, variant: str = "natural") -> dict[str, Table]:
        """Rows of every table after priming (the ``tags`` seed row excluded)."""
        rng = random.Random(f"lobsters-prime-{self.seed}")
        optimized = variant == "optimized"
        users = Table(("id", "username"))
        users.rows = [(uid, f"user{uid}") for uid in range(self.nusers)]

        s_cols = ["id", "created_at", "user_id", "title", "description", "short_id"]
        s_cols.append("markeddown_description")
        if optimized:
            s_cols += ["upvotes", "hotness", "comments_count"]
        stories = Table(tuple(s_cols))
        taggings = Table(("id", "story_id", "tag_id"))
        votes = Table(("id", "user_id", "story_id", "comment_id", "vote"))
        story_author = []
        for sid in range(self.nstories):
            author = self.users.sample(rng)
            story_author.append(author)
            row = [
                self.story_db_id(sid),
                EPOCH + dt.timedelta(seconds=sid),
                author,
                f"Base article {sid}",
                STORY_DESCRIPTION,
                slug(sid),
                STORY_HTML,
            ]
            stories.rows.append(row)
            taggings.rows.append((sid + 1, self.story_db_id(sid), 1))
            votes.rows.append((len(votes.rows) + 1, author, self.story_db_id(sid), None, 1))

        c_cols = ["id", "created_at", "updated_at", "short_id", "story_id", "user_id"]
        c_cols += ["parent_comment_id", "comment", "markeddown_comment"]
        if optimized:
            c_cols += ["upvotes", "confidence"]
        comments = Table(tuple(c_cols))
        per_story = [0] * self.nstories
        per_user_comments: dict[int, int] = {}
        for cid in range(self.ncomments):
            sid = cid % self.nstories
            k = cid // self.nstories
            parent = None
            if k > 0 and rng.random() < 0.5:
                parent = self.comment_db_id(sid + self.nstories * rng.randrange(k))
            author = self.users.sample(rng)
            when = EPOCH + dt.timedelta(seconds=self.nstories + cid)
            row = [self.comment_db_id(cid), when, when, slug(cid), self.story_db_id(sid)]
            row += [author, parent, COMMENT_TEXT, COMMENT_HTML]
            if optimized:
                row += [1, NEW_COMMENT_CONFIDENCE]
            comments.rows.append(tuple(row))
            per_story[sid] += 1
            per_user_comments[author] = per_user_comments.get(author, 0) + 1
            votes.rows.append(
                (len(votes.rows) + 1, author, self.story_db_id(sid), self.comment_db_id(cid), 1)
            )

        if optimized:
            from decimal import Decimal

            base = Decimal(SUBMIT_HOTNESS)
            for sid, row in enumerate(stories.rows):
                row += [1, str(base - per_story[sid]), per_story[sid]]
        stories.rows = [tuple(r) for r in stories.rows]
        out = {
            "users": users,
            "stories": stories,
            "taggings": taggings,
            "comments": comments,
            "votes": votes,
        }
        if optimized:
            per_user_stories: dict[int, int] = {}
            for a in story_author:
                per_user_stories[a] = per_user_stories.get(a, 0) + 1
            ks = Table(("`key`", "value"))
            for uid in sorted(per_user_stories):
                ks.rows.append((f"user:{uid}:stories_submitted", per_user_stories[uid]))
            for uid in sorted(per_user_comments):
                ks.rows.append((f"user:{uid}:comments_posted", per_user_comments[uid]))
            out["keystores"] = ks
        return out

    # --- requests -----------------------------------------------------------------------------
    def partition(self, part: int, parts: int) -> None:
        """Draw new ids only from residue class ``part`` modulo ``parts``: one of ``parts``
        processes generating load against one database."""
        if not 0 <= part < parts:
            raise ValueError(f"part {part} is not in 0..{parts - 1}")
        self._part, self._parts = part, parts

    def _new_id(self, rng: random.Random, low: int, used: set[int]) -> int:
        parts = self._parts
        while True:
            n = rng.randrange(low, SLUG_SPACE)
            n -= (n - self._part) % parts
            if n >= low and n not in used:
                used.add(n)
                return n

    def next_request(self, rng: random.Random) -> Request:
        """Draw one request as trawler does (LOBSTERS.md 1.2 and 1.5)."""
        r = rng.randrange(100_000)
        kind = "logout"
        for name, w in REQUEST_WEIGHTS:
            if r <= w:
                kind = name
                break
            r -= w
        return self.make_request(rng, self.users.sample(rng), kind)

    def make_request(self, rng: random.Random, uid: int, kind: str) -> Request:
        """A request of ``kind`` by ``uid`` with its parameters drawn (LOBSTERS.md 1.5)."""
        req = Request(kind, uid)
        if kind == "story":
            req.story = self.story_votes.sample(rng)
        elif kind == "user":
            req.profile = self.users.sample(rng)
        elif kind.startswith("comment_vote"):
            req.comment = self.comment_votes.sample(rng)
            req.up = kind.endswith("up")
        elif kind.startswith("story_vote"):
            req.story = self.story_votes.sample(rng)
            req.up = kind.endswith("up")
        elif kind in ("comment", "comment_reply"):
            req.comment = self._new_id(rng, self.ncomments, self._used_comments)
            req.story = self.story_comments.sample(rng)
            if kind == "comment_reply":
                rounds = max(1, self.ncomments // self.nstories)
                req.parent = req.story + self.nstories * rng.randrange(rounds)
        elif kind == "submit":
            req.story = self._new_id(rng, self.nstories, self._used_stories)
        return req
