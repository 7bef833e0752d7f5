"""Session 42 probe B (4 x H200): how short could a 4-GPU mode-full search of the 500 mmseqs2
queries be if the end cells and tracing of all but a last share of the queries ran beside
the scan? In one process, blocks alternated: 1 GPU full (all), 4 GPUs score and full (all),
and 4 GPUs score and full of the last share alone (15%, 10%); the bound is 4-GPU score
(all) + (full - score) of the share, against 1-GPU full (all)."""
import statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, "bench")
from scaling import build_database, same_hits
from search_gpu import _find, read_fasta
from warpalign import Scoring, search
from warpalign._backends import cuda as cuda_backend

scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    t0 = time.perf_counter()
    db = build_database(Path(tmp), 2024)
    print(f"db built {time.perf_counter() - t0:.1f} s", flush=True)
    one = cuda_backend.CudaBackend(devices=[0])
    four = cuda_backend.CudaBackend(devices=[0, 1, 2, 3])
    sets = {"all": qs, "last15": qs[-75:], "last10": qs[-50:]}
    cases = [("1gpu full all", one, "full", "all"), ("4gpu score all", four, "score", "all"),
             ("4gpu full all", four, "full", "all")]
    for s in ("last15", "last10"):
        cases += [(f"4gpu score {s}", four, "score", s), (f"4gpu full {s}", four, "full", s)]
    times = {c[0]: [] for c in cases}
    ref = {}
    for label, eng, mode, s in cases:     # warm
        got = search(sets[s], db, scoring, top_k=10, backend=eng, mode=mode)
        ref[label] = got
    ok = same_hits(ref["1gpu full all"], ref["4gpu full all"])
    print("4-GPU full hits equal 1-GPU:", ok, flush=True)
    for rep in range(3):
        for label, eng, mode, s in cases:
            t = time.perf_counter()
            search(sets[s], db, scoring, top_k=10, backend=eng, mode=mode)
            times[label].append(time.perf_counter() - t)
        print("rep", rep, {k: round(v[-1], 4) for k, v in times.items()}, flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:18s} {v:.4f} s  runs {[round(x, 4) for x in times[k]]}")
    f1 = med["1gpu full all"]
    print(f"now: full 4-GPU speed-up {f1 / med['4gpu full all']:.3f}x; score-only bound "
          f"{f1 / med['4gpu score all']:.3f}x")
    for s in ("last15", "last10"):
        tail = med[f"4gpu full {s}"] - med[f"4gpu score {s}"]
        bound = med["4gpu score all"] + tail
        print(f"{s}: its full - score {tail * 1e3:.1f} ms; bound {bound:.4f} s = "
              f"{f1 / bound:.3f}x")
