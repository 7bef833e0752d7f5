"""bench/search_disk.py (issue 23's 10 G-residue run) at a tiny scale on the CPU: its
FASTA writer as ``warpalign makedb`` reads it, and the whole script end to end."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from warpalign import Database, cli
from warpalign.alphabet import PROTEIN

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import search_disk  # noqa: E402


def test_fasta_copies_as_makedb_reads_them(tmp_path):
    big, small = tmp_path / "big.fasta", tmp_path / "small.fasta"
    made = search_disk.write_fasta(str(big), str(small), copies=3, seed=7,
                                   max_residues=200_000)
    lens = search_disk.lengths(200_000)
    n, total = len(lens), int(lens.sum())
    assert (made["sequences"], made["residues"]) == (3 * n, 3 * total)
    assert big.stat().st_size == 3 * small.stat().st_size
    lines = small.read_bytes().split(b"\n")
    assert lines[0] == b">c000_0000000" and max(map(len, lines)) == 60
    for fasta, db in ((big, tmp_path / "big.wa"), (small, tmp_path / "small.wa")):
        assert cli.main(["makedb", str(fasta), str(db), "--no-progress",
                         "--threads", "1"]) == 0
    d, one = Database.open(tmp_path / "big.wa"), Database.open(tmp_path / "small.wa")
    assert (len(d), d.residues, len(one), one.residues) == (3 * n, 3 * total, n, total)
    assert d.names[n - 1] == f"c000_{n - 1:07d}" and d.names[2 * n] == "c002_0000000"
    copies = [np.concatenate([d.sequence(c * n + i) for i in range(n)]) for c in range(3)]
    assert [len(d.sequence(n + i)) for i in range(n)] == lens.tolist()
    assert np.array_equal(copies[0], np.concatenate([one.sequence(i) for i in range(n)]))
    for c in (1, 2):                  # copy c: copy 0's residues rotated by c * SHIFT
        assert not np.array_equal(copies[c], copies[0])
        assert np.array_equal(copies[c], np.roll(copies[0], -c * search_disk.SHIFT % total))
    comp = json.loads((search_disk.SHARED_DATA / "protein" /
                       "swissprot_size_composition.json").read_text())["composition"]
    seen = Counter(PROTEIN.decode(copies[0]))
    weight = sum(comp.values())
    assert set(seen) <= set(comp)
    assert all(abs(seen[a] / total - p / weight) < 0.005 for a, p in comp.items())


def test_whole_script_on_the_cpu(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    code = search_disk.main(["--backend", "cpu", "--queries", "1", "--copies", "2",
                             "--max-residues", "3000", "--threads", "1",
                             "--dir", str(tmp_path), "--out", str(out)])
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["job"] for r in records[:2]] == ["makedb", "search"]
    assert len(records) in (3, 4) and records[1]["params"]["copies"] == 1
    streamed = records[2]
    assert streamed["params"]["copies"] == 2 and streamed["params"]["call"] == 1
    assert streamed["params"]["residues"] == 2 * records[1]["params"]["residues"]
    assert streamed["baseline"]["gcups"] == records[1]["gcups"] > 0
    assert records[0]["params"]["peak_rss_bytes"] > 0 and records[0]["residues_per_s"] > 0
    assert all({"job", "scope", "backend", "device", "params", "seconds", "baseline",
                "command"} <= r.keys() for r in records)
    assert [p.name for p in tmp_path.iterdir()] == ["r.jsonl"]     # nothing left behind
