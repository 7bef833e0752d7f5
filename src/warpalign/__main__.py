"""``warpalign`` (the console script) and ``python -m warpalign``: the command line."""

import contextlib
import os
import signal
import sys
import threading

EXIT_INTERRUPTED = 130


def run() -> None:
    """Run :func:`warpalign.cli.main` and exit with its status.

    Ctrl-C at any moment from here on ends the process with status 130 and one line on
    stderr, never a traceback: while the command line loads (here), while it runs
    (``main``), and after it has finished, while Python shuts down.
    """
    sys.unraisablehook = _unraisable
    signal.signal(signal.SIGINT, _interrupt)
    try:
        from .cli import main
        status = main()
    except KeyboardInterrupt:
        print("warpalign: interrupted", file=sys.stderr)
        status = EXIT_INTERRUPTED
    except BaseException:
        if not _interrupted:
            raise
        # the interrupt landed inside an import that reported it as its own failure
        # (NumPy's C extensions turn it into an ImportError)
        print("warpalign: interrupted", file=sys.stderr)
        status = EXIT_INTERRUPTED
    signal.signal(signal.SIGINT, _exit_interrupted)
    if status == EXIT_INTERRUPTED:
        # Everything is cleaned up. Exit now: under ``python -m`` an interrupt that once
        # passed through a string exec() (dataclasses make those) would turn exit status
        # 130 into death by SIGINT at the end of Python's own exit.
        _exit_interrupted()
    # The command's work, files and clusters are closed; exit now too. Python's own shutdown
    # (atexit, module teardown: longer with Dask or Numba loaded) puts SIGINT back to the
    # system default first, so a Ctrl-C landing there killed the process silently (-2).
    _flush()
    os._exit(status if isinstance(status, int) else 1)


_interrupted = False
#: Seconds before an interrupt that Python could not raise is delivered again.
_AGAIN_S = 0.01


def _interrupt(signum, frame) -> None:
    """SIGINT: remembered (see :func:`run`), then raised as Python's default handler does."""
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _unraisable(info) -> None:
    if isinstance(info.exc_value, KeyboardInterrupt):
        # Ctrl-C landed where Python cannot raise it (a weakref callback, a __del__) and
        # would be lost, printed as "Exception ignored": deliver it again, from a thread
        # once this hook has returned. Sent from here, the main thread ran the handler
        # inside the hook, where it was lost the same way and the command ended with
        # status 0 (session 29); landing in such a place again, it comes back again.
        again = threading.Timer(_AGAIN_S, os.kill, (os.getpid(), signal.SIGINT))
        again.daemon = True
        again.start()
        return
    sys.__unraisablehook__(info)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def _exit_interrupted(*_signal) -> None:
    _flush()
    os._exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    run()
