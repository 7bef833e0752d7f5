"""Session 41 (p40i on main with ww_ypack_raw: queue_packs too): statement-level host timeline of score_pairs from CuPy arrays (each
statement of score_pairs, its score_ahead, and pairs_ahead.encode_and_score followed by a
perf_counter mark; medians of 301 calls; a mark costs ~0.1 us)."""
import ast
import inspect
import textwrap
import time

import numpy as np

import warpalign  # noqa: F401
import cupy as cp
from warpalign import Scoring, score_pairs
from warpalign import pairs as pp
from warpalign._backends.cuda import pairs_ahead as pa

TL = []


class Mark(ast.NodeTransformer):
    def __init__(self, tag, lines):
        self.tag, self.lines = tag, lines

    def visit_FunctionDef(self, node):
        if node.name in ("score_ahead",) or node is self.root:
            body = []
            for st in node.body:
                body.append(self.visit(st) if isinstance(st, ast.FunctionDef) else st)
                label = f"{self.tag}:{st.lineno}:{self.lines[st.lineno - 1].strip()[:50]}"
                body.append(ast.parse(f"_TL.append(({label!r}, _pc()))").body[0])
            node.body = body
        return node


def instrument(fn, tag):
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    m = Mark(tag, src.splitlines())
    m.root = tree.body[0]
    tree = m.visit(tree)
    ast.fix_missing_locations(tree)
    g = dict(fn.__globals__)
    g["_TL"], g["_pc"] = TL, time.perf_counter
    exec(compile(tree, f"<{tag}>", "exec"), g)
    return g[fn.__name__]


# callees first: each instrumented function reads a copy of its module's globals
pa.queue_encode = instrument(pa.queue_encode, "qe")
pa.queue_wordwise = instrument(pa.queue_wordwise, "qw")
pa.queue_packs = instrument(pa.queue_packs, "qp")
pp.gather = instrument(pp.gather, "ga")
pa.encode_and_score = instrument(pa.encode_and_score, "eas")
sp = instrument(pp.score_pairs, "sp")
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))])
cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
rows = []
for i in range(306):
    TL.clear()
    t0 = time.perf_counter()
    sp(cx, cy, s2, backend="cuda")
    t1 = time.perf_counter()
    if i >= 5:
        rows.append([(k, v - t0) for k, v in TL] + [("end", t1 - t0)])
labels = [k for k, _ in rows[0]]
prev = 0.0
for j, k in enumerate(labels):
    at = float(np.median([r[j][1] for r in rows if len(r) == len(rows[0])])) * 1e6
    print(f"{at:8.1f} us  +{at - prev:7.1f}  {k}")
    prev = at
