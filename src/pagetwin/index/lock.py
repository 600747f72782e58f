"""One writer per index at a time (issue 14, item 3).

A run that writes an index holds an exclusive lock on it for its whole duration: ``flock`` on
a file beside the index, ``<index>.lock`` (``index.sqlite.lock``). A second run waits for it a
bounded time (``timeout`` seconds, polling), then gives up with IndexBusy: one line naming the
index and the run holding it, which the CLI prints and exits non-zero on (IndexBusy is an
IndexError_). Readers (``pagetwin explain``, ``Index.open_readonly``) take no lock: SQLite's WAL
lets them read while a run writes.

The lock belongs to the open file, so the kernel drops it when the holder ends however it
ends (kill -9 included): a stale lock file is harmless and is never deleted (deleting it would
let a waiter that opened the old file and a newcomer that creates a new one both "hold" it).
A process that forks keeps the lock in its children while they live. flock is local: an index
on a network file system shared by several machines is not protected.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from pagetwin.index.sqlite import IndexError_

DEFAULT_TIMEOUT = 10.0  # seconds a run waits for another run writing the same index
POLL_SECONDS = 0.05


class IndexBusy(IndexError_):
    """Another run holds the index's lock and did not release it within the timeout."""


def lock_path(index_path: str | Path) -> Path:
    """The lock file of the index at ``index_path``: beside it, ``<index>.lock``."""
    p = Path(index_path)
    return p.with_name(p.name + ".lock")


class IndexLock:
    """The exclusive lock of one index, for one writer: ``with IndexLock(path, timeout):``, or
    ``acquire()`` then ``release()``. Acquiring it again in the same process while it is held
    through another IndexLock waits like another process would (flock locks open files)."""

    def __init__(
        self, index_path: str | Path, timeout: float = DEFAULT_TIMEOUT, poll: float = POLL_SECONDS, setting: str | None = None
    ) -> None:
        """``setting``: the dotted name of the setting that gives ``timeout``, named in the
        message IndexBusy gives."""
        if timeout < 0:
            raise ValueError(f"lock timeout must be 0 or more, not {timeout}")
        self.index_path = Path(index_path)
        self.path = lock_path(index_path)
        self.timeout = timeout
        self.poll = poll
        self.setting = setting
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> IndexLock:
        """Take the lock, waiting up to ``timeout`` seconds; IndexBusy when it stays taken.
        Returns self."""
        if self._fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        deadline = time.monotonic() + self.timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise self._busy(fd) from None
                    time.sleep(min(self.poll, max(0.0, deadline - time.monotonic())))
            # who holds it, for the message a waiting run gives (not part of the locking)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def _busy(self, fd: int) -> IndexBusy:
        try:
            holder = os.pread(fd, 200, 0).decode("ascii", "replace").split()
        except OSError:
            holder = []
        by = f"pagetwin run (pid {holder[0]}, started {holder[1]})" if len(holder) >= 2 else "pagetwin run"
        longer = f", or wait longer with --set {self.setting}=SECONDS" if self.setting else ""
        return IndexBusy(
            f"index {self.index_path} is being written by another {by}; waited {self.timeout:g} s "
            f"(let it finish, or use another --index{longer})"
        )

    def release(self) -> None:
        """Release the lock (nothing when it is not held)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __enter__(self) -> IndexLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self) -> None:  # an IndexLock dropped while held must not leak its fd
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
