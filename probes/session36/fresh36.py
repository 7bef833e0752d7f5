"""(prepared in session 35 for 36) Where a fresh `warpalign locate` process spends its ~5.5 s
(1,000 reads x 150 bp against ce2chrX, SAM; the warm in-process CLI takes 1.6-2.1 s,
session 35 call C/E/G): cProfile of cli.main in a fresh process (the CLI ends with
os._exit, so the stats are dumped from here before), plus the wall clock of the imports.
usage: python fresh36.py OUT.txt READS.fq REF.ref   (build both as .carry/p35/wc35.py does)"""
import cProfile
import io
import pstats
import sys
import time

t0 = time.perf_counter()
from warpalign.cli import main  # noqa: E402
t1 = time.perf_counter()
out, reads, ref = sys.argv[1:4]
pr = cProfile.Profile()
pr.enable()
code = main(["locate", reads, ref, "--format", "sam", "--backend", "cuda", "--no-progress",
             "-o", "/tmp/fresh36.sam"])
pr.disable()
t2 = time.perf_counter()
s = io.StringIO()
st = pstats.Stats(pr, stream=s)
st.sort_stats("cumulative").print_stats(40)
st.sort_stats("tottime").print_stats(25)
with open(out, "w") as fh:
    fh.write(f"import {t1 - t0:.3f} s, main {t2 - t1:.3f} s, rc {code}\n")
    fh.write(s.getvalue())
print(f"import {t1 - t0:.3f} s, main {t2 - t1:.3f} s, rc {code}")
