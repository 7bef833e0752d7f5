"""(session 34) Why the Dask mode full second round traces slower on a worker than the
client does: the merged hits of 500 queries (mode end on a one-GPU cluster), then
trace_hits timed and cProfiled inside the worker (a task), and _with_alignments timed in
this process on the same GPU.
usage: python wp34.py OUTDIR"""
import cProfile, io, json, pstats, sys, tempfile, time
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, "bench")


def prof_task(path, fp, hits, codes, scoring):
    import os, numba
    from warpalign.distributed import trace_hits
    times = []
    for _ in range(2):
        t = time.perf_counter(); trace_hits(path, fp, hits, codes, scoring, "local", "auto")
        times.append(round(time.perf_counter() - t, 4))
    pr = cProfile.Profile(); pr.enable()
    t = time.perf_counter(); trace_hits(path, fp, hits, codes, scoring, "local", "auto")
    times.append(round(time.perf_counter() - t, 4)); pr.disable()
    s = io.StringIO(); st = pstats.Stats(pr, stream=s)
    st.sort_stats("cumulative").print_stats(40); st.sort_stats("tottime").print_stats(25)
    env = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_",
                                           "CUDA_VISIBLE_DEVICES", "NUMBA_NUM_THREADS")}
    return times, s.getvalue()[:24000], env, numba.get_num_threads(), os.sched_getaffinity(0).__len__()


def main():
    from distributed import Client
    from scaling import build_database
    from search_gpu import _find, read_fasta
    import warpalign.distributed as wd
    from warpalign import Scoring
    from warpalign.search import _with_alignments
    out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    codes = [s.encode(q) for q in qs]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        fp = wd.database_fingerprint(db)
        with wd.local_cluster(1, devices=["0"]) as cluster, Client(cluster) as c:
            c.wait_for_workers(1)
            ended = wd.search(qs, db, s, client=c, top_k=10, mode="end")
            hits = [replace(h, mode="full") for h in ended]
            for label, a, b in (("all", 0, len(qs)), ("quarter", 0, len(qs) // 4)):
                times, text, env, nthreads, cores = c.submit(
                    prof_task, str(db.path), fp, hits[a:b], codes[a:b], s, pure=False).result()
                (out / f"worker_{label}.txt").write_text(text)
                rec = dict(where="worker", part=label, seconds=times, env=env,
                           numba_threads=nthreads, cores=cores)
                print(json.dumps(rec), flush=True)
        for label, a, b in (("all", 0, len(qs)), ("quarter", 0, len(qs) // 4)):
            times = []
            for _ in range(3):
                t = time.perf_counter()
                _with_alignments(hits[a:b], codes[a:b], db, s, "local", "auto", None)
                times.append(round(time.perf_counter() - t, 4))
            pr = cProfile.Profile(); pr.enable()
            _with_alignments(hits[a:b], codes[a:b], db, s, "local", "auto", None)
            pr.disable(); st = io.StringIO()
            pstats.Stats(pr, stream=st).sort_stats("cumulative").print_stats(40)
            (out / f"client_{label}.txt").write_text(st.getvalue()[:24000])
            print(json.dumps(dict(where="client", part=label, seconds=times)), flush=True)


if __name__ == "__main__":
    main()
