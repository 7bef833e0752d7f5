"""The checksums of a database's array files (``meta.json``: ``"blake2b"`` of each file).

Two forms, told apart by the file's entry in ``meta.json``:

* chunked (builds since issue 23; the entry holds ``"blake2b_chunk": CHUNK``): the
  BLAKE2b-256 of the BLAKE2b-256 digests of the file's consecutive ``CHUNK``-byte pieces
  (the last may be shorter; an empty file has no piece), joined in file order. The
  pieces hash on several threads at once (``hashlib`` lets go of the GIL on large
  buffers), so a 10 GB file is no longer ~17 s of one core;
* whole (older databases: no ``"blake2b_chunk"``): the BLAKE2b-256 of the whole file,
  one thread.

:func:`file_checksum` computes either; ``Database.open`` verifies both.

Example:
    >>> import hashlib
    >>> combine([piece_digest(b"ab"), piece_digest(b"c")]) == hashlib.blake2b(
    ...     hashlib.blake2b(b"ab", digest_size=32).digest()
    ...     + hashlib.blake2b(b"c", digest_size=32).digest(), digest_size=32).hexdigest()
    True
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Bytes of a chunk of the chunked form.
CHUNK = 1 << 24
#: The key of ``meta.json``'s file entry that marks the chunked form (its chunk size).
CHUNK_KEY = "blake2b_chunk"
_READ_BLOCK = 1 << 22


def piece_digest(data: Any) -> bytes:
    """The BLAKE2b-256 digest of one chunk (bytes or a buffer)."""
    return hashlib.blake2b(data, digest_size=32).digest()


def combine(digests: Iterable[bytes]) -> str:
    """The chunked checksum (hex) of a file whose chunks have ``digests``, in order."""
    return hashlib.blake2b(b"".join(digests), digest_size=32).hexdigest()


def file_checksum(path: Path, chunk: int | None, *, threads: int = 1) -> str:
    """The checksum (hex) of the file ``path``: chunked of ``chunk`` bytes (on
    ``threads`` threads, each reading its chunks with ``pread``), or whole (``chunk``
    None).

    Raises:
        ValueError: ``chunk`` is not a positive int.
    """
    if chunk is None:
        digest = hashlib.blake2b(digest_size=32)
        with open(path, "rb") as f:
            while block := f.read(_READ_BLOCK):
                digest.update(block)
        return digest.hexdigest()
    if not isinstance(chunk, int) or isinstance(chunk, bool) or chunk <= 0:
        raise ValueError(f"invalid checksum chunk size: {chunk!r}; expected a positive int")
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size

        def one(offset: int) -> bytes:
            want = min(chunk, size - offset)
            buf = bytearray(want)
            view, got = memoryview(buf), 0
            while got < want:
                n = os.preadv(fd, [view[got:]], offset + got)
                if n == 0:
                    raise OSError(f"{path}: shorter than its size while read")
                got += n
            return piece_digest(buf)

        offsets = range(0, size, chunk)
        if threads <= 1 or len(offsets) < 2:
            return combine(map(one, offsets))
        with concurrent.futures.ThreadPoolExecutor(min(threads, len(offsets)),
                                                   "checksum") as pool:
            return combine(pool.map(one, offsets))
    finally:
        os.close(fd)
