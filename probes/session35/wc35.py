"""session 35: fresh-process CLI wall times, main against h-warmcli (locate/pairs warm the
device up first). Builds a ce2chrX reference, 1,000 reads of 150 bp (FASTQ) and 32,768
pairs of 128 x 1,024 (two FASTA files) in /tmp, then alternates the two trees.
usage: python wc35.py OUT.jsonl MAIN_SRC BRANCH_SRC"""
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

out, trees = sys.argv[1], {"main": sys.argv[2], "h-warmcli": sys.argv[3]}
tmp = Path("/tmp/wc35")
tmp.mkdir(exist_ok=True)
site = "/tmp/site"
env0 = dict(os.environ)
sys.path[:0] = [trees["main"], site]
from warpalign.reference import Reference  # noqa: E402

data = Path(os.environ["WARPALIGN_SHARED_DATA"]) / "dna" / "ce2chrX.fa.gz"
with gzip.open(data, "rt") as fh:
    seq = "".join(l.strip() for l in fh if not l.startswith(">")).upper()
ref = tmp / "chrx.ref"
if not ref.exists():
    Reference.build([seq], ref)
rng = np.random.default_rng(35)
with open(tmp / "reads.fq", "w") as fh:
    for k, at in enumerate(rng.integers(0, len(seq) - 150, 1000)):
        fh.write(f"@r{k}\n{seq[at:at + 150]}\n+\n{'I' * 150}\n")
L = np.array(list("ACGT"))
with open(tmp / "x.fa", "w") as fx, open(tmp / "y.fa", "w") as fy:
    for k in range(32768):
        fx.write(f">x{k}\n{''.join(L[rng.integers(0, 4, 128)])}\n")
        fy.write(f">y{k}\n{''.join(L[rng.integers(0, 4, 1024)])}\n")
jobs = {"locate_sam": ["locate", str(tmp / "reads.fq"), str(ref), "--format", "sam",
                       "--backend", "cuda", "--no-progress", "-o", str(tmp / "o.sam")],
        "pairs": ["pairs", str(tmp / "x.fa"), str(tmp / "y.fa"), "--backend", "cuda",
                  "--no-progress", "-o", str(tmp / "o.tsv")]}
for job, argv in jobs.items():
    for tree, src in trees.items():      # once each, untimed: compile caches
        subprocess.run([sys.executable, "-m", "warpalign", *argv], check=True,
                       env={**env0, "PYTHONPATH": f"{src}:{site}"})
    for r in range(4):
        for tree, src in trees.items():
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "warpalign", *argv], capture_output=True,
                               env={**env0, "PYTHONPATH": f"{src}:{site}"})
            rec = {"job": job, "tree": tree, "run": r, "rc": p.returncode,
                   "seconds": round(time.perf_counter() - t, 4),
                   "err": p.stderr.decode()[-300:] if p.returncode else ""}
            print(json.dumps(rec), flush=True)
            with open(out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
