"""Session 41 (p41h: p41f without the profile, run on the PYTHONPATH given): where the SAM CLI row's time goes beyond the in-process many-reads call
(1,000 x 150 bp reads vs ce2chrX, mode full): locate_many_encoded with second=False/True
in the same process, then one warm cli_main SAM run under cProfile."""
import gzip
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path[:0] = ["bench"]
from _common import SHARED_DATA
from warpalign.alphabet import reverse_complement
from warpalign.cli import main as cli_main
from warpalign.locate import locate_many_encoded
from warpalign.reference import Reference
from warpalign.scoring import Scoring
import warpalign
print(warpalign.__file__)

scoring = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
with gzip.open(SHARED_DATA / "dna" / "ce2chrX.fa.gz", "rt") as fh:
    fh.readline()
    chrx = "".join(line.strip() for line in fh).upper()
ref = scoring.encode(chrx)
ref.setflags(write=False)
rng = np.random.default_rng(7)
reads = []
for k in range(1000):
    while True:
        at = int(rng.integers(0, len(ref) - 150))
        read = ref[at:at + 150].copy()
        if (read < 4).all():
            break
    flip = rng.random(150) < 0.03
    read[flip] = (read[flip] + rng.integers(1, 4, int(flip.sum()))) % 4
    reads.append(reverse_complement(read, scoring.alphabet) if k % 2 else read)
for second in (False, True, False, True):
    list(locate_many_encoded(reads, ["chrX"], [ref], scoring, mode="full", backend="cuda",
                             second=second))
    t0 = time.perf_counter()
    list(locate_many_encoded(reads, ["chrX"], [ref], scoring, mode="full", backend="cuda",
                             second=second))
    print(f"many full second={second}: {time.perf_counter() - t0:.3f} s")
with tempfile.TemporaryDirectory() as tmp:
    built = Reference.build([scoring.alphabet.decode(ref)], Path(tmp) / "chrx.ref")
    fastq = Path(tmp) / "reads.fq"
    with open(fastq, "w") as fh:
        for k, r in enumerate(reads):
            fh.write(f"@r{k}\n{scoring.alphabet.decode(r)}\n+\n{'I' * len(r)}\n")
    sam = ["locate", str(fastq), str(built.path), "--format", "sam", "--backend", "cuda",
           "--no-progress", "-o", str(Path(tmp) / "out.sam")]
    cli_main(sam)
    for _ in range(4):
        t0 = time.perf_counter()
        cli_main(sam)
        print(f"cli sam: {time.perf_counter() - t0:.3f} s")
