"""session 35: where encode_sides' host staging of 4 + 128 MiB (32,768 x 128 x 4,096 from
NumPy) spends its time: per chunk, the wait for the pinned buffer, the pack round, the
copy queue; against the pack alone, a plain copy to pinned memory and an empty pool round.
usage: python pk35.py OUT.jsonl  (main tree)"""
import json
import sys
import time

import numpy as np
import cupy as cp

from warpalign import Scoring
from warpalign._backends.cuda import encode as E
from warpalign._backends.cpu.pack2 import pack_slice

S = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
T = S.alphabet.code_table
rng = np.random.default_rng(0)
L = np.frombuffer(b"ACGT", np.uint8)
X, Y = L[rng.integers(0, 4, 32768 * 128)], L[rng.integers(0, 4, 32768 * 4096)]
out = open(sys.argv[1], "w")
marks = []
real_pack = E._pack_pieces


def pack(pieces, threads):
    t = time.perf_counter()
    r = real_pack(pieces, threads)
    marks.append(("pack", t, time.perf_counter(), sum(s.size for s, _ in pieces)))
    return r


E._pack_pieces = pack


def emit(rec):
    print(json.dumps(rec), flush=True)
    out.write(json.dumps(rec) + "\n")


for chunk in (None, 1 << 25, 1 << 27, 1 << 28):
    for r in range(6):
        marks.clear()
        t0 = time.perf_counter()
        got = E.encode_sides([X, Y], T, chunk=chunk)
        t1 = time.perf_counter()
        assert got[1][3] == 3 and got[1][1] == -1
        if r >= 2:
            emit({"probe": "encode_sides", "chunk": chunk, "ms": round(1e3 * (t1 - t0), 3),
                  "packs": [(round(1e3 * (a - t0), 3), round(1e3 * (b - t0), 3), n >> 20)
                            for _, a, b, n in marks]})
E._pack_pieces = real_pack
pool = E._fill_pool()
pin = cp.cuda.alloc_pinned_memory(Y.size)
pinned = np.frombuffer(pin, np.uint8, Y.size)
page = np.empty(Y.size // 4, np.uint8)
for r in range(5):
    t = time.perf_counter()
    [f.result() for f in [pool.submit(int, 0) for _ in range(16)]]
    t1 = time.perf_counter()
    ok = E._pack_pieces([(Y, pinned[:Y.size // 4])], 16)
    t2 = time.perf_counter()
    E._pack_pieces([(Y[:Y.size // 2], pinned[:Y.size // 8])], 16)
    E._pack_pieces([(Y[Y.size // 2:], pinned[Y.size // 8:Y.size // 4])], 16)
    t3 = time.perf_counter()
    E._pack_pieces([(Y, page)], 16)
    t4 = time.perf_counter()
    E._fill(pinned, Y, 16)
    t5 = time.perf_counter()
    np.copyto(pinned, Y)
    t6 = time.perf_counter()
    pack_slice(Y[:1 << 24], page[:1 << 22], np.zeros(1, np.uint8))
    t7 = time.perf_counter()
    emit({"probe": "parts", "ok": bool(all(ok)), "empty_round_ms": round(1e3 * (t1 - t), 3),
          "pack128_pinned_1round_ms": round(1e3 * (t2 - t1), 3),
          "pack128_pinned_2rounds_ms": round(1e3 * (t3 - t2), 3),
          "pack128_pageable_ms": round(1e3 * (t4 - t3), 3),
          "copy128_to_pinned_16thr_ms": round(1e3 * (t5 - t4), 3),
          "copy128_to_pinned_1thr_ms": round(1e3 * (t6 - t5), 3),
          "pack16MiB_1thr_ms": round(1e3 * (t7 - t6), 3)})
d = cp.empty(Y.size // 4, cp.uint8)
s = cp.cuda.Stream(non_blocking=True)
for r in range(3):
    t = time.perf_counter()
    d.set(pinned[:Y.size // 4], stream=s)
    s.synchronize()
    emit({"probe": "h2d_32MiB_pinned_ms", "ms": round(1e3 * (time.perf_counter() - t), 3)})
