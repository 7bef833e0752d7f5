"""(session 36) Fine host timeline of score_pairs(mode="full") 32,768 x 128 x 1,024 from
NumPy (issue 20): sys.setprofile on the calling thread records every Python and C call's
start and duration (ms from the call's start); printed: calls of >= 0.03 ms, indented by
depth, for two warm calls. Overhead inflates the call; use it for where, not how much.
usage: python pft36.py OUT.txt   (from the repo root)"""
import sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
from pairs_full import make
from warpalign import Scoring, score_pairs

s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
P, X, Y = 32768, 128, 1024
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
for _ in range(3):
    score_pairs(xs, ys, s, mode="full", backend="cuda")
plain = []
for _ in range(5):
    t = time.perf_counter(); score_pairs(xs, ys, s, mode="full", backend="cuda")
    plain.append(round((time.perf_counter() - t) * 1e3, 3))
lines = [f"plain calls ms {plain}"]
for rep in range(2):
    stack, rows = [], []
    pc = time.perf_counter
    t0 = pc()
    def prof(frame, event, arg):
        t = pc()
        if event in ("call", "c_call"):
            name = (f"{frame.f_code.co_filename.split('/')[-1]}:{frame.f_code.co_name}:{frame.f_lineno}"
                    if event == "call" else f"C {getattr(arg, '__qualname__', arg)}")
            stack.append((name, t, len(rows)))
            rows.append(None)
        elif event in ("return", "c_return", "c_exception") and stack:
            name, a, k = stack.pop()
            rows[k] = (len(stack), round((a - t0) * 1e3, 3), round((t - a) * 1e3, 3), name)
    sys.setprofile(prof)
    score_pairs(xs, ys, s, mode="full", backend="cuda")
    sys.setprofile(None)
    total = (pc() - t0) * 1e3
    lines.append(f"== traced call {rep}: {total:.3f} ms")
    for r in rows:
        if r is not None and r[2] >= 0.03 and r[0] <= 12:
            lines.append(f"{'  ' * r[0]}{r[1]:8.3f} {r[2]:7.3f} {r[3]}")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
print(lines[0])
