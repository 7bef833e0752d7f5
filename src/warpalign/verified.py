"""Which database files were verified, so an unchanged database opens without rereading.

``Database.open`` checks every file's BLAKE2b checksum (it reads every byte: about a
second per 2 GB). After a check passes, it records each file's stamp here: its size,
modification time (ns), inode, device and the checksum ``meta.json`` expects. A later
open whose files all carry the same stamps skips the checksums; any other stamp (a file
rewritten, replaced, touched, the database rebuilt) and it verifies again. A change that
keeps size and modification time alike (a byte flipped and the time set back on purpose)
goes unnoticed: ``verify=True`` (``--verify``) always reads everything.

Records live in the user's cache (``$WARPALIGN_CACHE``, else
``$XDG_CACHE_HOME/warpalign``, else ``~/.cache/warpalign``), one small JSON file per
database path, written atomically; where it cannot be written the database is verified
on every open, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """Where the records are kept."""
    root = os.environ.get("WARPALIGN_CACHE")
    if root:
        return Path(root) / "verified"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpalign" / "verified"


def stamps(files: dict[str, str], folder: Path) -> dict[str, list] | None:
    """Each file's stamp [size, mtime_ns, inode, device, expected checksum]; ``files``
    maps file names to the checksums meta.json gives. None when a file cannot be read."""
    out = {}
    for name, checksum in sorted(files.items()):
        try:
            st = os.stat(folder / name)
        except OSError:
            return None
        out[name] = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, checksum]
    return out


def _record(folder: Path) -> Path:
    key = hashlib.blake2b(os.fsencode(os.path.realpath(folder)), digest_size=16).hexdigest()
    return cache_dir() / f"{key}.json"


def unchanged(folder: Path, files: dict[str, str]) -> bool:
    """Whether every file of the database at ``folder`` has the stamp recorded when it
    was last verified."""
    now = stamps(files, folder)
    if now is None:
        return False
    try:
        with open(_record(folder), encoding="utf-8") as fh:
            kept = json.load(fh)
    except (OSError, ValueError):
        return False
    return (isinstance(kept, dict) and kept.get("path") == os.path.realpath(folder)
            and kept.get("files") == now)


def remember(folder: Path, files: dict[str, str], before: dict[str, list] | None) -> None:
    """Record the stamps of files just verified; ``before``: their stamps taken before
    the check (nothing is recorded if a file changed while it was read). Best effort: a
    cache that cannot be written is left alone."""
    if before is None or stamps(files, folder) != before:
        return
    record = _record(folder)
    with contextlib.suppress(OSError):
        record.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=record.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"path": os.path.realpath(folder), "files": before}, fh)
            os.replace(tmp, record)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
