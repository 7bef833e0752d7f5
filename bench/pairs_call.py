#!/usr/bin/env python3
"""Whole ``score_pairs`` calls by input form, and the streamed CLI (issue 22).

For random DNA pairs (``--pairs`` of ``-m`` x ``-n``, paper 000's scoring 2/-1/1) one
record per input form, ``scope: "call"`` (the public API as a user calls it: encoding,
copies, kernels, result), with the kernel's own time beside it (``kernel_seconds``,
``gcups_kernel``: the result's ``swa`` (+ ``pack``) step) and the steps:

* ``list``: lists of Python ``str``;
* ``numpy``: 2-D NumPy ``uint8`` arrays of characters, one row a sequence;
* ``buffer``: a :class:`~warpalign.SequenceBuffer` (one buffer of characters + offsets);
* ``cupy`` (``--backend cuda``): 2-D CuPy arrays already on the GPU;
* ``codes``: :func:`warpalign.pairs.score_encoded` on codes already encoded (the in-run
  baseline: what the call costs without its input);
* ``fasta`` (``--cli-pairs N``): ``warpalign pairs X.fa Y.fa -o OUT`` as a subprocess on N
  pairs written to two FASTA files, wall seconds and its peak RSS (``rss_mb``).

Each figure is the median of ``--repeat`` warm calls (``cold: false``) after one untimed
call of each input form at full size (compiles, fills the memory pools); GCUPS = pairs *
m * n / seconds / 1e9. With ``--backend cuda``, ``--staging packed pinned`` measures the
host forms (list, numpy, buffer) once per way their characters cross to the device (the
encode engine's default, ``STAGING``, set for the run; ``params.staging``): "packed" 2-bit
codes, "pinned" characters (issue 22).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import cpu_name, emit, usable_cores
from warpalign import Scoring, SequenceBuffer, score_pairs
from warpalign.pairs import score_encoded

LETTERS = np.frombuffer(b"ACGT", np.uint8)
#: ``warpalign ARGS...`` that writes its peak resident memory (VmHWM, kB) to stderr at exit.
PEAK_RSS = ("import sys\nfrom warpalign.cli import main\ncode = main(sys.argv[1:])\n"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0],"
            " file=sys.stderr)\nsys.exit(code)")


def forms(xs: np.ndarray, ys: np.ndarray, backend: str) -> dict:
    """Each input form of the same pairs (built outside the timings)."""
    def buffer(rows):
        return SequenceBuffer(rows.reshape(-1), np.arange(len(rows) + 1) * rows.shape[1])
    out = {"list": ([r.tobytes().decode() for r in xs], [r.tobytes().decode() for r in ys]),
           "numpy": (xs, ys), "buffer": (buffer(xs), buffer(ys))}
    if backend == "cuda":
        import cupy
        out["cupy"] = (cupy.asarray(xs), cupy.asarray(ys))
    return out


#: The input forms whose characters go up through the encode engine's staging.
STAGED = ("list", "numpy", "buffer")


@contextlib.contextmanager
def staged(staging: str | None):
    """The CUDA encode engine's default staging set to ``staging`` (None: as it is)."""
    if staging is None:
        yield
        return
    from warpalign._backends.cuda import encode
    before, encode.STAGING = encode.STAGING, staging
    try:
        yield
    finally:
        encode.STAGING = before


def kernel_seconds(timings: dict) -> float:
    return timings.get("swa", 0.0) + timings.get("pack", 0.0)


def write_fasta(path: Path, rows: np.ndarray, prefix: str, block: int = 65536) -> None:
    with open(path, "wb") as fh:
        for lo in range(0, len(rows), block):
            part = rows[lo:lo + block]
            fh.write(b"".join(b">%s%d\n%s\n" % (prefix.encode(), lo + i, r.tobytes())
                              for i, r in enumerate(part)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=32768)
    p.add_argument("-m", type=int, default=128)
    p.add_argument("-n", type=int, nargs="+", default=[1024])
    p.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--method", default="wordwise")
    p.add_argument("--inputs", nargs="+", default=["codes", "list", "numpy", "buffer", "cupy"])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--batch-residues", type=int, default=None)
    p.add_argument("--staging", nargs="+", choices=("packed", "pinned", "pageable"),
                   help="cuda: measure the host forms with each (default: the engine's)")
    p.add_argument("--cli-pairs", type=int, default=0,
                   help="also the CLI on this many pairs of m x the first n (0: not)")
    p.add_argument("--cli-chunk", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="append the JSON lines to this file too")
    args = p.parse_args(argv)
    command = "python " + " ".join([os.path.relpath(__file__)] + list(argv or sys.argv[1:]))
    scoring = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
    if args.backend == "cuda":
        from warpalign._backends.cuda.pairs import device_name
        device = device_name()
    else:
        device = f"{cpu_name()} ({usable_cores()} cores)"
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    rng = np.random.default_rng(args.seed)
    warm = LETTERS[rng.integers(0, 4, (64, args.m))], LETTERS[rng.integers(0, 4, (64, 256))]
    for x, y in forms(*warm, args.backend).values():   # compile outside the timings
        score_pairs(x, y, scoring, method=args.method, backend=args.backend)
    base = {"job": "pairs", "scope": "call", "cold": False, "backend": args.backend,
            "method": args.method, "device": device, "command": command,
            "baseline": "input 'codes' (score_encoded on codes encoded before, same run)"}
    for n in args.n:
        xs = LETTERS[rng.integers(0, 4, (args.pairs, args.m))]
        ys = LETTERS[rng.integers(0, 4, (args.pairs, n))]
        cells = args.pairs * args.m * n
        params = {"pairs": args.pairs, "m": args.m, "n": n, "match": 2, "mismatch": -1,
                  "gap": 1, "threads": usable_cores(), "batch_residues": args.batch_residues}
        table = scoring.alphabet.code_table
        xc, yc = list(table[xs]), list(table[ys])
        runs = {"codes": lambda xc=xc, yc=yc: score_encoded(xc, yc, scoring,
                                                            method=args.method,
                                                            backend=args.backend)}
        for name, (x, y) in forms(xs, ys, args.backend).items():
            runs[name] = (lambda x=x, y=y: score_pairs(
                x, y, scoring, method=args.method, backend=args.backend,
                batch_residues=args.batch_residues))
        reference = None
        for name in args.inputs:
            if name not in runs:
                continue
            by = args.staging if args.staging and args.backend == "cuda" and name in STAGED \
                else [None]
            for staging in by:
                with staged(staging):
                    # each form's (and staging's) first call at full size, untimed: the
                    # small warm-up above does not reach the parallel pack (Numba compiles
                    # or loads it in the first large call: 3.4 s in session 38's call H)
                    runs[name]()
                    got = []
                    for _ in range(max(1, args.repeat)):
                        t0 = time.perf_counter()
                        res = runs[name]()
                        got.append((time.perf_counter() - t0, res.timings))
                got.sort(key=lambda r: r[0])
                seconds, steps = got[len(got) // 2]
                if reference is None:
                    reference = res.scores
                exact = bool(np.array_equal(res.scores, reference))
                if not exact:
                    print(f"scores differ: input {name}, n={n}", file=sys.stderr)
                kernel = kernel_seconds(steps)
                extra = {} if staging is None else {"staging": staging}
                emit({**base, "params": {**params, "input": name, **extra},
                      "seconds": round(seconds, 6), "gcups": round(cells / seconds / 1e9, 3),
                      "kernel_seconds": round(kernel, 6),
                      "gcups_kernel": round(cells / kernel / 1e9, 3) if kernel else None,
                      "runs": [round(s, 6) for s, _ in got],
                      "steps": {k: round(v, 6) for k, v in steps.items()},
                      "same_scores": exact}, out)
    if args.cli_pairs:
        n = args.n[0]
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            rows = args.cli_pairs
            write_fasta(tmp / "x.fa", LETTERS[rng.integers(0, 4, (rows, args.m))], "x")
            write_fasta(tmp / "y.fa", LETTERS[rng.integers(0, 4, (rows, n))], "y")
            cli = ["pairs", str(tmp / "x.fa"), str(tmp / "y.fa"), "--backend", args.backend,
                   "--method", args.method, "-o", str(tmp / "out.tsv")]
            if args.cli_chunk:
                cli += ["--chunk", str(args.cli_chunk)]
            # the child's own peak (VmHWM, per address space): a forked child's ru_maxrss
            # would count this process's memory at the fork
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", PEAK_RSS, *cli], check=True,
                                  stderr=subprocess.PIPE, text=True)
            seconds = time.perf_counter() - t0
            rss = int(done.stderr.rsplit("VmHWM:", 1)[1].split()[0]) / 1024
            with open(tmp / "out.tsv") as fh:
                lines = sum(1 for _ in fh)
            emit({**base, "params": {"pairs": rows, "m": args.m, "n": n, "match": 2,
                                     "mismatch": -1, "gap": 1, "input": "fasta",
                                     "chunk": args.cli_chunk, "threads": usable_cores()},
                  "baseline": None, "seconds": round(seconds, 3),
                  "gcups": round(rows * args.m * n / seconds / 1e9, 3),
                  "rss_mb": round(rss, 1), "rows_written": lines,
                  "note": "wall time of the subprocess (its Python start included; "
                          "writing the FASTA files not)"}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
