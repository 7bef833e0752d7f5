"""Session 42 probe F (4 x H200): the flat end cells (this tree) against main's (OLD on
PYTHONPATH) in alternated processes: 4-GPU resident and streamed (limit 1/8 of the resident
cost) mode-full searches of the 500 mmseqs2 queries, three timed runs each after a warm one;
prints one JSON line. usage: python p42f.py LABEL"""
import hashlib, json, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, "bench")
from scaling import build_database, same_hits
from search_gpu import _find, read_fasta
import warpalign
from warpalign import Scoring, search
from warpalign._backends import cuda as cb
from warpalign._backends.cuda import config as cc

s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
out = {"label": sys.argv[1], "src": str(Path(warpalign.__file__).parent)}
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    db = build_database(Path(tmp), 2024)
    cost = cc.RESIDENT_BYTES * db.residues + cc.SEQUENCE_BYTES * len(db)
    be = cb.CudaBackend(devices=[0, 1, 2, 3])
    ref = None
    for name, limit in (("resident", None), ("streamed", cost // 8)):
        got = search(qs, db, s, top_k=10, backend=be, mode="full", gpu_memory=limit)
        if ref is None:
            ref = got
        out[name + "_same_hits"] = same_hits(ref, got) and all(
            [(a.query_start, a.query_end, a.target_start, a.target_end, a.cigar)
             for a in x.alignments] == [(a.query_start, a.query_end, a.target_start,
                                         a.target_end, a.cigar) for a in y.alignments]
            for x, y in zip(ref, got))
        out[name + "_digest"] = hashlib.sha1(repr([
            (h.scores.tolist(), h.targets.tolist(), h.query_ends.tolist(), h.target_ends.tolist(),
             [(a.query_start, a.target_start, a.cigar) for a in h.alignments]) for h in got
        ]).encode()).hexdigest()[:16]
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            search(qs, db, s, top_k=10, backend=be, mode="full", gpu_memory=limit)
            runs.append(round(time.perf_counter() - t, 4))
        out[name] = runs
        out[name + "_median"] = statistics.median(runs)
print(json.dumps(out))
