#!/usr/bin/env python3
"""``warpalign search`` as a user runs it (issue 21): whole processes, cold and warm.

On the device machine: the Swiss-Prot-sized synthetic database (bench/search_gpu.py's
lengths and composition, same seed) written as FASTA and built with ``warpalign makedb``
(timed); then ``python -m warpalign search QUERIES DB --mode M`` as separate processes:

* cold: empty kernel, CuPy and Numba caches (``WARPALIGN_CACHE``, ``CUPY_CACHE_DIR``,
  ``NUMBA_CACHE_DIR`` pointing at fresh folders), the first run of each mode;
* warm: the same caches after that, ``--repeat`` runs per mode (median);
* the 500 mmseqs2 example queries, mode full, warm; beside it the same search in one
  warm process through the API, mode score (the packed kernel's pace as the user gets it);
* ``import warpalign`` (``python -c 'import warpalign'`` minus ``python -c pass``).

Bytecode as a pip-installed user has it: pip byte-compiles a package and its
dependencies when it installs them, but the device's environment is installed with
``--no-compile`` and writes no ``.pyc`` (a warm run compiled 363 source files, 0.8 s). So
every measured process runs with ``PYTHONPYCACHEPREFIX`` (a fresh folder, writable) and
bytecode writing on, and ``compileall`` fills that folder first for our sources, the
packages of every third-party module a CLI search loads and the standard library files it
loads; records say so (``params.pyc``).

One JSON line per figure (scope "call", ``cold``, ``params.mode``, ``params.queries``, the
card, the command). Every run's output must list the same hits as the first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import cpu_name, emit, usable_cores
from scaling import write_fasta
from search_gpu import _find, make_database


def run(args, env) -> tuple[float, str]:
    t0 = time.perf_counter()
    got = subprocess.run([sys.executable, "-m", "warpalign", *args], env=env,
                         capture_output=True, text=True, timeout=600)
    secs = time.perf_counter() - t0
    if got.returncode != 0:
        raise SystemExit(f"warpalign {' '.join(args)} failed: {got.stderr[-2000:]}")
    return secs, got.stdout


#: What a CLI search imports (and so what a pip install would have byte-compiled).
LOADED = ("import warpalign.cli, warpalign.search, warpalign.formats, warpalign.stats, "
          "warpalign.traceback, warpalign.pipeline, cupy, numba, Bio.Align")


def compile_bytecode(env, src: str, imports: str = LOADED) -> str:
    """Byte-compile into ``env``'s PYTHONPYCACHEPREFIX: ``src``, the package folder of each
    third-party module that ``imports`` (:data:`LOADED`) loads and the standard library
    files it loads; what this misses is written by the first (cold) run. Returns how, for
    the records."""
    code = ("import sys, sysconfig\n" + imports + "\n"
            "std = sysconfig.get_paths()['stdlib']\n"
            "for name, m in list(sys.modules.items()):\n"
            "    f = getattr(m, '__file__', None) or ''\n"
            "    if not f.endswith('.py'):\n"
            "        continue\n"
            "    top = sys.modules.get(name.split('.')[0])\n"
            "    paths = list(getattr(top, '__path__', None) or [])\n"
            "    if f.startswith(std) and 'site-packages' not in f:\n"
            "        print(f)\n"
            "    elif paths:\n"
            "        print(paths[0])\n"
            "    else:\n"
            "        print(f)\n")
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    targets = sorted({src, *got.stdout.splitlines()})
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *targets], env=env,
                   stdout=subprocess.DEVNULL, check=False)   # a file that fails: compiled
    secs = time.perf_counter() - t0                          # at import, as without this
    return (f"compileall into PYTHONPYCACHEPREFIX before the runs ({len(targets)} folders "
            f"and files, {secs:.0f} s): what pip install gives")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/cli_search.py " + " ".join(argv or sys.argv[1:])
    import cupy
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    src = str(HERE.parent / "src")
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        tmp = Path(tmp)
        caches = {k: str(tmp / k) for k in ("WARPALIGN_CACHE", "CUPY_CACHE_DIR", "NUMBA_CACHE_DIR")}
        env = dict(os.environ, **caches, PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
                   PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        pyc = compile_bytecode(env, src)
        targets = make_database(args.seed)
        fasta = tmp / "db.fasta"
        write_fasta(targets, fasta)
        residues = int(targets.offsets[-1])
        del targets
        secs, _ = run(["makedb", str(fasta), str(tmp / "db.wa")], env)
        emit({"job": "makedb", "scope": "call", "backend": "cpu",
              "device": f"{cpu_name()} x {usable_cores()}",
              "params": {"residues": residues, "input": "fasta", "pyc": pyc}, "seconds": secs,
              "residues_per_s": residues / secs, "command": command}, out)
        fasta.unlink()
        q20 = str(_find("standard_queries20.fasta"))
        db = str(tmp / "db.wa")
        lengths = {}

        def qres(path):
            from warpalign.io import read_sequences
            return sum(len(r.sequence) for r in read_sequences(path))

        first: dict = {}
        for queries, tag, modes in ((q20, 20, ("full", "score", "end")),):
            lengths[tag] = qres(queries)
            for k, mode in enumerate(modes):
                secs, text = run(["search", queries, db, "--mode", mode], env)
                first[mode] = text
                emit({"job": "search", "scope": "call", "backend": "cuda", "method": "cli",
                      "device": device, "cold": True,
                      "params": {"mode": mode, "queries": tag, "top_k": 10, "pyc": pyc,
                                 "caches": "empty" if k == 0 else f"after {modes[:k]}"},
                      "seconds": secs, "gcups": lengths[tag] * residues / secs / 1e9,
                      "command": command}, out)
            for mode in modes:
                runs = []
                for _ in range(args.repeat):
                    secs, text = run(["search", queries, db, "--mode", mode], env)
                    if text != first[mode]:
                        raise SystemExit(f"mode {mode}: a warm run's hits differ from the first")
                    runs.append(secs)
                secs = float(np.median(runs))
                emit({"job": "search", "scope": "call", "backend": "cuda", "method": "cli",
                      "device": device, "cold": False,
                      "params": {"mode": mode, "queries": tag, "top_k": 10, "pyc": pyc},
                      "seconds": secs, "runs": [round(t, 3) for t in runs],
                      "gcups": lengths[tag] * residues / secs / 1e9,
                      "target": "<= 2.8 s (CUDASW++ 4.0's whole process, scores only)",
                      "command": command}, out)
        q500 = str(_find("mmseqs2_example_QUERY.fasta.gz"))
        n500 = qres(q500)
        runs = [run(["search", q500, db, "--mode", "full"], env)[0] for _ in range(3)]
        secs = float(np.median(runs))
        emit({"job": "search", "scope": "call", "backend": "cuda", "method": "cli",
              "device": device, "cold": False,
              "params": {"mode": "full", "queries": 500, "top_k": 10, "pyc": pyc},
              "seconds": secs, "runs": [round(t, 3) for t in runs],
              "gcups": n500 * residues / secs / 1e9, "command": command}, out)
        code = ("import sys, time; sys.path.insert(0, %r)\n"
                "from warpalign import Database, Scoring, search\n"
                "from warpalign.io import read_sequences\n"
                "db = Database.open(%r); s = Scoring(matrix='BLOSUM62', gap_open=11, gap_extend=1)\n"
                "qs = [r.sequence for r in read_sequences(%r)]\n"
                "search(qs, db, s, mode='score', backend='cuda')\n"
                "t0 = time.perf_counter(); search(qs, db, s, mode='score', backend='cuda')\n"
                "print(time.perf_counter() - t0)\n") % (src, db, q500)
        got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=600)
        if got.returncode == 0:
            secs = float(got.stdout.strip().splitlines()[-1])
            emit({"job": "search", "scope": "call", "backend": "cuda", "method": "api",
                  "device": device, "cold": False,
                  "params": {"mode": "score", "queries": 500, "top_k": 10, "in_process": True,
                             "pyc": pyc},
                  "seconds": secs, "gcups": n500 * residues / secs / 1e9,
                  "baseline": "the packed search in a warm process, beside the CLI's mode full",
                  "command": command}, out)
        else:
            print(got.stderr[-2000:])
        imp = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env)
            t1 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import warpalign, sys; "
                            "assert 'cupy' not in sys.modules and 'numba' not in sys.modules"],
                           env=env, check=True)
            imp.append((time.perf_counter() - t1) - (t1 - t0))
        emit({"job": "import", "scope": "call", "device": device,
              "seconds": float(np.median(imp)), "runs": [round(t, 4) for t in imp],
              "params": {"loads_cupy": False, "loads_numba": False, "pyc": pyc},
              "command": command}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
