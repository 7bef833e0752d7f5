"""Output formats: BLAST-tab-like TSV, JSON lines, and a human-readable alignment view.

Coordinates are 0-based half-open in Python objects and 1-based inclusive in the
tables, as BLAST writes them. Columns that the chosen mode did not compute are "NA".
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from .results import Alignment, Hits

SEARCH_COLUMNS = ("qseqid", "sseqid", "score", "pident", "length", "qstart", "qend",
                  "sstart", "send")
ALIGN_COLUMNS = ("qseqid", "sseqid", "score", "pident", "length", "qstart", "qend",
                 "sstart", "send", "cigar")

NA = "NA"


def _one_based(start: int | None, end: int | None) -> tuple[str, str]:
    """0-based half-open -> 1-based inclusive; an empty alignment prints 0 0."""
    if start is None or end is None:
        return NA, NA if end is None else str(end)
    if end == start:
        return "0", "0"
    return str(start + 1), str(end)


def alignment_fields(qname: str, tname: str, score: int, aln: Alignment | None,
                     query_end: int | None = None, target_end: int | None = None) -> dict:
    """The table fields of one alignment (strings), by column name."""
    row = {"qseqid": qname, "sseqid": tname, "score": str(score)}
    if aln is not None and aln.cigar is not None:
        row["pident"] = f"{100.0 * aln.identity:.2f}"
        row["length"] = str(aln.length)
        row["qstart"], row["qend"] = _one_based(aln.query_start, aln.query_end)
        row["sstart"], row["send"] = _one_based(aln.target_start, aln.target_end)
        row["cigar"] = aln.cigar or "*"
    else:
        qe = query_end if aln is None else aln.query_end
        te = target_end if aln is None else aln.target_end
        row.update(pident=NA, length=NA, qstart=NA, sstart=NA, cigar=NA,
                   qend=NA if qe is None else str(qe), send=NA if te is None else str(te))
    return row


def write_search_tsv(results: Iterable[Hits], out: TextIO, header: bool = False) -> None:
    """One line per hit: qseqid sseqid score pident length qstart qend sstart send."""
    if header:
        out.write("#" + "\t".join(SEARCH_COLUMNS) + "\n")
    for hits in results:
        for hit in hits:
            row = alignment_fields(hits.query_name, hit.name, hit.score, hit.alignment,
                                   hit.query_end, hit.target_end)
            out.write("\t".join(row[c] for c in SEARCH_COLUMNS) + "\n")


def hits_to_json(hits: Hits) -> dict:
    """A JSON-ready dict of one query's hits (0-based half-open coordinates)."""
    out = []
    for hit in hits:
        item = {"target": hit.target, "name": hit.name, "score": hit.score}
        if hit.query_end is not None:
            item.update(query_end=hit.query_end, target_end=hit.target_end)
        if hit.alignment is not None:
            item.update(alignment_to_json(hit.alignment))
        out.append(item)
    return {"query": hits.query_name, "query_length": hits.query_length,
            "saturated": hits.saturated, "hits": out}


def alignment_to_json(aln: Alignment) -> dict:
    d = {"score": aln.score, "query_start": aln.query_start, "query_end": aln.query_end,
         "target_start": aln.target_start, "target_end": aln.target_end}
    if aln.cigar is not None:
        d.update(cigar=aln.cigar, identity=round(aln.identity, 6), length=aln.length,
                 query_aligned=aln.query_aligned, target_aligned=aln.target_aligned)
    return {k: v for k, v in d.items() if v is not None}


def write_search_json(results: Iterable[Hits], out: TextIO) -> None:
    """One JSON object per query per line (JSON lines)."""
    for hits in results:
        out.write(json.dumps(hits_to_json(hits)) + "\n")


def format_alignment(qname: str, tname: str, aln: Alignment, width: int = 60) -> str:
    """A BLAST-like text view of one alignment."""
    lines = [f"# {qname} vs {tname}: score {aln.score}"]
    if aln.cigar is None:
        if aln.query_end is not None:
            lines.append(f"# query end {aln.query_end}, target end {aln.target_end} (0-based exclusive)")
        return "\n".join(lines) + "\n"
    lines.append(f"# query {aln.query_start}-{aln.query_end}, target {aln.target_start}-"
                 f"{aln.target_end} (0-based half-open); cigar {aln.cigar or '*'}; "
                 f"identity {100 * aln.identity:.1f}% over {aln.length}")
    qa, ta = aln.query_aligned, aln.target_aligned
    mid = "".join("|" if a == b and a != "-" else " " for a, b in zip(qa, ta))
    for k in range(0, len(qa), width):
        lines += [f"Q {qa[k:k + width]}", f"  {mid[k:k + width]}", f"T {ta[k:k + width]}", ""]
    return "\n".join(lines) + "\n"
