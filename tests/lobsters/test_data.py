"""The data and request generator follows LOBSTERS.md section 1."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from noria_py.workloads.lobsters import data as D


def test_slug_examples():
    assert D.slug(0) == "000000"
    assert D.slug(35) == "00000z"
    assert D.slug(36) == "000010"
    assert D.slug(40_649) == "000vd5"
    assert D.slug(40_650) == "000vd6"
    assert D.slug(121_270) == "002lkm"
    with pytest.raises(ValueError):
        D.slug(36**6)


def test_sizes_at_scale_one():
    w = D.Workload(1.0)
    assert (w.nusers, w.nstories, w.ncomments) == (5797, 40650, 121270)


def test_scaled_counts_round_half_up():
    # 0.5 rounds up (Python's round() would give 0 for 0.5 and 2 for 2.5).
    s = D.Sampler.from_histogram("votes_per_story", 0.5)
    assert s.nvalues == sum(
        D.round_half_up(c * 0.5)
        for c in (16724, 16393, 4601, 1707, 680, 281, 128, 60, 35, 16, 4, 4, 10, 1, 2, 1, 1, 1, 1)
    )
    assert D.round_half_up(0.5) == 1 and D.round_half_up(2.5) == 3


def test_user_popularity_shape():
    users = D.Workload(1.0).users
    # the hottest user (the highest id, bin 15,100) acts in about 1.65 % of requests
    assert users.probability(users.nvalues - 1) == pytest.approx(0.0165, abs=0.0005)
    # bin 0 (76.6 % of ids) gets about 12.1 % of samples
    first, count, weight = users.bins[0]
    assert count / users.nvalues == pytest.approx(0.766, abs=0.001)
    assert count * weight / users.total_weight == pytest.approx(0.121, abs=0.002)
    rng = random.Random(3)
    draws = [users.sample(rng) for _ in range(20000)]
    assert all(0 <= d < users.nvalues for d in draws)
    assert sum(d >= count for d in draws) / len(draws) == pytest.approx(0.879, abs=0.01)


def test_request_mix_matches_weights():
    w = D.Workload(0.05)
    rng = random.Random(7)
    n = 100_000
    pages = Counter(w.next_request(rng).page for _ in range(n))
    assert pages["story"] / n == pytest.approx(0.55842, abs=0.006)
    assert pages["frontpage"] / n == pytest.approx(0.30105, abs=0.006)
    assert pages["user"] / n == pytest.approx(0.06702, abs=0.003)
    assert pages["comment_vote"] / n == pytest.approx(0.00684, abs=0.002)
    assert set(pages) <= set(D.PAGE_TYPES)


def test_new_ids_never_collide_and_stay_outside_primed_range():
    w = D.Workload(0.01)
    rng = random.Random(1)
    ids = [w.make_request(rng, 0, "comment").comment for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert min(ids) >= w.ncomments


def test_partitioned_workloads_draw_disjoint_new_ids():
    parts = 3
    seen: dict[int, int] = {}
    for part in range(parts):
        w = D.Workload(0.01)
        w.partition(part, parts)
        rng = random.Random(1)  # the same draws in every part: only the residue separates them
        for _ in range(500):
            req = w.make_request(rng, 0, "comment")
            assert req.comment % parts == part
            assert req.comment >= w.ncomments
            assert seen.setdefault(req.comment, part) == part
            story = w.make_request(rng, 0, "submit").story
            assert story % parts == part and story >= w.nstories
    with pytest.raises(ValueError):
        D.Workload(0.01).partition(3, 3)


def test_priming_is_deterministic_and_consistent():
    w = D.Workload(0.02, seed=4)
    a, b = w.prime(), D.Workload(0.02, seed=4).prime()
    assert a["comments"].rows == b["comments"].rows
    assert D.Workload(0.02, seed=5).prime()["comments"].rows != a["comments"].rows
    stories, comments, votes = a["stories"], a["comments"], a["votes"]
    assert len(stories.rows) == w.nstories and len(comments.rows) == w.ncomments
    # one author upvote per story and per comment
    assert len(votes.rows) == w.nstories + w.ncomments
    ids = {r[0] for r in comments.rows}
    parent_col = comments.columns.index("parent_comment_id")
    story_col = comments.columns.index("story_id")
    by_id = {r[0]: r for r in comments.rows}
    replies = [r for r in comments.rows if r[parent_col] is not None]
    assert replies, "later rounds contain replies"
    for r in replies:
        assert r[parent_col] in ids and r[parent_col] < r[0]
        assert by_id[r[parent_col]][story_col] == r[story_col]  # replies stay on their story
