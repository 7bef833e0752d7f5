"""Output files of the command line: whole or absent, and errors that name them.

A command writes ``-o OUT`` into a temporary file beside OUT and renames it at the end,
so OUT appears only complete; an error names OUT (``cannot write OUT: no such
directory``), never the temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import IO


@contextlib.contextmanager
def output(path: str | None, binary: bool = False) -> Iterator[IO]:
    """stdout (``path`` None), or a file that appears only once everything was written."""
    if path is None:
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=".warpalign-",
                                   dir=os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        with os.fdopen(fd, "wb" if binary else "w") as fh:
            yield fh
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise _cannot_write(path, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_output(path: str) -> None:
    """Fail before the work when ``path`` names a file in no directory."""
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise FileNotFoundError(f"cannot write {path}: no such directory")


def _cannot_write(path: str, exc: OSError) -> OSError:
    """``cannot write OUT: no such directory`` (or the system's reason, in its words)."""
    reason = ("no such directory" if exc.errno == errno.ENOENT
              else (exc.strerror or str(exc)).lower())
    return type(exc)(f"cannot write {path}: {reason}")
