"""Session 42 probe C (4 x H200): where a 4-GPU mode-full search of the last 50 mmseqs2
queries spends its time after the scan (p42b: its full - score was 28 ms): the phases timed
by wrapping the functions that make them (start and end from the call's start, medians of
9 calls), then one cProfile of 5 calls."""
import cProfile, functools, pstats, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, "bench")
from scaling import build_database
from search_gpu import _find, read_fasta
import warpalign.search  # noqa: F401
ws = sys.modules["warpalign.search"]
from warpalign import Scoring, search
from warpalign._backends import cuda as cuda_backend
from warpalign._backends.cuda import multi, search as cs

scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1][-50:]
marks = []
T = [0.0]

def wrap(owner, name, label):
    f = getattr(owner, name)
    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            marks.append((label, t - T[0], time.perf_counter() - T[0]))
    setattr(owner, name, g)

wrap(multi.MultiSearch, "_search_multi_packed", "scan+cut (multi packed)")
wrap(multi.MultiSearch, "_merged_cut", "merged cut (reads cuts)")
wrap(multi.MultiSearch, "_multi_ends", "multi ends")
wrap(cs.CudaBackend, "_batch_ends", "_batch_ends (a device)")
wrap(ws, "_top_hits", "_top_hits")
wrap(ws, "_with_alignments", "_with_alignments")
import warpalign.traceback  # noqa: F401
wt = sys.modules["warpalign.traceback"]
wrap(wt, "align_pairs_table", "align_pairs_table")

with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    db = build_database(Path(tmp), 2024)
    four = cuda_backend.CudaBackend(devices=[0, 1, 2, 3])
    for mode in ("score", "full"):
        search(qs, db, scoring, top_k=10, backend=four, mode=mode)
    for mode in ("score", "full"):
        per = {}
        tot = []
        for rep in range(9):
            marks.clear()
            T[0] = time.perf_counter()
            search(qs, db, scoring, top_k=10, backend=four, mode=mode)
            tot.append(time.perf_counter() - T[0])
            for label, a, b in marks:
                per.setdefault(label, []).append((a, b))
        print(f"== {mode}: total median {statistics.median(tot) * 1e3:.1f} ms "
              f"runs {[round(x * 1e3, 1) for x in tot]}")
        for label, ab in per.items():
            n = len(ab) // 9
            print(f"  {label:28s} x{n}: start {statistics.median(a for a, _ in ab) * 1e3:7.1f}"
                  f"  end {statistics.median(b for _, b in ab) * 1e3:7.1f} ms")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5):
        search(qs, db, scoring, top_k=10, backend=four, mode="full")
    pr.disable()
    st = pstats.Stats(pr)
    st.sort_stats("tottime").print_stats(30)
    st.sort_stats("cumulative").print_stats(45)
