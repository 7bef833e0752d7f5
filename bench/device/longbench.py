"""Long-pair GPU score+end, old vs new src (sys.argv[1]: the src folder to import)."""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from warpalign import Scoring
from warpalign._backends.cuda import long as gl
s = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
rng = np.random.default_rng(4)
a = rng.integers(0, 4, 1_000_000).astype(np.uint8)
b = a.copy(); flip = rng.random(len(b)) < 0.08
b[flip] = (b[flip] + 1) % 4
gl.LongPair(a[:50000], b[:50000], s).score_end(0)          # warm-up, compile
times, got = [], None
for _ in range(3):
    t0 = time.perf_counter(); got = gl.LongPair(a, b, s).score_end(0); times.append(time.perf_counter() - t0)
sec = min(times)
print(json.dumps({"job": "long", "scope": "item", "backend": "cuda", "method": "LongPair.score_end",
                  "src": sys.argv[1], "params": {"m": len(a), "n": len(b), "scoring": "5/-3/8/1", "result": [int(x) for x in got]},
                  "seconds": sec, "runs": [round(t, 4) for t in times], "gcups": len(a) * len(b) / sec / 1e9}))
