"""Session 42 probe E (4 x H200): the streamed 4-GPU mode-full search (each device's limit 1/8
of the resident cost, as bench/scaling.py --streamed-limit gpu) and its 1-GPU twin: per
device busy time, idle gaps (with the activities on either side), and the host functions
after the last chunk, timed by wrappers (start/end ms from the search's start, per call).
usage: python tl42s.py OUT.json"""
import functools, json, sys, tempfile, threading, time
from pathlib import Path
sys.path.insert(0, "bench")

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
            marks.append((label, threading.get_ident() % 1000, round((t - T[0]) * 1e3, 1),
                          round((time.perf_counter() - T[0]) * 1e3, 1)))
    setattr(owner, name, g)


def main():
    from torch.profiler import ProfilerActivity, profile
    from scaling import build_database
    from search_gpu import _find, read_fasta
    from warpalign import Scoring, search
    from warpalign._backends import cuda as cb
    from warpalign._backends.cuda import config as cc, multi, streamed, search as cs
    wrap(streamed.StreamedSearch, "_search_chunked", "_search_chunked")
    wrap(streamed.StreamedSearch, "_ends_from_host", "_ends_from_host")
    wrap(cs.CudaBackend, "_prepare_resident", "_prepare_resident")
    wrap(cs.CudaBackend, "_batch_ends", "_batch_ends")
    wrap(multi.MultiSearch, "_multi_ends", "_multi_ends")
    out = {}
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        cost = cc.RESIDENT_BYTES * db.residues + cc.SEQUENCE_BYTES * len(db)
        for n in (4, 1):
            be = cb.CudaBackend(devices=list(range(n)))
            run = lambda: search(qs, db, s, top_k=10, backend=be, mode="full", gpu_memory=cost // 8)
            run()
            walls = []
            for _ in range(2):
                marks.clear(); T[0] = time.perf_counter(); run(); walls.append(time.perf_counter() - T[0])
            host = list(marks)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                T[0] = t0 = time.perf_counter(); run(); wall = time.perf_counter() - t0
            evs = [e for e in prof.events() if e.device_type.name == "CUDA"]
            t_first = min(e.time_range.start for e in evs)
            per = {}
            for e in evs:
                per.setdefault(e.device_index, []).append(
                    ((e.time_range.start - t_first) / 1e3, (e.time_range.end - t_first) / 1e3, e.name[:40]))
            dev = {}
            for d, v in sorted(per.items()):
                v.sort()
                busy, cs_, ce, gaps, last_name = 0.0, None, None, [], None
                for a, b, nm in v:
                    if ce is None or a > ce:
                        if ce is not None:
                            busy += ce - cs_
                            gaps.append((round(a - ce, 2), round(ce, 1), last_name, nm))
                        cs_, ce = a, b
                    else:
                        ce = max(ce, b)
                    last_name = nm
                busy += ce - cs_
                gaps.sort(reverse=True)
                dev[d] = dict(first=round(v[0][0], 1), last=round(max(b for _, b, _ in v), 1),
                              busy=round(busy, 1), idle=round(sum(g[0] for g in gaps), 1),
                              top_gaps=gaps[:6])
            out[n] = dict(walls=[round(w, 4) for w in walls], profiled_wall=round(wall, 4),
                          host_marks_second_run=host, devices=dev)
            print(f"== {n} GPU(s) streamed full: walls {out[n]['walls']} profiled {wall:.4f}")
            for label, tid, a, b in host:
                if label != "_prepare_resident" or b > 0.8 * walls[-1] * 1e3:
                    print(f"   host {label:18s} t{tid:03d} {a:8.1f} -> {b:8.1f} ms ({b - a:.1f})")
            for d, x in dev.items():
                print(f"   dev {d}: first {x['first']} last {x['last']} busy {x['busy']} idle {x['idle']}")
                for g in x["top_gaps"]:
                    print(f"      gap {g[0]:7.2f} ms at {g[1]:8.1f}: {g[2]} -> {g[3]}")

    Path(sys.argv[1]).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
