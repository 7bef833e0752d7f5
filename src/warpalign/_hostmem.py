"""The host's malloc: freed memory kept at the top of the heap for the next array.

The host steps of a bulk call (32,768 pairs' end cells, segments, offsets and checks; a
search's hits) make and free NumPy arrays of 0.1-30 MB by the dozen. glibc's malloc
hands the top of its heap back to the kernel as soon as more than twice the largest freed
block lies free there, so the next arrays of the same sizes fault their pages in again,
one by one. On the hosts of the GPU machines (virtual machines) an elementwise NumPy op
over 32,768 int64 then cost ~65 us instead of ~15 us, and the host steps of
``score_pairs(mode="full")`` were bound by it (docs/gpu-notes.md, session 31).
``M_TOP_PAD`` makes malloc keep that much free memory at the top when it trims (and ask
for that much more when it grows): the arrays of the next step and the next call reuse
pages already mapped. It is set once, when warpalign is imported, for the whole process
(malloc has no setting per library); ``WARPALIGN_MALLOC_TOP_PAD`` (bytes; ``0``: leave
malloc as it is) chooses the pad. Other C libraries (musl, macOS, Windows) are left alone.
"""

from __future__ import annotations

import os
import sys

#: Bytes malloc keeps free at the top of its heap (``M_TOP_PAD``), unless
#: ``WARPALIGN_MALLOC_TOP_PAD`` says otherwise: at most this much more resident memory.
TOP_PAD = 64 << 20
_M_TOP_PAD = -2          # glibc's malloc.h


def pad_from_environment(value: str | None) -> int:
    """The pad ``WARPALIGN_MALLOC_TOP_PAD`` asks for (its default when unset)."""
    if value is None or not value.strip():
        return TOP_PAD
    try:
        pad = int(value)
    except ValueError:
        pad = -1
    if pad < 0:
        raise ValueError(f"WARPALIGN_MALLOC_TOP_PAD={value!r}: expected a number of bytes >= 0 "
                         "(0 leaves malloc as it is)")
    return pad


def keep_freed_memory() -> int:
    """Sets glibc's ``M_TOP_PAD`` to the pad of :func:`pad_from_environment`; returns the
    pad set (0 where nothing was set: pad 0, or a C library other than glibc)."""
    pad = pad_from_environment(os.environ.get("WARPALIGN_MALLOC_TOP_PAD"))
    if not pad or not sys.platform.startswith("linux"):
        return 0
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version       # glibc only: musl has no such symbol
        done = libc.mallopt(_M_TOP_PAD, ctypes.c_int(min(pad, (1 << 31) - 1)))
    except (OSError, AttributeError):
        return 0
    return pad if done == 1 else 0
