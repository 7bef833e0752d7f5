"""Characters to codes on the GPU: the ``encode`` engine of the CUDA backend (issue 22).

``encode(raw, table)`` returns the codes on the device, the index of the first character
without a code (or -1) and, when asked, how often each code occurs. One kernel
(``encode.cu``) does the table lookup, finds the first INVALID code and the largest code
in one pass; the host reads two words per side back, both sides of a batch in one copy
(:func:`encode_sides`).

* A CuPy array is encoded where it is, on the caller's current stream (after the work
  queued there): no copy to the host, one launch.
* A NumPy array goes up in chunks of :data:`STAGE_BYTES` through two pinned staging
  buffers on the calling thread's copy stream: Numba's threads fill one buffer (pageable
  to pinned, up to :data:`STAGE_THREADS` slices side by side) while the other's copy
  runs, and each chunk is encoded on the device right after its copy, on the same stream.
  The host never encodes, and only two chunks of characters are on the device at a time
  (the codes are the only full-size device array).
* Packed staging (the default, :data:`STAGING` "packed"): when the table gives A, C, G, T
  (either case) the codes 0, 1, 2, 3 (:func:`packs`) and no counts are asked, the host
  writes 2-bit codes, four to a byte (``cpu/pack2.py``, Numba, a piece's slices side by
  side on Numba's threads), so the fill writes and the copy carries a quarter of the
  bytes, and ``unpack_dna`` writes the same byte codes on the device. All host sides of a
  call go up through one sequence of chunks over their concatenation (x whole and the
  start of y in one chunk, say); a chunk (:data:`PACKED_STAGE_BYTES`) holds a whole
  ``score_pairs`` batch. A side's piece with a character outside ACGTacgt (N, IUPAC
  codes, a bad character) and the rest of that side go up afterwards as characters and
  through ``encode_bytes``, which names a bad character as ever: codes, first bad index
  and largest code are those of the byte path in every case. Where every side came from
  the host and packed whole, nothing is read back: no character lacks a code, the pack
  answered each side's largest code (``pack2.pack_codes``), and :func:`encode_sides`
  returns with the caller's stream waiting for the unpacks (mode full 8.75 against 8.90
  ms with the read, mode score 3.42 against 3.67; 32,768 x 128 x 1,024, one H200,
  session 37). The last copies' pinned buffers are then held until those copies are done
  (:func:`_hold`), not waited for.

The copy stream is non-blocking, so a batch of ``score_pairs`` staged here overlaps the
pair kernels of the previous batch on the caller's stream.
"""

from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np

from ..base import numba_threads, usable_cores
from .loader import require_cupy

_FILE = "encode.cu"
_BLOCK = 256
#: Most blocks of one encode launch (a grid-stride loop covers the rest).
_MAX_BLOCKS = 2048
#: The code of a character without one (as ``cpu.encode.INVALID``).
INVALID = 255
_MASK = (1 << 64) - 1            # flags[0] holds ~index of the first INVALID (0: none)

#: Host characters per staging chunk of characters (two pinned buffers alternate; packed
#: staging has chunks of its own, :data:`PACKED_STAGE_BYTES`), and the most host threads
#: that fill one (at most the usable cores). The first fill and the last copy are the parts
#: of the transfer that overlap nothing, but each chunk also costs a fill's start and a
#: wait: 138 MB (32,768 pairs of 128 x 4,096) went up at 16.6 GB/s in 16 MiB chunks filled
#: by 8 threads, 24.8 GB/s in 64 MiB chunks by 16 (score_pairs from NumPy 13.5 -> 11.4 ms;
#: one H200 host of 16 cores, session 23, docs/gpu-notes.md). Packed, the host sides of a
#: call share the chunks.
STAGE_BYTES = 1 << 26
STAGE_THREADS = 16
#: Host characters per chunk of packed staging (:func:`_stage_packed`): a batch of
#: ``score_pairs`` (at most 2^28 residues: BATCH_RESIDUES in pairs.py) is one chunk. Packed
#: by a pool task a slice, a round cost ~0.7 ms however little it packed (threads woken
#: and joined under the GIL; sessions 27 and 35, docs/gpu-notes.md); one ``pack_parallel``
#: call a piece packs 32,768 x (128 + 1,024) characters in 0.70 ms where the pool took 4.9
#: (medians; 1 Mi characters 0.13 against 0.64 ms; one H200 host of 16 cores, session 37).
PACKED_STAGE_BYTES = 1 << 28
#: How :func:`encode` copies host characters up: "packed" (the staging buffers above
#: carrying 2-bit codes where :func:`packs` allows, else as "pinned"), "pinned" (the
#: staging buffers carrying the characters) or "pageable" (one ``cupy.asarray``: the
#: driver stages it). Selectable per call (``staging=``) so each can be measured.
STAGING = "packed"
STAGINGS = ("packed", "pinned", "pageable")
#: Below this many characters a staging chunk is filled by the calling thread alone.
_SPLIT_FROM = 1 << 20
#: Characters of a slice that Numba's threads fill or pack: a chunk is cut in many more
#: slices than threads, taken as threads come free (``parallel_chunksize`` 1), so a thread
#: late to start or stopped by the system holds up one slice, not a sixteenth of the chunk:
#: with one slice a thread, 138 MB filled in a median 2.5 ms but p90 19.9, max 22.8; in
#: 256 KiB slices median 2.4, p90 3.0, max 3.4 (32 + 4 MiB packed 0.65 / 0.93 / 12.1 ms
#: against 0.79 / 0.94 / 1.01; 40 and 20 rounds, one H200 host of 16 cores, session 37).
_SLICE = 1 << 18


def _cupy():
    return require_cupy("backend 'cuda'")


_staging = threading.local()
#: Held while Numba's threads fill or pack a staging buffer (:func:`_pack_pieces`).
_numba_lock = threading.Lock()


def _staging_stream():
    """The calling thread's stream on the current device for host-to-device staging
    (non-blocking: kernels on the default stream overlap it; calls from other threads
    stage on streams of their own), made once per thread and device. Memory allocated
    while it is current returns to its own pool arena, so a staged copy never lands in a
    block that a kernel on another stream may still read."""
    cp = _cupy()
    streams = getattr(_staging, "streams", None)
    if streams is None:
        streams = _staging.streams = {}
    device = cp.cuda.Device().id
    if device not in streams:
        streams[device] = cp.cuda.Stream(non_blocking=True)
    return streams[device]


def packs(table: np.ndarray) -> bool:
    """Whether 2-bit staging reproduces ``table``: it gives A, C, G, T and a, c, g, t the
    codes 0, 1, 2, 3 (the table itself is read, not the alphabet's name), and this host
    is little-endian (``cpu/pack2.py`` reads eight characters as one word)."""
    table = np.asarray(table)
    return (sys.byteorder == "little" and table.shape == (256,)
            and all(int(table[up]) == k == int(table[low])
                    for k, (up, low) in enumerate(zip(b"ACGT", b"acgt"))))


def _cuts(size: int, unit: int = 1) -> np.ndarray:
    """The bounds of the :data:`_SLICE`-character slices of ``size`` items (at least one),
    every cut but the end at a multiple of ``unit``: ascending int64, 0 first and
    ``size`` last."""
    k = max(1, size // _SLICE)
    # integers, not np.linspace (~20 us a call)
    cuts = unit * (np.arange(k + 1, dtype=np.int64) * (size // unit) // k)
    cuts[-1] = size
    return cuts


@contextlib.contextmanager
def _numba_team(threads: int):
    """Parallel Numba code of this thread on up to ``threads`` threads (at most the usable
    cores; :func:`~warpalign._backends.base.numba_threads`, which also keeps a layer that
    is not thread-safe to one thread), slices taken as threads come free
    (:data:`_SLICE`); one call at a time (the lock: a call uses every core)."""
    import numba
    with numba_threads(max(1, min(threads, usable_cores()))), _numba_lock, \
            numba.parallel_chunksize(1):
        yield


def _fill(view: np.ndarray, src: np.ndarray, threads: int) -> None:
    """``view[:] = src``, its slices on up to ``threads`` of Numba's threads
    (:func:`_numba_team`; the calling thread alone below :data:`_SPLIT_FROM`)."""
    if threads <= 1 or src.size < _SPLIT_FROM:
        np.copyto(view, src)
        return
    from ..cpu.fill import copy_parallel
    with _numba_team(threads):
        copy_parallel(src, view, _cuts(src.size))


def _pack_pieces(pieces: list, threads: int) -> list[int]:
    """The 2-bit codes of each (characters ``src``, ``out``) of ``pieces`` into its ``out``
    (``(src.size + 3) // 4`` bytes): a piece's slices (cut at multiples of 4 characters: a
    packed byte is never shared) on up to ``threads`` of Numba's threads
    (:func:`_numba_team`), one ``pack_parallel`` call a piece; below :data:`_SPLIT_FROM`
    characters in all, the calling thread packs them alone. Per piece: where every
    character was one of ACGTacgt, the largest code packed (0 for none), else -1 (its
    ``out`` is then undefined); each piece has its own stop flag, so another character
    stops its own piece's slices only. Numba is imported (and the kernels' cached compiles
    loaded) on this path only."""
    from ..cpu.pack2 import pack_codes, pack_parallel
    stops = [np.zeros(1, np.uint8) for _ in pieces]
    total = sum(src.size for src, _ in pieces)
    if threads <= 1 or total < _SPLIT_FROM:
        return [int(pack_codes(src, out, stop)) for (src, out), stop in zip(pieces, stops)]
    cuts = [_cuts(src.size, 4) for src, _ in pieces]
    with _numba_team(threads):
        return [int(pack_parallel(src, out, at, stop))
                for (src, out), at, stop in zip(pieces, cuts, stops)]


def _alternate(stream, size: int, buffers: int, chunks, fill) -> None:
    """Host-to-device copies on ``stream`` through ``buffers`` (one or two) pinned buffers
    of ``size`` bytes taken in turn. Per item of ``chunks`` (read lazily: an item may be
    planned from what the fills before it found), ``fill(j, buffer, item)`` writes the
    pinned buffer ``j`` and returns (bytes used, the device array that receives them,
    ``then``: None or a callable that queues what reads that array); the copy is queued
    (none when no byte is used), then ``then()``. A buffer is refilled only once its
    previous copy is done. Returns once the last copies are queued: their buffers stay
    held (:func:`_hold`) until those copies are done, so CuPy's pinned pool cannot hand
    them out while the device still reads them."""
    cp = _cupy()
    _release_done()
    memory = [cp.cuda.alloc_pinned_memory(size) for _ in range(buffers)]
    pinned = [np.frombuffer(m, np.uint8, size) for m in memory]
    copied = [None] * buffers
    queued = False
    try:
        for k, item in enumerate(chunks):
            j = k % buffers
            if copied[j] is not None:
                copied[j].synchronize()        # this buffer's previous copy is done
            used, device, then = fill(j, pinned[j], item)
            if used:
                device.set(pinned[j][:used], stream=stream)
                copied[j] = stream.record()
            if then is not None:
                then()
        queued = True
    finally:
        events = [event for event in copied if event is not None]
        if queued:
            _hold(events, memory)
        else:                                  # a fill raised: nothing more is queued
            for event in events:
                event.synchronize()


#: Per device, pinned buffers whose last copies may still run, with those copies' events;
#: held here until the events are done (:func:`_release_done`), then back to the pool.
_held: dict[int, list] = {}
_held_lock = threading.Lock()


def _hold(events: list, memory: list) -> None:
    """Keep ``memory`` (pinned buffers) until every one of ``events`` (on the current
    device) is done."""
    if events:
        device = _cupy().cuda.Device().id
        with _held_lock:
            _held.setdefault(device, []).append((events, memory))


def _release_done() -> None:
    """The current device's held pinned buffers whose copies are done go back to their
    pool (events are asked on the device that recorded them)."""
    device = _cupy().cuda.Device().id
    with _held_lock:
        held = _held.get(device)
        if held:
            held[:] = [(events, memory) for events, memory in held
                       if not all(event.done for event in events)]


def _upload(host: np.ndarray, stream, into, then=None, chunk: int | None = None,
            threads: int | None = None) -> None:
    """Host bytes ``host`` to the device on ``stream`` in chunks through pinned buffers
    (:func:`_alternate`), each chunk's bytes written into one by up to ``threads`` threads:
    ``into(j, lo, hi)`` is the device array that receives ``host[lo:hi]`` (``j``: which of
    the two buffers carries it), ``then(device, lo, hi)`` is queued on ``stream`` after
    that copy. Returns once every copy has left the pinned buffers."""
    n = host.size
    if n == 0:
        return
    threads = STAGE_THREADS if threads is None else max(1, int(threads))
    size = min(STAGE_BYTES if chunk is None else max(1, int(chunk)), n)

    def fill(j: int, buffer: np.ndarray, lo: int):
        hi = min(n, lo + size)
        _fill(buffer[:hi - lo], host[lo:hi], threads)
        device = into(j, lo, hi)
        return hi - lo, device, None if then is None else (lambda: then(device, lo, hi))

    _alternate(stream, size, 2 if n > size else 1, range(0, n, size), fill)


def stage(host: np.ndarray, chunk: int | None = None, threads: int | None = None):
    """A device copy of the host ``uint8`` array, made through the pinned buffers of
    :func:`encode` (``chunk`` bytes each, default :data:`STAGE_BYTES`; ``threads`` fill
    one, default :data:`STAGE_THREADS`) on the staging stream. Returns when the copy is
    complete."""
    cp = _cupy()
    host = np.ascontiguousarray(host, dtype=np.uint8).reshape(-1)
    stream = _staging_stream()
    with stream:
        out = cp.empty(host.size, dtype=cp.uint8)
    _upload(host, stream, lambda j, lo, hi: out[lo:hi], chunk=chunk, threads=threads)
    stream.synchronize()
    return out


def _kernels(pack: bool) -> dict:
    """``encode_bytes``, and ``unpack_dna`` for packed staging (compiled at once)."""
    from .loader import get_functions
    return get_functions(_FILE, ("encode_bytes", "unpack_dna") if pack else ("encode_bytes",))


#: Score tables kept on the device, per (device, table bytes): at most this many (a
#: process uses one per alphabet); past it a call uploads its own. A kept table is never
#: dropped: kernels queued on other threads' streams may still read it.
TABLES_KEPT = 16
_tables: dict = {}
_tables_lock = threading.Lock()


def device_table(cp, table: np.ndarray):
    """The alphabet's code table (256 bytes; or another small constant: the pair kernels'
    zero words) on the current device, uploaded once and kept (:data:`TABLES_KEPT`):
    immutable, only read by the kernels, and complete before it is kept (any stream may
    read it after)."""
    host = np.ascontiguousarray(table, dtype=np.uint8)
    key = (cp.cuda.Device().id, host.tobytes())
    with _tables_lock:
        kept = _tables.get(key)
    if kept is not None:
        return kept
    d_table = cp.asarray(host)
    cp.cuda.get_current_stream().synchronize()
    with _tables_lock:
        if key in _tables or len(_tables) < TABLES_KEPT:
            return _tables.setdefault(key, d_table)
    return d_table


def new_flags(cp, sides: int):
    """The encode kernel's flags before any launch, two zero words per side (no bad
    character, largest code 0), made on the device by a memset (no copy up)."""
    return cp.zeros(2 * max(1, sides), dtype=cp.uint64)


def side_flags(words, k: int, check: bool = True) -> tuple[int, int]:
    """(index of the first character without a code or -1, largest code) of side ``k``
    from the flag words read back (host integers or a NumPy ``uint64`` array)."""
    first, top = int(words[2 * k]), int(words[2 * k + 1])
    return (~first & _MASK if check and first else -1), top


def queue_encode(cp, raws, table: np.ndarray, codes, flags) -> None:
    """Queue the encoding of CuPy arrays of characters (1-D ``uint8`` each, read in place)
    into the device arrays ``codes`` (one per array, as long) on the current stream, after
    the work queued there; nothing is read back. ``flags``: two zero ``uint64`` words per
    side, zeroed on this stream (:func:`new_flags`, or part of a buffer of the caller's
    own: :mod:`.pairs_ahead` clears its flags and scores with one memset); the kernels
    leave in them what :func:`side_flags` reads once the caller has copied them back.

    Raises:
        TypeError: an array that is not a 1-D ``uint8`` CuPy array.
    """
    check_chars(cp, raws)
    d_table = device_table(cp, table)
    kernels = _kernels(False)                   # looked up once for both sides
    # the largest side first: the GPU starts on the long kernel one launch earlier (the
    # host queued score_pairs' y side ~30 us after its x side from CuPy arrays)
    for k in sorted(range(len(raws)), key=lambda k: -raws[k].size):
        raw = raws[k]
        launch = _launcher(kernels, d_table, codes[k], flags[2 * k:2 * k + 2])
        launch(raw if raw.flags.c_contiguous else cp.ascontiguousarray(raw), 0, raw.size)


def check_chars(cp, raws) -> None:
    """TypeError unless every one of ``raws`` is a 1-D ``uint8`` CuPy array."""
    for raw in raws:
        if not isinstance(raw, cp.ndarray) or raw.dtype != cp.uint8 or raw.ndim != 1:
            raise TypeError(f"expected a 1-D uint8 CuPy array of characters, got "
                            f"{type(raw).__name__} {getattr(raw, 'dtype', '')}")


def _launcher(kernels: dict, d_table, codes, flags):
    """``launch(device_chars, lo, hi)``: chars ``[lo, hi)`` of the input encoded into
    ``codes[lo:hi]`` on the current stream, ``flags`` (two words) updated."""
    kernel = kernels["encode_bytes"]

    def launch(chars, lo: int, hi: int) -> None:
        n = hi - lo
        if n <= 0:
            return
        blocks = min(-(-n // _BLOCK), _MAX_BLOCKS)
        out = codes if lo == 0 and hi == codes.size else codes[lo:hi]
        kernel((blocks,), (_BLOCK,), (chars, np.int64(n), d_table, out, np.int64(lo), flags))
    return launch


def _unpacker(kernels: dict, codes, flags):
    """``unpack(device_packed, lo, hi)``: the 2-bit codes of chars ``[lo, hi)`` (``lo`` a
    multiple of 4) written as byte codes into ``codes[lo:hi]`` on the current stream, the
    largest into ``flags[1]`` (a packed chunk has no bad character)."""
    kernel = kernels["unpack_dna"]

    def unpack(packed, lo: int, hi: int) -> None:
        n = hi - lo
        if n <= 0:
            return
        blocks = min(-(-((n + 3) // 4) // _BLOCK), _MAX_BLOCKS)
        kernel((blocks,), (_BLOCK,), (packed, np.int64(n), codes[lo:hi], flags))
    return unpack


def encode(raw, table: np.ndarray, check: bool = True, counts: bool = False, *,
           staging: str | None = None, chunk: int | None = None,
           threads: int | None = None):
    """(device codes, index of the first character without a code or -1, occurrences of
    each code when ``counts``) of the characters ``raw``: a CuPy array, read in place
    (never written) on the caller's current stream after the work queued there, or a
    NumPy array, copied by ``staging`` (one of :data:`STAGINGS`, default :data:`STAGING`;
    ``chunk`` and ``threads`` as :func:`stage`) and encoded chunk by chunk on the staging
    stream.
    The codes are complete for work queued on the caller's current stream after the
    call (:func:`encode_sides`). One side of :func:`encode_sides`.

    Raises:
        TypeError: a CuPy array that is not 1-D ``uint8``.
        ValueError: an unknown ``staging``.
    """
    codes, bad, counted, _ = encode_sides([raw], table, check, counts, staging=staging,
                                          chunk=chunk, threads=threads)[0]
    return codes, bad, counted


def encode_sides(raws, table: np.ndarray, check: bool = True, counts: bool = False, *,
                 staging: str | None = None, chunk: int | None = None,
                 threads: int | None = None) -> list[tuple]:
    """:func:`encode` of each character array in ``raws`` (the two sides of a batch of
    ``score_pairs``), with the kept code table (:func:`device_table`), one flag array and
    one read of the flags for all of them (one device-to-host sync, not one per side;
    none where every array came from the host and packed whole): per array (codes, first
    bad index or -1, counts or None, largest code). The codes are complete for the work
    queued on the caller's current stream after the call. The ``encode`` engine
    (:class:`~warpalign._backends.base.EncodeKernel`).

    All arrays are encoded on one stream: the caller's current stream when every array is
    a CuPy array, else this thread's staging stream (which first waits for the work queued
    on the caller's stream, so CuPy arrays made there are complete). Host arrays go up
    as 2-bit codes, all of them through one sequence of chunks (:func:`_stage_packed`),
    when ``staging`` is "packed", the table :func:`packs` and ``counts`` is False.
    """
    cp = _cupy()
    staging = STAGING if staging is None else staging
    if staging not in STAGINGS:
        raise ValueError(f"invalid staging: {staging!r}; expected one of {STAGINGS}")
    for raw in raws:
        if isinstance(raw, cp.ndarray) and (raw.dtype != cp.uint8 or raw.ndim != 1):
            raise TypeError(f"expected a 1-D uint8 array of characters, got {raw.ndim}-D "
                            f"{raw.dtype}")
    raws = [raw if isinstance(raw, cp.ndarray)
            else np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1) for raw in raws]
    on_device = [isinstance(raw, cp.ndarray) for raw in raws]
    current = cp.cuda.get_current_stream()
    if all(on_device):
        stream = current
    else:
        stream = _staging_stream()
        if any(on_device):
            stream.wait_event(current.record())
    pack = staging == "packed" and not counts and not all(on_device) and packs(table)
    kernels = _kernels(pack)
    with stream:
        d_table = device_table(cp, table)
        flags = new_flags(cp, len(raws))
        out = [cp.empty(raw.size, dtype=cp.uint8) for raw in raws]
        launches = [_launcher(kernels, d_table, codes, flags[2 * k:2 * k + 2])
                    for k, codes in enumerate(out)]
        for k, raw in enumerate(raws):
            if on_device[k]:
                launches[k](cp.ascontiguousarray(raw), 0, raw.size)
            elif not pack:
                _stage_into(raw, stream, launches[k], staging, chunk, threads)
        tops = None
        if pack:
            hosts = {k: raw for k, raw in enumerate(raws) if not on_device[k]}
            unpacks = {k: _unpacker(kernels, out[k], flags[2 * k:2 * k + 2]) for k in hosts}
            tops = _stage_packed(hosts, stream, launches, unpacks, chunk, threads)
    if tops is not None and not any(on_device):
        # every side came from the host and packed whole: no bad character, and the
        # largest codes are the pack's; the caller's stream waits for the unpacks
        current.wait_event(stream.record())
        return [(codes, -1, None, tops[k]) for k, codes in enumerate(out)]
    return _results(cp, out, flags, check, counts, stream)


def _stage_into(host: np.ndarray, stream, launch, staging: str, chunk, threads,
                at: int = 0) -> None:
    """Host characters up to the device on ``stream`` (the current stream) as characters
    (one ``cupy.asarray`` for "pageable" ``staging``, else chunks through the pinned
    buffers), each chunk encoded by ``launch`` right after its copy; ``host`` is its side
    from character ``at`` on."""
    cp = _cupy()
    if staging == "pageable":
        launch(cp.asarray(host), at, at + host.size)
        return
    size = min(STAGE_BYTES if chunk is None else max(1, int(chunk)), max(host.size, 1))
    chars = [cp.empty(size, dtype=cp.uint8) for _ in range(2 if host.size > size else 1)]
    # chunk k lands in chars[k % 2]: its next copy is queued after this chunk's kernel on
    # the same stream, so it never overwrites bytes being read
    _upload(host, stream, lambda j, lo, hi: chars[j][:hi - lo],
            lambda device, lo, hi: launch(device, at + lo, at + hi), chunk=size,
            threads=threads)


def _stage_packed(hosts: dict, stream, launches: list, unpacks: dict, chunk,
                  threads) -> dict | None:
    """Host sides (``hosts``: side -> characters) up to the device on ``stream`` (the
    current stream) as 2-bit codes through one sequence of chunks over all of them
    (:class:`_PackedSides`), unpacked by ``unpacks[side]``; then each side with a piece
    that did not pack goes up as characters from that piece on (:func:`_stage_into`),
    encoded by ``launches[side]``. Returns each side's largest code where every side
    packed whole (none has a character outside ACGTacgt), else None."""
    cp = _cupy()
    threads = STAGE_THREADS if threads is None else max(1, int(threads))
    size = PACKED_STAGE_BYTES if chunk is None else max(1, int(chunk))
    size = max(4, size - size % 4)     # a side's pieces start at multiples of 4 characters
    total = sum(host.size for host in hosts.values())
    if total == 0:
        return dict.fromkeys(hosts, 0)
    # a chunk's packed bytes: a quarter of its characters, rounded up per piece (one a side)
    width = min(size, total) // 4 + len(hosts)
    count = 2 if total > size else 1
    # chunk k lands in device[k % 2]: its next copy is queued after this chunk's unpacks on
    # the same stream, so it never overwrites bytes being read
    device = [cp.empty(width, dtype=cp.uint8) for _ in range(count)]
    sides = _PackedSides(hosts, unpacks, size, threads, device)
    _alternate(stream, width, count, sides.chunks(), sides.fill)
    device.clear()     # back to the pool (for this stream) before the characters' buffers
    for side, lo in sides.fallen.items():
        _stage_into(hosts[side][lo:], stream, launches[side], "pinned", chunk, threads, lo)
    return None if sides.fallen else sides.tops


class _PackedSides:
    """The host sides of one call as 2-bit codes in chunks over their concatenation: a
    chunk of at most ``size`` characters holds one piece of each of consecutive sides (the
    end of x and the start of y, say), a piece cut at a multiple of 4 characters of its
    side (``unpack_dna`` starts at a packed byte) unless it ends the side. A chunk's pieces
    are packed (:func:`_pack_pieces`) one after another in the pinned
    buffer, copied up at once into ``device[j]`` and each unpacked into its side's codes.
    A piece with a character outside ACGTacgt ends its side's packing: :attr:`fallen`
    maps the side to that piece's start, from which the caller sends it as characters.
    :attr:`tops` maps each side to the largest code of its pieces that packed."""

    def __init__(self, hosts: dict, unpacks: dict, size: int, threads: int, device: list):
        self.hosts, self.unpacks, self.device = hosts, unpacks, device
        self.size, self.threads = size, threads
        self.fallen: dict[int, int] = {}
        self.tops: dict[int, int] = dict.fromkeys(hosts, 0)

    def chunks(self):
        """The chunks, lists of pieces (side, lo, hi), each planned once the fill of the one
        before it is done: a side in :attr:`fallen` gets no later piece."""
        order = list(self.hosts)
        k = at = 0                           # the next piece: side order[k] from ``at``
        while True:
            pieces, room = [], self.size
            while k < len(order) and room:
                side = order[k]
                left = self.hosts[side].size - at
                if left == 0 or side in self.fallen:
                    k, at = k + 1, 0
                    continue
                take = left if left <= room else room - room % 4
                if take == 0:
                    break
                pieces.append((side, at, at + take))
                at, room = at + take, room - take
            if not pieces:
                return
            yield pieces

    def fill(self, j: int, buffer: np.ndarray, pieces: list):
        """The chunk ``pieces`` packed into the pinned ``buffer``, one after another:
        (bytes up to the last piece that packed, the device array they go to, the
        unpacking of the pieces that packed); a piece that did not pack joins
        :attr:`fallen`."""
        ends = np.cumsum([(hi - lo + 3) // 4 for _, lo, hi in pieces]).tolist()
        spans = list(zip([0] + ends[:-1], ends))
        tops = _pack_pieces([(self.hosts[side][lo:hi], buffer[a:b])
                             for (side, lo, hi), (a, b) in zip(pieces, spans)], self.threads)
        packed = [top >= 0 for top in tops]
        self.fallen.update((side, lo) for (side, lo, _), ok in zip(pieces, packed) if not ok)
        for (side, _, _), top in zip(pieces, tops):
            self.tops[side] = max(self.tops[side], top)
        used = max((b for (_, b), ok in zip(spans, packed) if ok), default=0)
        device = self.device[j]

        def unpack() -> None:
            for (side, lo, hi), (a, b), ok in zip(pieces, spans, packed):
                if ok:
                    self.unpacks[side](device[a:b], lo, hi)
        return used, device[:used], unpack


def _results(cp, codes: list, flags, check: bool, counts: bool, stream) -> list[tuple]:
    """:func:`encode_sides`'s answer: the flags of every side read in one copy, once the
    kernels on ``stream`` are done."""
    words = [int(v) for v in flags.get(stream=stream)]
    stream.synchronize()
    out = []
    for k, side in enumerate(codes):
        bad, top = side_flags(words, k, check)
        counted = None
        if counts and bad < 0:
            with stream:
                counted = cp.bincount(side.astype(cp.int32), minlength=256).get()
        out.append((side, bad, counted, top))
    return out
