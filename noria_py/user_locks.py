"""Named user-level locks: MySQL's GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK and
IS_USED_LOCK (what Rails takes around its migrations, and job queues around their work).

A lock belongs to a session, not to a transaction: COMMIT and ROLLBACK leave it, RELEASE_LOCK
or the session's end release it. A session may take one name several times and then releases
it as many times. Names are compared without case, as MySQL does, and are at most 64
characters (3057 beyond). Every session of one database sees the same locks: in this process
one table per database file (or per engine, for a database in memory); across processes one
byte of ``<file>-noria-locks`` per name, locked with ``fcntl`` while a session of this process
holds the name, and the holder's connection id written beside it for IS_USED_LOCK. A process
that dies releases its locks with its file locks.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time

from . import errors as E

NAME_MAX = 64
_POLL = 0.02  # seconds between two looks at another process's lock
_SLOTS = 1 << 30  # the byte ranges of the lock file a name hashes to


def _bad_name(name: str) -> E.Error:
    return E.OperationalError(f"Incorrect user-level lock name '{name}'.", 3057, "42000")


class UserLocks:
    """The locks of one database. ``path``: its file (None: in memory, this process only)."""

    def __init__(self, path: str | None):
        self._cond = threading.Condition()
        self._held: dict[str, list] = {}  # name -> [owner, count, connection id]
        self._path = path
        self._fd: int | None = None

    # --- the lock file (several processes) ------------------------------------------------
    def _file(self) -> int | None:
        if self._path is None:
            return None
        if self._fd is None:
            self._fd = os.open(self._path + "-noria-locks", os.O_RDWR | os.O_CREAT, 0o644)
        return self._fd

    @staticmethod
    def _slot(key: str) -> int:
        return int.from_bytes(hashlib.sha1(key.encode("utf-8")).digest()[:8], "big") % _SLOTS

    @staticmethod
    def _try(fd: int, slot: int) -> bool:
        """Lock byte ``slot`` of the lock file for this process, unless another process holds
        it (then False, at once)."""
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
        except OSError:
            return False
        return True

    def _file_lock(self, key: str, conn_id: int) -> bool:
        fd = self._file()
        if fd is None:
            return True
        slot = self._slot(key)
        if not self._try(fd, slot):
            return False
        os.pwrite(fd, int(conn_id).to_bytes(8, "big"), _SLOTS + slot * 8)
        return True

    def _file_unlock(self, key: str) -> None:
        fd = self._file()
        if fd is not None:
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, self._slot(key))

    def _other_holder(self, key: str) -> int | None:
        """The connection id of another process's session holding ``key``, else None."""
        fd = self._file()
        if fd is None:
            return None
        slot = self._slot(key)
        if not self._try(fd, slot):
            return int.from_bytes(os.pread(fd, 8, _SLOTS + slot * 8).ljust(8, b"\0"), "big")
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, slot)
        return None

    # --- the functions --------------------------------------------------------------------
    @staticmethod
    def _key(name) -> str | None:
        if name is None:
            return None
        name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
        if name == "":
            return None
        if len(name) > NAME_MAX:
            raise _bad_name(name)
        return name.lower()

    def get(self, owner, conn_id: int, name, timeout) -> int | None:
        """GET_LOCK: 1 when taken, 0 when ``timeout`` seconds passed first (negative: wait
        as long as it takes), NULL for no name or no timeout."""
        key = self._key(name)
        if key is None or timeout is None:
            return None
        timeout = float(timeout)
        deadline = None if timeout < 0 else time.monotonic() + timeout
        with self._cond:
            while True:
                held = self._held.get(key)
                if held is not None and held[0] is owner:
                    held[1] += 1
                    return 1
                if held is None and self._file_lock(key, conn_id):
                    self._held[key] = [owner, 1, conn_id]
                    return 1
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return 0
                # another session of this process: woken at its release; of another process:
                # looked at again shortly
                wait = _POLL if held is None else left
                self._cond.wait(wait if left is None or wait is None else min(wait, left))

    def release(self, owner, name) -> int | None:
        """RELEASE_LOCK: 1 when released (once), 0 when another session holds it, NULL when
        nobody does."""
        key = self._key(name)
        if key is None:
            return None
        with self._cond:
            held = self._held.get(key)
            if held is None:
                return 0 if self._other_holder(key) is not None else None
            if held[0] is not owner:
                return 0
            held[1] -= 1
            if held[1] == 0:
                del self._held[key]
                self._file_unlock(key)
                self._cond.notify_all()
            return 1

    def release_all(self, owner) -> int:
        """RELEASE_ALL_LOCKS (and the session's end): how many times its locks were taken."""
        n = 0
        with self._cond:
            for key, held in list(self._held.items()):
                if held[0] is owner:
                    n += held[1]
                    del self._held[key]
                    self._file_unlock(key)
            if n:
                self._cond.notify_all()
        return n

    def used_by(self, name) -> int | None:
        """IS_USED_LOCK: the connection id of the session holding the lock, else NULL."""
        key = self._key(name)
        if key is None:
            return None
        with self._cond:
            held = self._held.get(key)
            return held[2] if held is not None else self._other_holder(key)

    def is_free(self, name) -> int | None:
        """IS_FREE_LOCK: 1 when nobody holds it, 0 when a session does."""
        key = self._key(name)
        if key is None:
            return None
        return 1 if self.used_by(key) is None else 0


_TABLES: dict[str, UserLocks] = {}
_TABLES_LOCK = threading.Lock()


def for_engine(engine) -> UserLocks:
    """The lock table of ``engine``'s database (shared by every engine on the same file)."""
    with _TABLES_LOCK:
        table = getattr(engine, "_user_locks", None)
        if table is None:
            path = getattr(engine.storage, "path", None)
            if path:
                path = os.path.realpath(path)
                table = _TABLES.get(path)
                if table is None:
                    table = _TABLES[path] = UserLocks(path)
            else:
                table = UserLocks(None)
            engine._user_locks = table
        return table
