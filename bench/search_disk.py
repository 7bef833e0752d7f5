#!/usr/bin/env python3
"""A 10 G-residue database on disk (issue 23): ``warpalign makedb`` of it (residues/s,
peak RSS), and ``search()`` streaming it from disk under ``gpu_memory`` 4G against the
resident GCUPS of a database that fits, with the search process's peak RSS.

One copy of a synthetic FASTA (the Swiss-Prot-sized lengths and composition of
../shared/data/protein, 60 residues a line, headers ``>cCCC_IIIIIII``) is laid out once
as a NumPy buffer; copy c rotates its residues by c * SHIFT and sets its tag. Copy 0
alone is the database that fits, and copy 0 of the big one: each query's streamed
scores must be >= its resident ones rank by rank (else exit 1). Each step runs in a
child process (``ru_maxrss`` is its own; a child starts with its parent's peak, so this
one stays small): the writer, ``warpalign makedb`` of each FASTA (deleted after), then
one search process: the standard queries (BLOSUM62 11/1, mode score) resident on copy 0
(a warm-up, ``--repeat`` timed calls), a streamed warm-up on copy 0 (gpu_memory 1G:
the chunk kernels), the big database (memory-mapped; chunks read by ``pread``) once
after evicting its files from the page cache (``posix_fadvise``; the fraction left is
measured by ``mincore``), and once more, warm, if ``--budget`` allows.

    python bench/search_disk.py --out bench/results/search_disk_gpu.jsonl
    python bench/search_disk.py --backend cpu --queries 2 --copies 3 --max-residues 200000
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import mmap
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import SHARED_DATA, cpu_name, emit, usable_cores
from makedb import _CHILD

HEADER = 14                          # ">cCCC_IIIIIII\n"
SHIFT = 1_000_003                    # copy c's residues: the base rotated by c * SHIFT
T0 = float(os.environ.get("SEARCH_DISK_T0", time.time()))      # children: the run's start


def log(text: str) -> None:
    print(f"# [{time.time() - T0:6.1f} s] {text}", file=sys.stderr, flush=True)


def lengths(max_residues: int | None = None) -> np.ndarray:
    """The Swiss-Prot-sized lengths (the longest prefix within ``max_residues``)."""
    with gzip.open(SHARED_DATA / "protein" / "swissprot_size_lengths.npy.gz") as f:
        got = np.load(f).astype(np.int64)
    if max_residues is not None:
        got = got[:max(1, int(np.searchsorted(np.cumsum(got), max_residues, "right")))]
    return got


def layout(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One copy's FASTA bytes (headers and newlines set), the mask of its residue bytes,
    and the positions of the copy tag's three digits in each header (n x 3)."""
    n, lines = len(lens), -(-lens // 60)
    size = HEADER + lens + lines
    starts = np.zeros(n, np.int64)
    np.cumsum(size[:-1], out=starts[1:])
    buf, mask = np.empty(int(size.sum()), np.uint8), np.ones(int(size.sum()), bool)
    head = starts[:, None] + np.arange(HEADER)
    mask[head] = False
    digits = (np.arange(n)[:, None] // 10 ** np.arange(6, -1, -1)) % 10 + ord("0")
    buf[head] = np.hstack([np.full((n, 2), list(b">c")), np.zeros((n, 3)),
                           np.full((n, 1), ord("_")), digits, np.full((n, 1), 10)])
    record = np.repeat(np.arange(n), lines)
    first = np.zeros(n, np.int64)
    np.cumsum(lines[:-1], out=first[1:])
    k = np.arange(len(record)) - first[record]      # line k of its record
    ends = starts[record] + HEADER + 61 * k + np.minimum(60, lens[record] - 60 * k)
    mask[ends], buf[ends] = False, 10
    return buf, mask, head[:, 2:5]


def write_fasta(big: str, small: str | None, copies: int, seed: int,
                max_residues: int | None = None) -> dict:
    """``copies`` copies into ``big`` (copy 0 alone into ``small`` too)."""
    if not 1 <= copies <= 999:
        raise ValueError(f"--copies {copies}: expected 1..999 (a three-digit copy tag)")
    lens = lengths(max_residues)
    buf, mask, tag = layout(lens)
    comp = json.loads((SHARED_DATA / "protein" / "swissprot_size_composition.json")
                      .read_text())["composition"]
    cut = np.cumsum(np.array(list(comp.values())) / sum(comp.values())) * 65536
    lut = np.frombuffer("".join(comp).encode(), np.uint8)[
        np.minimum(np.searchsorted(cut, np.arange(65536), "right"), len(comp) - 1)]
    base = lut[np.random.default_rng(seed).integers(0, 65536, int(lens.sum()), np.uint16)]
    rolled, t0 = np.empty_like(base), time.perf_counter()
    for c in range(copies):
        s = c * SHIFT % len(base)
        np.concatenate((base[s:], base[:s]), out=rolled)
        buf[mask] = rolled
        buf[tag] = np.frombuffer(b"%03d" % c, np.uint8)
        for path in ([small] if c == 0 and small else []) + [big]:
            with open(path, "ab") as f:
                f.write(memoryview(buf))
    return {"sequences": len(lens) * copies, "residues": int(lens.sum()) * copies,
            "seconds": time.perf_counter() - t0}


def cached(directory: Path, evict: bool = False) -> float:
    """The fraction of the files' pages in the page cache (``mincore``); with ``evict``,
    first ask the kernel to drop them (``fdatasync``, ``posix_fadvise DONTNEED``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
        ctypes.c_long]
    got = pages = 0
    for path in sorted(directory.iterdir()):
        size = path.stat().st_size
        fd = os.open(path, os.O_RDONLY)
        if evict:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        vec = (ctypes.c_ubyte * -(-size // mmap.PAGESIZE))()
        at = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0) if size else 0
        os.close(fd)
        if size and (at == ctypes.c_void_p(-1).value or libc.mincore(
                ctypes.c_void_p(at), ctypes.c_size_t(size), vec)):
            raise OSError(ctypes.get_errno(), f"mmap/mincore of {path} failed")
        if size:
            libc.munmap(ctypes.c_void_p(at), ctypes.c_size_t(size))
        got += int((np.frombuffer(vec, np.uint8) & 1).sum())
        pages += len(vec)
    return got / max(pages, 1)


def search_all(small: str, big: str, backend: str, queries: int, top_k: int, repeat: int,
               gpu_memory: str, deadline: float) -> dict:
    """The search process: resident on ``small``, streamed on ``big`` (see the top)."""
    import resource

    from warpalign import Database, Scoring, search
    from warpalign.io import read_sequences
    qs = [str(r.sequence) for r in read_sequences(SHARED_DATA / "protein" /
                                                  "standard_queries20.fasta")][:queries]
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    dbs = {"small": Database.open(small, verify=False), "big": Database.open(big, verify=False)}

    def call(db, limit):
        t0 = time.perf_counter()
        hits = search(qs, dbs[db], scoring, top_k=top_k, mode="score", backend=backend,
                      gpu_memory=limit)
        return [h.scores.tolist() for h in hits], time.perf_counter() - t0
    out = {"cells": {k: sum(map(len, qs)) * db.residues for k, db in dbs.items()},
           "residues": {k: db.residues for k, db in dbs.items()}, "queries": len(qs),
           "hits": {k: min(top_k, len(db)) for k, db in dbs.items()},
           "device": cpu_name(), "chunks": None}
    log(f"search: warm-up, resident, {len(qs)} queries, {dbs['small'].residues} residues")
    call("small", None)
    runs = [call("small", None) for _ in range(repeat)]
    out["resident"] = {"runs": [s for _, s in runs], "scores": runs[-1][0]}
    log(f"search: resident {[round(s, 3) for _, s in runs]} s")
    if backend == "cuda":                    # the chunk kernels: a streamed warm-up
        import cupy

        from warpalign._backends.cuda import CudaBackend
        from warpalign._backends.stream import parse_memory
        out["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        call("small", "1G")
        out["chunks"] = len(CudaBackend().plan(dbs["big"].targets.offsets,
                                               parse_memory(gpu_memory)).chunks)
    out["peak_rss_bytes_resident"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["streamed"] = []
    for i in range(2):
        frac = cached(Path(big), evict=i == 0)
        log(f"search: streamed call {i + 1} on {dbs['big'].residues} residues, "
            f"gpu_memory {gpu_memory}, {frac:.1%} of the database in the page cache")
        scores, seconds = call("big", gpu_memory)
        out["streamed"].append({"seconds": seconds, "scores": scores, "cached": frac})
        if time.time() + seconds * 1.1 > deadline:
            break
    out["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def filesystem(folder: str) -> str:
    """The type and device of the mount holding ``folder`` (/proc/mounts), e.g. 'ext4 on
    /dev/nvme0n1p1': tmpfs or overlay means the 'disk' is not one."""
    mounts = [line.split()[:3] for line in Path("/proc/mounts").read_text().splitlines()]
    real = os.path.realpath(folder)
    dev, _, kind = max((m for m in mounts if real == m[1] or real.startswith(
        m[1].rstrip("/") + "/")), key=lambda m: len(m[1]))
    return f"{kind} on {dev}"


def child(env: dict, func: str, **kwargs) -> dict:
    """``func(**kwargs)`` of this module in a fresh process (its result: JSON on stdout)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import search_disk as m; "
            "print(json.dumps(getattr(m, sys.argv[2])(**json.loads(sys.argv[3]))))")
    run = subprocess.run([sys.executable, "-c", code, str(HERE), func, json.dumps(kwargs)],
                         stdout=subprocess.PIPE, text=True, env=env)
    if run.returncode:
        raise SystemExit(f"{func} failed (exit {run.returncode})")
    return json.loads(run.stdout.splitlines()[-1])


def makedb(env: dict, fasta: Path, db: Path, threads: int, memory: int) -> tuple:
    """``warpalign makedb`` in a child: (its seconds, its peak RSS, the command)."""
    argv = ["makedb", str(fasta), str(db), "--threads", str(threads), "--memory",
            str(memory), "--no-progress"]
    run = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True,
                         text=True, env=env)
    if run.returncode:
        raise SystemExit(f"warpalign {' '.join(argv)} failed:\n{run.stderr}")
    seconds, rss = run.stdout.split()[-2:]
    return float(seconds), int(rss), ["warpalign", *argv]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=54, help="copies of the Swiss-Prot-sized "
                   "set in the big database (54: ~10.08 G residues)")
    p.add_argument("--max-residues", type=int, help="one copy: only the longest prefix of "
                   "the lengths within this many residues (a small local run)")
    p.add_argument("--threads", type=int, default=usable_cores(), help="makedb's --threads")
    p.add_argument("--memory", default="1G", help="makedb's --memory (default 1G; with "
                   "--makedb-only a comma list: each size built --makedb-repeat times)")
    p.add_argument("--gpu-memory", default="4G", help="search's gpu_memory on the big database")
    p.add_argument("--backend", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--queries", type=int, default=20, help="the first N standard queries")
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--repeat", type=int, default=2, help="timed resident calls")
    p.add_argument("--budget", type=float, default=480,
                   help="seconds for the whole run: a second streamed call only within it")
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--dir", default=tempfile.gettempdir(), help="the disk folder")
    p.add_argument("--makedb-only", action="store_true",
                   help="build the big database --makedb-repeat times for each --memory "
                        "and measure the disk's synced write speed; no search")
    p.add_argument("--makedb-repeat", type=int, default=1)
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/search_disk.py " + " ".join(argv or sys.argv[1:])
    from warpalign._backends.stream import parse_memory
    memories = [parse_memory(m, "--memory") for m in args.memory.split(",")]
    if len(memories) > 1 and not args.makedb_only:
        p.error("--memory: several sizes only with --makedb-only")
    memory = memories[0]
    deadline = T0 + args.budget
    env = {**os.environ, "SEARCH_DISK_T0": str(T0), "PYTHONPATH": os.pathsep.join(
        [str(HERE.parent / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    lens = lengths(args.max_residues)
    n, res = len(lens), int(lens.sum())
    copy_bytes = int((HEADER + lens + -(-lens // 60)).sum())
    need = copy_bytes * (args.copies + 1) + 2 * res * args.copies + 100 * n * args.copies \
        + (1 << 30)
    free = shutil.disk_usage(args.dir).free
    fs = filesystem(args.dir)
    log(f"{args.copies} copies of {n} sequences, {res} residues; disk {args.dir} ({fs}): "
        f"{free / 1e9:.1f} GB free, {need / 1e9:.1f} GB needed")
    if free < need:
        raise SystemExit(f"{args.dir}: {free / 1e9:.1f} GB free, the run needs about "
                         f"{need / 1e9:.1f} GB (FASTA, database, makedb's run files); "
                         "give --dir on a larger disk or fewer --copies")
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="search_disk-") as tmp:
        big_fa, small_fa = Path(tmp) / "big.fasta", Path(tmp) / "small.fasta"
        made = child(env, "write_fasta", big=str(big_fa), small=str(small_fa),
                     copies=args.copies, seed=args.seed, max_residues=args.max_residues)
        fasta_bytes = big_fa.stat().st_size
        log(f"FASTA: {fasta_bytes / 1e9:.2f} GB in {made['seconds']:.1f} s "
            f"({fasta_bytes / made['seconds'] / 1e9:.2f} GB/s)")
        seconds, _, _ = makedb(env, small_fa, Path(tmp) / "small.wa", args.threads, memory)
        small_fa.unlink()
        log(f"makedb of copy 0: {seconds:.1f} s; now the big one")
        for k, size in enumerate([m for m in memories
                                  for _ in range(args.makedb_repeat if args.makedb_only else 1)]):
            if k:
                shutil.rmtree(Path(tmp) / "big.wa")
            seconds, rss, cmd = makedb(env, big_fa, Path(tmp) / "big.wa", args.threads, size)
            record_makedb(args, made, fs, fasta_bytes, seconds, rss, cmd, size, command, out)
        big_fa.unlink()
        if args.makedb_only:
            disk = child(env, "disk_write", folder=tmp)
            log(f"disk: {disk['bytes'] / disk['seconds'] / 1e6:.0f} MB/s written and synced")
            emit({"job": "disk", "scope": "item", "backend": "cpu", "method": "pwrite+fdatasync",
                  "device": f"{args.dir} ({fs})", "params": {"bytes": disk["bytes"],
                  "piece_bytes": disk["piece"]}, "seconds": disk["seconds"],
                  "bytes_per_s": disk["bytes"] / disk["seconds"], "baseline": None,
                  "command": command}, out)
            return 0
        got = child(env, "search_all", small=str(Path(tmp) / "small.wa"),
                    big=str(Path(tmp) / "big.wa"), backend=args.backend,
                    queries=args.queries, top_k=args.top_k, repeat=args.repeat,
                    gpu_memory=args.gpu_memory, deadline=deadline)
    return report_search(args, got, fs, command, out)


def disk_write(folder: str, size: int = 4 << 30, piece: int = 16 << 20) -> dict:
    """Seconds to write ``size`` bytes in ``piece``-byte writes and ``fdatasync`` them."""
    data = np.random.default_rng(0).integers(0, 256, piece, dtype=np.uint8).tobytes()
    path = Path(folder) / "disk_write.bin"
    t0 = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for _ in range(size // piece):
            os.write(fd, data)
        os.fdatasync(fd)
    finally:
        os.close(fd)
    seconds = time.perf_counter() - t0
    path.unlink()
    return {"bytes": size, "piece": piece, "seconds": seconds}


def record_makedb(args, made, fs, fasta_bytes, seconds, rss, cmd, memory, command, out):
    log(f"makedb: {made['residues'] / seconds / 1e6:.0f} M residues/s, peak RSS "
        f"{rss / 2**30:.2f} GiB (targets: >= 200 M/s, <= 4 GiB)")
    emit({"job": "makedb", "scope": "call", "cold": False, "backend": "cpu",
          "method": "streamed", "device": f"{cpu_name()} ({args.threads} of "
          f"{usable_cores()} cores: --threads {args.threads}, and a read-ahead thread)",
          "params": {"sequences": made["sequences"], "residues": made["residues"],
                     "copies": args.copies, "threads": args.threads, "memory": memory,
                     "fasta_bytes": fasta_bytes, "peak_rss_bytes": rss,
                     "dir": args.dir, "filesystem": fs,
                     "fasta_write_s": made["seconds"],
                     "input": f"plain FASTA, 60 residues a line, in {args.dir} "
                              "(written just before: in the page cache)",
                     "makedb_command": " ".join(cmd)},
          "seconds": seconds, "residues_per_s": made["residues"] / seconds,
          "baseline": None, "command": command}, out)


def report_search(args, got, fs, command, out) -> int:
    runs = got["resident"]["runs"]
    resident_s = sorted(runs)[len(runs) // 2]
    resident = got["cells"]["small"] / resident_s / 1e9
    common = {"job": "search", "scope": "call", "cold": False, "backend": args.backend,
              "method": "auto", "device": got["device"], "command": command}
    params_fs = {"dir": args.dir, "filesystem": fs}
    params = {"queries": got["queries"], "top_k": args.top_k, "scoring": "BLOSUM62 11/1",
              "mode": "score", "peak_rss_bytes": got["peak_rss_bytes"], **params_fs,
              "peak_rss_bytes_resident_part": got["peak_rss_bytes_resident"]}
    emit({**common, "params": {
        **params, "residues": got["residues"]["small"], "copies": 1, "streamed": False,
        "gpu_memory": None, "chunks": None, "source": "memory-mapped, resident after a "
        "warm-up call"}, "seconds": resident_s, "runs": runs, "gcups": resident,
        "baseline": None}, out)
    scores = got["resident"]["scores"]
    ok = all(len(s) == got["hits"]["small"] for s in scores)
    for i, call in enumerate(got["streamed"]):
        gcups = got["cells"]["big"] / call["seconds"] / 1e9
        ok &= all(len(b) == got["hits"]["big"] and all(x >= y for x, y in zip(b, a))
                  for a, b in zip(scores, call["scores"]))
        log(f"streamed call {i + 1}: {gcups:.0f} GCUPS, {gcups / resident:.1%} of resident "
            f"{resident:.0f} (target >= 80%); search peak RSS "
            f"{got['peak_rss_bytes'] / 2**30:.2f} GiB (target <= 4 GiB); scores ok: {ok}")
        emit({**common, "params": {
            **params, "residues": got["residues"]["big"], "copies": args.copies,
            "streamed": bool(got["chunks"] and got["chunks"] > 1), "call": i + 1,
            "gpu_memory": args.gpu_memory, "chunks": got["chunks"],
            "page_cache_fraction_at_start": call["cached"],
            "source": "disk, " + ("its files evicted from the page cache (posix_fadvise "
                                  "DONTNEED) just before" if i == 0 else "page cache warm "
                                  "from call 1")},
            "seconds": call["seconds"], "gcups": gcups, "ratio_to_resident": gcups / resident,
            "baseline": {"setting": "resident, copy 0 alone, same run", "gcups": resident,
                         "seconds": resident_s, "residues": got["residues"]["small"]}}, out)
    log("done" if ok else "FAILED: an empty hit list or streamed scores below resident ones")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
