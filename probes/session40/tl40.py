"""(session 40) Issue 25: where the 4-GPU streamed and in-process full searches leave the
devices idle. torch.profiler (CUPTI) records every kernel and copy of the process (CuPy's
too); per device: busy union, first/last activity, the largest idle gaps with the
activities on either side. usage: python tl40.py OUT.json"""
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, "bench")


def main():
    import torch
    from torch.profiler import ProfilerActivity, profile
    from scaling import build_database
    from search_gpu import _find, read_fasta
    from warpalign import Scoring, search
    from warpalign._backends import cuda as cb
    from warpalign._backends.cuda import config as cc
    out = {}
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        cost = cc.RESIDENT_BYTES * db.residues + cc.SEQUENCE_BYTES * len(db)
        for label, n, mode, limit in (("streamed-gpu", 4, "full", cost // 8),
                                      ("resident", 4, "full", None),
                                      ("resident", 4, "score", None),
                                      ("streamed-gpu", 1, "full", cost // 8)):
            be = cb.CudaBackend(devices=list(range(n)))
            run = lambda: search(qs, db, s, top_k=10, backend=be, mode=mode, gpu_memory=limit)
            run()
            walls = []
            for _ in range(2):
                t = time.perf_counter(); run(); walls.append(time.perf_counter() - t)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                t0 = time.perf_counter(); run(); wall = time.perf_counter() - t0
            evs = [e for e in prof.events() if e.device_type.name == "CUDA"]
            per = {}
            for e in evs:
                per.setdefault(e.device_index, []).append(
                    (e.time_range.start, e.time_range.end, e.name[:40]))
            t_first = min(a for v in per.values() for a, _, _ in v) if per else 0
            dev = {}
            for d, v in sorted(per.items()):
                v.sort()
                busy, cur_s, cur_e, gaps = 0, None, None, []
                last_name = None
                for a, b, nm in v:
                    if cur_e is None or a > cur_e:
                        if cur_e is not None:
                            busy += cur_e - cur_s
                            gaps.append((a - cur_e, round((cur_e - t_first) / 1e3, 2),
                                         last_name, nm))
                        cur_s, cur_e = a, b
                    else:
                        cur_e = max(cur_e, b)
                    last_name = nm
                busy += cur_e - cur_s
                gaps.sort(reverse=True)
                names = {}
                for a, b, nm in v:
                    names.setdefault(nm, [0, 0.0])
                    names[nm][0] += 1; names[nm][1] += (b - a) / 1e3
                dev[d] = dict(events=len(v), first_ms=round((v[0][0] - t_first) / 1e3, 2),
                              last_ms=round((max(b for _, b, _ in v) - t_first) / 1e3, 2),
                              busy_ms=round(busy / 1e3, 1),
                              idle_gaps_ms_total=round(sum(g[0] for g in gaps) / 1e3, 1),
                              gaps_over_1ms=sum(g[0] > 1000 for g in gaps),
                              top_gaps=[(round(g[0] / 1e3, 2), g[1], g[2], g[3]) for g in gaps[:8]],
                              kernels=sorted(((k, c, round(t, 1)) for k, (c, t) in names.items()),
                                             key=lambda x: -x[2])[:8])
            key = f"{label} {n} {mode}"
            out[key] = dict(walls=[round(w, 4) for w in walls], profiled_wall=round(wall, 4),
                            devices=dev)
            print(key, json.dumps(out[key])[:1500], flush=True)
            del be
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
