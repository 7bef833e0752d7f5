"""Where `warpalign search` (500 queries, mode full, Swiss-Prot-sized database) spends its
time with N GPUs visible: one process per count (CUDA_VISIBLE_DEVICES is read at start),
each runs warpalign.cli.main in-process twice (cold, then warm) under cProfile (the CLI's
own entry ends with os._exit, so `python -m cProfile -m warpalign` writes nothing); wall
clocks of both and the warm run's top functions.
usage: python cliprof34.py OUT [counts, e.g. 1,4] [--workers]"""
import os, subprocess, sys, tempfile
from pathlib import Path
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
counts = [int(c) for c in (sys.argv[2] if len(sys.argv) > 2 else "1,4").split(",")]
workers = "--workers" in sys.argv
CHILD = r'''
import cProfile, io, pstats, sys, time
sys.path[:0] = ["bench", "src"]
from warpalign.cli import main
args, prof = sys.argv[1:-1], sys.argv[-1]
for k in range(2):
    pr = cProfile.Profile(); t = time.perf_counter(); pr.enable()
    rc = main(args)
    pr.disable(); print("run", k, "rc", rc, "seconds", round(time.perf_counter() - t, 3), flush=True)
pr.dump_stats(prof)
s = io.StringIO(); st = pstats.Stats(pr, stream=s)
st.sort_stats("cumulative").print_stats(45); st.sort_stats("tottime").print_stats(25)
print(s.getvalue()[:20000])
'''
sys.path[:0] = ["bench"]
from scaling import build_database, _fasta_text
from search_gpu import _find, read_fasta
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    tmp = Path(tmp)
    db = build_database(tmp, 2024)
    fasta = tmp / "q.fasta"; fasta.write_text(_fasta_text(qs))
    for n in counts:
        args = ["search", str(fasta), str(db.path), "--mode", "full", "-o", str(tmp / "o.tsv")]
        if workers:
            args += ["--workers", str(n)]
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(map(str, range(n))))
        got = subprocess.run([sys.executable, "-c", CHILD, *args, str(out / f"cli{n}.prof")],
                             env=env, capture_output=True, text=True, timeout=300)
        (out / f"cli{n}.txt").write_text(got.stdout + got.stderr[-3000:])
        print(n, "GPUs:", [l for l in got.stdout.splitlines() if l.startswith("run")], flush=True)
