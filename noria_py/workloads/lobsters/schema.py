"""Lobsters schemas: the natural variant (base tables + corrected derived views) and the
hand-optimized variant (denormalized counters kept up to date by the page writes).

The natural variant is what the dataflow engine serves: pages read views such as
``story_with_votes`` and ``notifications`` and the engine keeps them current. MariaDB can run the
same DDL (its views are then evaluated on every read). The optimized variant has no derived views
except a plain notification view; ``pages.py`` maintains its counter columns.

Every statement here is MySQL dialect and loads both into the engine and into MariaDB. The
corrections against the upstream natural views are listed in this package's README.md.
"""

from __future__ import annotations

# Tables shared by both variants, with {story_extra} / {comment_extra} / {hotness_mod} filled
# in per variant. Prefix and FULLTEXT indexes are left out: no statement of the workload uses
# them. users.id is not AUTO_INCREMENT: users are always inserted with id = uid, and uid 0 would
# otherwise ask MySQL for a generated id.
_TABLES = """
CREATE TABLE users (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  username VARCHAR(50),
  karma INT NOT NULL DEFAULT 0,
  UNIQUE KEY username (username));

CREATE TABLE stories (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,{story_extra}
  created_at DATETIME,
  user_id INT UNSIGNED,
  url VARCHAR(250) DEFAULT '',
  title VARCHAR(150) NOT NULL DEFAULT '',
  description MEDIUMTEXT,
  short_id VARCHAR(6) NOT NULL DEFAULT '',
  is_expired TINYINT(1) NOT NULL DEFAULT 0,
  is_moderated TINYINT(1) NOT NULL DEFAULT 0,
  markeddown_description MEDIUMTEXT,
  story_cache MEDIUMTEXT,
  merged_story_id INT,
  unavailable_at DATETIME,
  twitter_id VARCHAR(20),
  user_is_author TINYINT(1) DEFAULT 0,
  UNIQUE KEY short_id (short_id),
  KEY created_at (created_at),
  KEY expired_moderated (is_expired, is_moderated),
  KEY is_expired (is_expired),
  KEY is_moderated (is_moderated),
  KEY merged_story_id (merged_story_id),
  KEY twitter_id (twitter_id),
  KEY user_id (user_id){story_keys});

CREATE TABLE comments (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME NOT NULL,
  updated_at DATETIME,
  short_id VARCHAR(10) NOT NULL DEFAULT '',
  story_id INT UNSIGNED NOT NULL,
  user_id INT UNSIGNED NOT NULL,
  parent_comment_id INT UNSIGNED,
  thread_id INT UNSIGNED,
  comment MEDIUMTEXT NOT NULL,
  markeddown_comment MEDIUMTEXT,
  is_deleted TINYINT(1) DEFAULT 0,
  is_moderated TINYINT(1) DEFAULT 0,
  is_from_email TINYINT(1) DEFAULT 0,
  hat_id INT,{comment_extra}
  UNIQUE KEY short_id (short_id),
  KEY story_id_short_id (story_id, short_id),
  KEY thread_id (thread_id),
  KEY user_id (user_id){comment_keys});

CREATE TABLE votes (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id INT UNSIGNED NOT NULL,
  story_id INT UNSIGNED NOT NULL,
  comment_id INT UNSIGNED,
  vote TINYINT NOT NULL,
  reason VARCHAR(1),
  KEY comment_id (comment_id),
  KEY user_id_comment_id (user_id, comment_id),
  KEY user_id_story_id (user_id, story_id));

CREATE TABLE tags (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tag VARCHAR(25) NOT NULL DEFAULT '',
  description VARCHAR(100),
  privileged TINYINT(1) DEFAULT 0,
  is_media TINYINT(1) DEFAULT 0,
  inactive TINYINT(1) DEFAULT 0,
  hotness_mod {hotness_mod},
  UNIQUE KEY tag (tag));

CREATE TABLE taggings (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  story_id INT UNSIGNED NOT NULL,
  tag_id INT UNSIGNED NOT NULL,
  UNIQUE KEY story_id_tag_id (story_id, tag_id));

CREATE TABLE read_ribbons (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  is_following TINYINT(1) DEFAULT 1,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  user_id BIGINT,
  story_id BIGINT,
  KEY story_id (story_id),
  KEY user_id (user_id));

CREATE TABLE hidden_stories (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id INT, story_id INT,
  UNIQUE KEY user_id_story_id (user_id, story_id));

CREATE TABLE saved_stories (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL,
  user_id INT, story_id INT,
  UNIQUE KEY user_id_story_id (user_id, story_id));

CREATE TABLE tag_filters (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL,
  user_id INT, tag_id INT,
  KEY user_id_tag_id (user_id, tag_id));

CREATE TABLE suggested_titles (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  story_id INT, user_id INT, title VARCHAR(150) NOT NULL DEFAULT '');

CREATE TABLE suggested_taggings (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  story_id INT, tag_id INT, user_id INT);

CREATE TABLE hats (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME, updated_at DATETIME, user_id INT, granted_by_user_id INT,
  hat VARCHAR(255) NOT NULL, link VARCHAR(255), modlog_use TINYINT(1) DEFAULT 0,
  doffed_at DATETIME);

CREATE TABLE keystores (
  `key` VARCHAR(50) NOT NULL DEFAULT '' PRIMARY KEY,
  value BIGINT);

CREATE TABLE messages (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME, author_user_id INT UNSIGNED, recipient_user_id INT UNSIGNED,
  has_been_read TINYINT(1) DEFAULT 0, subject VARCHAR(100), body MEDIUMTEXT,
  short_id VARCHAR(30), deleted_by_author TINYINT(1) DEFAULT 0,
  deleted_by_recipient TINYINT(1) DEFAULT 0,
  UNIQUE KEY short_id (short_id));

CREATE TABLE moderations (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL,
  moderator_user_id INT, story_id INT, comment_id INT, user_id INT,
  action MEDIUMTEXT, reason MEDIUMTEXT, is_from_suggestions TINYINT(1) DEFAULT 0,
  KEY created_at (created_at));

CREATE TABLE invitations (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id INT, email VARCHAR(255), code VARCHAR(255),
  created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, memo MEDIUMTEXT);

CREATE TABLE invitation_requests (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  code VARCHAR(255), is_verified TINYINT(1) DEFAULT 0, email VARCHAR(255), name VARCHAR(255),
  memo TEXT, ip_address VARCHAR(255),
  created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL);

CREATE TABLE hat_requests (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME, updated_at DATETIME, user_id INT, hat VARCHAR(255), link VARCHAR(255),
  comment TEXT)
"""

# --- natural variant: derived views -------------------------------------------------------------
# Names follow LOBSTERS.md section 3 (V1..V34). The views read by pages are story_with_votes,
# comment_with_votes, frontpage_ids, user_stats and notifications.

_VOTE_CHAIN = """
CREATE VIEW story_tag_score AS
SELECT tg.story_id AS id, SUM(t.hotness_mod) AS score
FROM taggings tg JOIN tags t ON t.id = tg.tag_id
GROUP BY tg.story_id;

CREATE VIEW comment_up_rows AS
SELECT comment_id, user_id FROM votes WHERE comment_id IS NOT NULL AND vote = 1;

CREATE VIEW comment_down_rows AS
SELECT comment_id, user_id FROM votes WHERE comment_id IS NOT NULL AND vote = 0;

CREATE VIEW comment_up_count AS
SELECT comment_id AS id, COUNT(*) AS votes FROM comment_up_rows GROUP BY comment_id;

CREATE VIEW comment_down_count AS
SELECT comment_id AS id, COUNT(*) AS votes FROM comment_down_rows GROUP BY comment_id;

CREATE VIEW comment_vote_terms AS
SELECT id, votes AS score FROM comment_up_count
UNION ALL
SELECT id, 0 - votes AS score FROM comment_down_count;

CREATE VIEW comment_score AS
SELECT id, SUM(score) AS score FROM comment_vote_terms GROUP BY id;

CREATE VIEW story_up_rows AS
SELECT story_id, user_id FROM votes WHERE comment_id IS NULL AND vote = 1;

CREATE VIEW story_down_rows AS
SELECT story_id, user_id FROM votes WHERE comment_id IS NULL AND vote = 0;

CREATE VIEW story_up_count AS
SELECT story_id AS id, COUNT(*) AS votes FROM story_up_rows GROUP BY story_id;

CREATE VIEW story_down_count AS
SELECT story_id AS id, COUNT(*) AS votes FROM story_down_rows GROUP BY story_id;

CREATE VIEW story_vote_terms AS
SELECT id, votes AS score FROM story_up_count
UNION ALL
SELECT id, 0 - votes AS score FROM story_down_count;

CREATE VIEW story_score AS
SELECT id, SUM(score) AS score FROM story_vote_terms GROUP BY id;

CREATE VIEW comment_with_votes AS
SELECT c.*,
       COALESCE(u.votes, 0) AS upvotes,
       COALESCE(d.votes, 0) AS downvotes,
       COALESCE(u.votes, 0) - COALESCE(d.votes, 0) AS score
FROM comments c
LEFT JOIN comment_up_count u ON u.id = c.id
LEFT JOIN comment_down_count d ON d.id = c.id;

CREATE VIEW story_with_votes AS
SELECT s.*,
       COALESCE(u.votes, 0) AS upvotes,
       COALESCE(d.votes, 0) AS downvotes,
       COALESCE(u.votes, 0) - COALESCE(d.votes, 0) AS score
FROM stories s
LEFT JOIN story_up_count u ON u.id = s.id
LEFT JOIN story_down_count d ON d.id = s.id;

CREATE VIEW non_author_comments AS
SELECT c.id, c.story_id
FROM comments c JOIN stories s ON s.id = c.story_id
WHERE c.user_id <> s.user_id;

CREATE VIEW story_comment_score AS
SELECT n.story_id AS id, SUM(cs.score) AS score
FROM non_author_comments n JOIN comment_score cs ON cs.id = n.id
GROUP BY n.story_id;

CREATE VIEW merged_story_score AS
SELECT s.merged_story_id AS id, ss.score
FROM story_score ss JOIN stories s ON s.id = ss.id
WHERE s.merged_story_id IS NOT NULL;

CREATE VIEW hotness_terms AS
SELECT id, score FROM story_tag_score
UNION ALL SELECT id, score FROM story_score
UNION ALL SELECT id, score FROM merged_story_score
UNION ALL SELECT id, score FROM story_comment_score;

CREATE VIEW story_hotness AS
SELECT id, SUM(score) AS hotness FROM hotness_terms GROUP BY id;

CREATE VIEW frontpage_ids AS
SELECT id FROM story_hotness ORDER BY hotness {order}, id {order} LIMIT 51;

CREATE VIEW user_comment_count AS
SELECT user_id AS id, COUNT(id) AS comments FROM comments GROUP BY user_id;

CREATE VIEW user_story_count AS
SELECT user_id AS id, COUNT(id) AS stories FROM stories GROUP BY user_id;

CREATE VIEW user_stats AS
SELECT u.id, cc.comments, sc.stories
FROM users u
LEFT JOIN user_comment_count cc ON cc.id = u.id
LEFT JOIN user_story_count sc ON sc.id = u.id;

CREATE VIEW good_comments AS
SELECT c.id, c.created_at, c.story_id, c.user_id, c.parent_comment_id,
       COALESCE(u.votes, 0) - COALESCE(d.votes, 0) AS score
FROM comments c
LEFT JOIN comment_up_count u ON u.id = c.id
LEFT JOIN comment_down_count d ON d.id = c.id
WHERE c.is_deleted = 0 AND c.is_moderated = 0;

CREATE VIEW reply_heads AS
SELECT s.user_id, s.id AS story_id, s.always_null AS pid FROM stories s
UNION ALL
SELECT g.user_id, g.story_id, g.id AS pid FROM good_comments g WHERE g.score >= 0
"""

# V32-V34. ``literal`` counts what upstream's view counts (replies to content by someone other
# than the reader); ``intended`` counts replies to the reader's own story or comment written by
# someone else, as the hand-optimized variant does.
_NOTIFICATIONS = {
    "literal": """
CREATE VIEW reply_tails AS
SELECT h.user_id, h.story_id, g.created_at
FROM reply_heads h JOIN good_comments g ON g.story_id = h.story_id
WHERE h.pid <=> g.parent_comment_id;

CREATE VIEW replying_comments_for_count AS
SELECT rr.user_id, t.created_at
FROM read_ribbons rr JOIN reply_tails t ON t.story_id = rr.story_id
WHERE rr.is_following = 1 AND t.user_id <> rr.user_id AND t.created_at > rr.updated_at;

CREATE VIEW notifications AS
SELECT user_id, COUNT(*) AS notifications FROM replying_comments_for_count GROUP BY user_id
""",
    "intended": """
CREATE VIEW reply_tails AS
SELECT h.user_id, h.story_id, g.created_at, g.user_id AS reply_user_id
FROM reply_heads h JOIN good_comments g ON g.story_id = h.story_id
WHERE h.pid <=> g.parent_comment_id;

CREATE VIEW replying_comments_for_count AS
SELECT rr.user_id, t.created_at
FROM read_ribbons rr JOIN reply_tails t ON t.story_id = rr.story_id
WHERE rr.is_following = 1 AND t.user_id = rr.user_id AND t.reply_user_id <> rr.user_id
  AND t.created_at > rr.updated_at;

CREATE VIEW notifications AS
SELECT user_id, COUNT(*) AS notifications FROM replying_comments_for_count GROUP BY user_id
""",
}

# V22, V23, V27-V29: upstream installs them but no page reads them.
_UNUSED_VIEWS = """
CREATE VIEW story_with_hotness AS
SELECT s.*, h.hotness FROM stories s LEFT JOIN story_hotness h ON h.id = s.id;

CREATE VIEW story_comment_count AS
SELECT s.id, COUNT(c.id) AS comments
FROM stories s LEFT JOIN comments c ON c.story_id = s.id GROUP BY s.id;

CREATE VIEW user_comment_karma AS
SELECT user_id AS id, SUM(score) AS karma FROM comment_with_votes GROUP BY user_id;

CREATE VIEW user_story_karma AS
SELECT user_id AS id, SUM(score) AS karma FROM story_with_votes GROUP BY user_id;

CREATE VIEW user_karma AS
SELECT u.id, ck.karma + sk.karma AS karma
FROM users u
LEFT JOIN user_comment_karma ck ON ck.id = u.id
LEFT JOIN user_story_karma sk ON sk.id = u.id
"""

# --- optimized (hand-written) variant -----------------------------------------------------------

_OPTIMIZED_NOTIFICATION_VIEW = """
CREATE VIEW replying_comments_for_count AS
SELECT rr.user_id, rr.story_id, c.id
FROM read_ribbons rr
JOIN stories s ON s.id = rr.story_id
JOIN comments c ON c.story_id = rr.story_id
LEFT JOIN comments p ON p.id = c.parent_comment_id
WHERE rr.is_following = 1
  AND c.user_id <> rr.user_id
  AND c.is_deleted = 0 AND c.is_moderated = 0
  AND CAST(c.upvotes AS SIGNED) - CAST(c.downvotes AS SIGNED) >= 0
  AND rr.updated_at < c.created_at
  AND ((p.user_id = rr.user_id AND CAST(p.upvotes AS SIGNED) - CAST(p.downvotes AS SIGNED) >= 0)
       OR (p.id IS NULL AND s.user_id = rr.user_id))
"""

VARIANTS = ("natural", "optimized")
NOTIFICATION_MODES = tuple(_NOTIFICATIONS)
FRONTPAGE_ORDERS = ("asc", "desc")


def split_statements(text: str) -> list[str]:
    """Split a script on ';' at line ends (the DDL here never has ';' inside a literal)."""
    return [s.strip() for s in text.split(";\n") if s.strip()]


def table_statements(variant: str = "natural") -> list[str]:
    """CREATE TABLE statements of ``variant``."""
    if variant == "natural":
        text = _TABLES.format(
            story_extra="\n  always_null INT,",
            story_keys="",
            comment_extra="",
            comment_keys="",
            hotness_mod="INT DEFAULT 0",
        )
    elif variant == "optimized":
        text = _TABLES.format(
            story_extra="\n  upvotes INT UNSIGNED NOT NULL DEFAULT 0,"
            "\n  downvotes INT UNSIGNED NOT NULL DEFAULT 0,"
            "\n  hotness DECIMAL(20,10) NOT NULL DEFAULT 0.0,"
            "\n  comments_count INT NOT NULL DEFAULT 0,",
            story_keys=",\n  KEY hotness (hotness)",
            comment_extra="\n  upvotes INT NOT NULL DEFAULT 0,"
            "\n  downvotes INT NOT NULL DEFAULT 0,"
            "\n  confidence DECIMAL(20,19) NOT NULL DEFAULT 0.0,",
            comment_keys=",\n  KEY confidence (confidence)",
            hotness_mod="FLOAT DEFAULT 0.0",
        )
    else:
        raise ValueError(f"unknown variant {variant!r} (expected one of {VARIANTS})")
    return split_statements(text)


def view_statements(
    variant: str = "natural",
    notifications: str = "literal",
    frontpage_order: str = "asc",
    unused_views: bool = False,
) -> list[str]:
    """CREATE VIEW statements of ``variant`` in dependency order."""
    if variant == "optimized":
        return split_statements(_OPTIMIZED_NOTIFICATION_VIEW)
    if variant != "natural":
        raise ValueError(f"unknown variant {variant!r} (expected one of {VARIANTS})")
    if notifications not in _NOTIFICATIONS:
        raise ValueError(f"unknown notification mode {notifications!r}")
    if frontpage_order not in FRONTPAGE_ORDERS:
        raise ValueError(f"unknown frontpage order {frontpage_order!r}")
    out = split_statements(_VOTE_CHAIN.format(order=frontpage_order.upper()))
    out += split_statements(_NOTIFICATIONS[notifications])
    if unused_views:
        out += split_statements(_UNUSED_VIEWS)
    return out


def seed_statements(variant: str = "natural") -> list[str]:
    """The single tag every story carries (hotness_mod 1 in natural, 0 in optimized)."""
    mod = 1 if variant == "natural" else 0
    return [f"INSERT INTO tags (id, tag, hotness_mod) VALUES (1, 'test', {mod})"]
