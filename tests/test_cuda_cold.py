"""A cold CUDA search compiles only what it launches, and a second process compiles
nothing (the kernels come from the disk cache); a query set larger than one packed batch
gives the hits of one batch. The cache's logic without a GPU: tests/test_kernel_cache.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from warpalign import Database, Scoring, search

pytestmark = pytest.mark.cuda

BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
AMINO = "ACDEFGHIKLMNPQRSTVWY"
_SRC = Path(__file__).resolve().parents[1] / "src"


def _proteins(rng, n, lo, hi):
    return ["".join(rng.choice(list(AMINO), size=rng.integers(lo, hi + 1))) for _ in range(n)]


# one process: a mode-score search of 6 queries (one packed batch) on a fresh cache; prints
# the units it compiled and read, and its hits
_COLD = """
import json, sys
import numpy as np
from warpalign import Database, Scoring, search
from warpalign._backends.cuda.loader import kernel_cache
rng = np.random.default_rng(5)
aa = list("ACDEFGHIKLMNPQRSTVWY")
targets = ["".join(rng.choice(aa, size=rng.integers(20, 900))) for _ in range(3000)]
queries = ["".join(rng.choice(aa, size=rng.integers(100, 400))) for _ in range(6)]
queries[2] = targets[17][30:330]
s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
db = Database.from_sequences(targets, alphabet=s.alphabet)
res = search(queries, db, s, top_k=5, mode="score", backend="cuda")
c = kernel_cache()
print(json.dumps({"compiled": [list(u) for u in c.compiled],
                  "loaded": [list(u) for u in c.loaded],
                  "hits": [[h.scores.tolist(), h.targets.tolist()] for h in res]}))
"""


def _run_cold(cache: Path) -> dict:
    path = os.pathsep.join([str(_SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = dict(os.environ, WARPALIGN_CACHE=str(cache), PYTHONPATH=path)
    got = subprocess.run([sys.executable, "-c", _COLD], capture_output=True, text=True,
                         env=env, timeout=600)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout.strip().splitlines()[-1])


def test_cold_search_compiles_only_what_it_needs(cuda, tmp_path):
    first = _run_cold(tmp_path / "cache")
    names = sorted(n for unit in first["compiled"] for n in unit)
    # the packed kernel (one R per query group), the target stream, the top-k cut, and
    # the 32-bit rescoring kernel only if something saturated: never the 109 of old
    assert "rowsq2_stream" in names and "top_select" in names
    packed = [n for n in names if n.startswith("sw_rowsqb<")]
    assert 1 <= len(packed) <= 4, names
    rest = set(names) - {"rowsq2_stream", "top_select", *packed}
    assert rest <= {"sw_s32<32, 16, false, true>"}, names
    assert all(len(unit) == 1 for unit in first["compiled"])    # one unit per kernel
    assert first["loaded"] == []
    # a second process: everything from the disk cache, nothing compiled, same hits
    second = _run_cold(tmp_path / "cache")
    assert second["compiled"] == []
    assert sorted(map(tuple, second["loaded"])) == sorted(map(tuple, first["compiled"]))
    assert second["hits"] == first["hits"]
    # and the hits are the CPU backend's
    rng = np.random.default_rng(5)
    aa = list(AMINO)
    targets = ["".join(rng.choice(aa, size=rng.integers(20, 900))) for _ in range(3000)]
    queries = ["".join(rng.choice(aa, size=rng.integers(100, 400))) for _ in range(6)]
    queries[2] = targets[17][30:330]
    db = Database.from_sequences(targets, alphabet=BLOSUM62.alphabet)
    want = search(queries, db, BLOSUM62, top_k=5, mode="score", backend="cpu")
    assert first["hits"] == [[h.scores.tolist(), h.targets.tolist()] for h in want]


@pytest.mark.parametrize("mode", ["score", "end", "full"])
def test_many_packed_batches_equal_one(cuda, mode):
    """Tuning.pack_score_bytes small enough for 3 queries per packed batch: 14 queries run as several
    batches (the next one's host side made while the current one runs), the hits those of
    one batch and of the CPU backend."""
    from warpalign._backends.cuda import CudaBackend
    from warpalign._backends.cuda.config import Tuning

    rng = np.random.default_rng(11)
    targets = _proteins(rng, 400, 1, 700)
    targets[5] = targets[50] = targets[150]
    queries = _proteins(rng, 14, 30, 300)
    queries[4] = targets[150][20:200]
    queries[9] = ""                                    # an empty query among them
    db = Database.from_sequences(targets, alphabet=BLOSUM62.alphabet)
    small = CudaBackend(devices=(0,), tuning=Tuning(pack_score_bytes=8 * len(targets) * 3))
    handle = small.prepare(db.targets)
    lists = list(small.iter_batches([BLOSUM62.encode(q) for q in queries], handle, BLOSUM62,
                                    top_k=6))
    assert len(lists) >= 4 and sum(map(len, lists)) == len(queries)

    def hits(res):
        return [(h.scores.tolist(), h.targets.tolist(),
                 None if h.query_ends is None else h.query_ends.tolist(),
                 None if h.alignments is None else [a.cigar for a in h.alignments])
                for h in res]

    many = hits(search(queries, db, BLOSUM62, top_k=6, mode=mode, backend=small))
    assert many == hits(search(queries, db, BLOSUM62, top_k=6, mode=mode, backend=cuda))
    assert many == hits(search(queries, db, BLOSUM62, top_k=6, mode=mode, backend="cpu"))


def test_the_last_batch_cut_short_when_ends_are_reported(cuda):
    """A search reporting ends or alignments over several packed batches cuts the last one
    short (config.split_tail): one list per batch, the same hits, ends and CIGARs as one
    batch and as the CPU backend; mode score keeps the batches whole."""
    from warpalign._backends.cuda import CudaBackend
    from warpalign._backends.cuda.config import Tuning

    rng = np.random.default_rng(12)
    targets = _proteins(rng, 300, 1, 900)
    targets[7] = targets[70] = targets[170]
    queries = _proteins(rng, 40, 280, 340)
    queries[37] = targets[170][100:420]
    db = Database.from_sequences(targets, alphabet=BLOSUM62.alphabet)
    small = CudaBackend(devices=(0,), tuning=Tuning(pack_score_bytes=8 * len(targets) * 16))
    handle = small.prepare(db.targets)
    codes = [BLOSUM62.encode(q) for q in queries]
    sizes = [len(b) for b in small.iter_batches(codes, handle, BLOSUM62, top_k=5, ends=True)]
    assert sizes == [16, 16, 6, 2]
    assert [len(b) for b in small.iter_batches(codes, handle, BLOSUM62, top_k=5)] == [16, 16, 8]

    def hits(res):
        return [(h.scores.tolist(), h.targets.tolist(), h.query_ends.tolist(),
                 h.target_ends.tolist(), [a.cigar for a in h.alignments],
                 [a.target_start for a in h.alignments]) for h in res]

    many = hits(search(queries, db, BLOSUM62, top_k=5, mode="full", backend=small))
    assert many == hits(search(queries, db, BLOSUM62, top_k=5, mode="full", backend=cuda))
    assert many == hits(search(queries, db, BLOSUM62, top_k=5, mode="full", backend="cpu"))
