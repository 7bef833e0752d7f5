"""Session 42 probe D (4 x H200): the GPU side of a 4-GPU mode-full search's tail. torch.profiler
(CUPTI) records every kernel and copy (CuPy's too); per device, every activity after the
scan's last packed kernel (start and end in ms from the search's first activity), for the
last 50 and all 500 mmseqs2 queries. usage: python tl42.py OUT.json"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, "bench")


def main():
    from torch.profiler import ProfilerActivity, profile
    from scaling import build_database
    from search_gpu import _find, read_fasta
    from warpalign import Scoring, search
    from warpalign._backends import cuda as cb
    out = {}
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    allq = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        be = cb.CudaBackend(devices=[0, 1, 2, 3])
        for label, qs in (("last50", allq[-50:]), ("all500", allq)):
            run = lambda: search(qs, db, s, top_k=10, backend=be, mode="full")
            run(); run()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                t0 = time.perf_counter(); run(); wall = time.perf_counter() - t0
            evs = [e for e in prof.events() if e.device_type.name == "CUDA"]
            t_first = min(e.time_range.start for e in evs)
            per = {}
            for e in evs:
                per.setdefault(e.device_index, []).append(
                    ((e.time_range.start - t_first) / 1e3, (e.time_range.end - t_first) / 1e3,
                     e.name[:48]))
            dev = {}
            for d, v in sorted(per.items()):
                v.sort()
                scan_end = max((b for a, b, nm in v if "rowsq" in nm), default=0.0)
                tail = [(round(a, 2), round(b, 2), nm) for a, b, nm in v if a >= scan_end - 0.01]
                dev[d] = dict(scan_end_ms=round(scan_end, 2), last_ms=round(max(b for _, b, _ in v), 2),
                              tail_events=len(tail), tail=tail[:60])
            out[label] = dict(profiled_wall_ms=round(wall * 1e3, 1), devices=dev)
            print(f"== {label}: wall {wall * 1e3:.1f} ms")
            for d, x in dev.items():
                print(f" dev {d}: scan end {x['scan_end_ms']} last {x['last_ms']} ({x['tail_events']} after the scan)")
                for a, b, nm in x["tail"][:40]:
                    print(f"    {a:9.2f} {b:9.2f} {b - a:7.3f} {nm}")
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
