"""The Lobsters workload (after trawler and the Noria thesis): a news aggregator's pages.

``data`` generates seeded users/stories/comments/votes and requests; ``schema`` holds the natural
schema with corrected views and the hand-optimized variant; ``pages`` sends each page's
statements through a small session interface; ``backends`` connects to the embedded engine, a
MySQL-protocol server or a private MariaDB; ``driver`` runs them open-loop; ``report`` prints and
saves results; ``cli`` is ``noria-py lobsters``. See README.md in this directory.
"""
