"""One database build at a time per path, and what a killed build left behind.

A build of ``PATH`` holds ``.NAME.lock`` beside it (an ``flock``, released by the kernel
when its holder dies) and names its temporary directories ``.NAME.tmp-TAG-`` and
``.NAME.old-TAG-`` after its process (:func:`owner_tag`: host, boot, pid, start time), so
the next build can prove a killed one's leftovers dead (:func:`_dead`) and remove them
(:func:`_remove_stale`). Used by :meth:`warpalign.database.Database.build`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

from .errors import DatabaseError


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    """Hold ``.NAME.lock`` beside ``path`` (flock: released by the kernel when its holder
    dies, even by SIGKILL); removed on release, so nothing is left behind.

    Raises:
        DatabaseError: another build of ``path`` holds it.
    """
    import fcntl
    lock = path.parent / f".{path.name}.lock"
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DatabaseError(f"{path}: another build is writing it right now; try again "
                                "once it has finished") from None
        with contextlib.suppress(FileNotFoundError):
            held, now = os.fstat(fd), os.stat(lock)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                break
        os.close(fd)       # its last holder removed that file meanwhile: lock the new one
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def _start_time(pid: int) -> int | None:
    """The process's start (clock ticks after boot: /proc/PID/stat field 22), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


@functools.cache
def _host_and_boot() -> tuple[str, str]:
    """8 hex digits naming this host (its name and machine id), and 8 of its boot id
    ("0" where unknown)."""
    def read(path: str) -> str:
        try:
            with open(path, encoding="ascii") as f:
                return f.read().strip()
        except (OSError, ValueError):
            return ""

    host = hashlib.blake2b(f"{socket.gethostname()} {read('/etc/machine-id')}".encode(),
                           digest_size=4).hexdigest()
    boot = read("/proc/sys/kernel/random/boot_id").replace("-", "")[:8] or "0"
    return host, boot


def owner_tag(pid: int | None = None) -> str:
    """A process (default this one) as the names of its builds' temporary directories
    carry it: host-boot-pid-start (8 hex digits naming the host, 8 of its boot id, the
    pid, its start in clock ticks after boot, 0 where unknown). A later build of the same
    path removes the directories whose owner is provably gone."""
    pid = os.getpid() if pid is None else int(pid)
    return "-".join((*_host_and_boot(), str(pid), str(_start_time(pid) or 0)))


def _dead(host: str, boot: str, pid: int, start: int) -> bool:
    """Whether the process that ``owner_tag()`` named so is provably gone (never a guess:
    another host's build, or one this host cannot tell about, is alive)."""
    my_host, my_boot = _host_and_boot()
    if host != my_host or pid <= 0:
        return False
    if boot != my_boot:                   # an earlier boot of this host
        return "0" not in (boot, my_boot)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:               # someone else's process: it exists
        pass
    now = _start_time(pid)
    return bool(start) and now is not None and now != start   # the pid was reused


def _remove_stale(path: Path) -> None:
    """Remove the ``.NAME.tmp-*`` and ``.NAME.old-*`` directories that killed builds of
    ``path`` left beside it (see :func:`_dead`)."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(?:tmp|old)-([0-9a-f]{{8}})-([0-9a-f]+)-"
                         r"(\d+)-(\d+)-")
    found = []
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        found = [(m, e.path) for e in entries
                 if (m := pattern.match(e.name)) and e.is_dir(follow_symlinks=False)]
    for m, where in found:
        if _dead(m[1], m[2], int(m[3]), int(m[4])):
            shutil.rmtree(where, ignore_errors=True)
