"""Where `warpalign search` (500 queries, mode full, the Swiss-Prot-sized database) spends
its wall time with 1 and 4 GPUs visible: one warm-up process, then each count timed once
plain and once under cProfile (all threads), the top functions printed.
usage: python cliprof33.py OUT"""
import os, pstats, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, "bench")
from scaling import build_database, _fasta_text
from search_gpu import _find, read_fasta
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    tmp = Path(tmp)
    db = build_database(tmp, 2024)
    fasta = tmp / "q.fasta"; fasta.write_text(_fasta_text(qs))
    env = dict(os.environ, WARPALIGN_CACHE=str(tmp / "k"), CUPY_CACHE_DIR=str(tmp / "c"))
    base = [sys.executable]
    args = ["-m", "warpalign", "search", str(fasta), str(db.path), "--mode", "full"]
    def run(n, prof=None):
        e = dict(env, CUDA_VISIBLE_DEVICES=",".join(map(str, range(n))))
        pre = ["-m", "cProfile", "-o", str(prof)] if prof else []
        t = time.perf_counter()
        got = subprocess.run(base + pre + args, env=e, capture_output=True, timeout=200)
        assert got.returncode == 0, got.stderr[-2000:]
        return time.perf_counter() - t, len(got.stdout)
    print("warm", run(4), flush=True)
    for n in (1, 4):
        print(n, "plain", run(n), flush=True)
        p = out / f"cli{n}.prof"
        print(n, "cprofile", run(n, p), flush=True)
        st = pstats.Stats(str(p)); st.sort_stats("cumulative").print_stats(45)
        st.sort_stats("tottime").print_stats(25)
