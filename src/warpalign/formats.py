"""Output formats: BLAST-tab-like TSV, BLAST tabular (outfmt 6), JSON lines, SAM and a
human-readable alignment view.

Coordinates are 0-based half-open in Python objects and 1-based inclusive in the
tables and in SAM, as BLAST and SAM write them. Columns of the TSV that the chosen mode
did not compute are "NA".

A minus-strand hit (:class:`~warpalign.results.Alignment`: the reverse-complemented query
on the reference's plus strand) is written as blastn writes one in the tables: qstart <
qend on the query as given, sstart > send (``sstart`` the hit's last reference position);
where only the end cell is known (``mode="end"``) that is qstart and sstart, the others
NA. In SAM it is FLAG 16 with SEQ reverse-complemented, QUAL reversed and the CIGAR in
reference order, as SAM stores reverse-strand reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TextIO

from .alphabet import IUPAC_COMPLEMENT
from .errors import NotComputed
from .results import STRAND_NAMES, Alignment, Hits

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


def _table_coordinates(aln: Alignment, query_length: int | None) -> tuple[str, ...]:
    """qstart qend sstart send (1-based inclusive) of an alignment with its path; a
    minus-strand one as blastn writes it (module docstring)."""
    if aln.strand != "-" or aln.query_start == aln.query_end:
        return (*_one_based(aln.query_start, aln.query_end),
                *_one_based(aln.target_start, aln.target_end))
    m = _need_length(query_length)
    qs, qe = _one_based(m - aln.query_end, m - aln.query_start)
    ss, se = _one_based(aln.target_start, aln.target_end)
    return qs, qe, se, ss


def _need_length(query_length: int | None) -> int:
    if query_length is None:
        raise ValueError("a minus-strand hit's query coordinates need the query length")
    return int(query_length)


def alignment_fields(qname: str, tname: str, score: int, aln: Alignment | None,
                     query_end: int | None = None, target_end: int | None = None,
                     *, strand: str | None = None, query_length: int | None = None) -> dict:
    """The table fields of one alignment (strings), by column name. ``strand`` (else
    ``aln.strand``) "-" writes blastn's minus-strand coordinates, which need
    ``query_length``."""
    row = {"qseqid": qname, "sseqid": tname, "score": str(score)}
    if aln is not None and aln.cigar is not None:
        row["pident"] = f"{100.0 * aln.identity:.2f}"
        row["length"] = str(aln.length)
        row["qstart"], row["qend"], row["sstart"], row["send"] = _table_coordinates(
            aln, query_length)
        row["cigar"] = aln.cigar or "*"
        return row
    qe = query_end if aln is None else aln.query_end
    te = target_end if aln is None else aln.target_end
    row.update(pident=NA, length=NA, qstart=NA, sstart=NA, cigar=NA,
               qend=NA if qe is None else str(qe), send=NA if te is None else str(te))
    if (strand or (aln and aln.strand)) == "-" and qe is not None:
        # the end cell of the reverse complement: the first query base, the last reference base
        row.update(qstart=str(_need_length(query_length) - qe + 1), qend=NA,
                   sstart=row["send"], send=NA)
    return row


def write_search_tsv(results: Iterable[Hits], out: TextIO, header: bool = False) -> None:
    """One line per hit: qseqid sseqid score pident length qstart qend sstart send."""
    if header:
        out.write("#" + "\t".join(SEARCH_COLUMNS) + "\n")
    for hits in results:
        for name, score, aln, query_end, target_end, strand in _hit_rows(hits):
            row = alignment_fields(hits.query_name, name, score, aln, query_end, target_end,
                                   strand=strand, query_length=hits.query_length)
            out.write("\t".join([row[c] for c in SEARCH_COLUMNS]) + "\n")


def _hit_rows(hits: Hits) -> Iterator[tuple]:
    """(name, score, alignment, query_end, target_end, strand) of each hit, as
    ``Hits[i]`` gives them, from whole columns (a ``Hit`` object per line cost 9 us)."""
    n = len(hits)

    def column(values) -> list:
        return [None] * n if values is None else values.tolist()

    strands = ([None] * n if hits.strands is None
               else [STRAND_NAMES[s] for s in hits.strands.tolist()])
    return zip(hits.names, hits.scores.tolist(), hits.alignments or [None] * n,
               column(hits.query_ends), column(hits.target_ends), strands)


def hits_to_json(hits: Hits) -> dict:
    """A JSON-ready dict of one query's hits (0-based half-open coordinates)."""
    out = []
    for hit in hits:
        item = {"target": hit.target, "name": hit.name, "score": hit.score}
        if hit.strand is not None:
            item["strand"] = hit.strand
        if hit.evalue is not None:
            item.update(evalue=hit.evalue, bitscore=hit.bitscore)
        if hit.query_end is not None:
            item.update(query_end=hit.query_end, target_end=hit.target_end)
        if hit.alignment is not None:
            item.update(alignment_to_json(hit.alignment))
        out.append(item)
    return {"query": hits.query_name, "query_length": hits.query_length,
            "saturated": hits.saturated, "hits": out}


def alignment_to_json(aln: Alignment) -> dict:
    d = {"score": aln.score, "query_start": aln.query_start, "query_end": aln.query_end,
         "target_start": aln.target_start, "target_end": aln.target_end,
         "strand": aln.strand}
    if aln.cigar is not None:
        d.update(cigar=aln.cigar, identity=round(aln.identity, 6), length=aln.length,
                 query_aligned=aln.query_aligned, target_aligned=aln.target_aligned)
    return {k: v for k, v in d.items() if v is not None}


def write_search_json(results: Iterable[Hits], out: TextIO) -> None:
    """One JSON object per query per line (JSON lines)."""
    out.writelines(json.dumps(hits_to_json(hits)) + "\n" for hits in results)


def format_alignment(qname: str, tname: str, aln: Alignment, width: int = 60) -> str:
    """A text view of one alignment, as BLAST's pairwise output: blocks of ``width``
    columns, each ``Query  START  residues  END``, a match line (``|`` for identical
    symbols) and ``Sbjct  START  residues  END``, positions 1-based inclusive (a line of
    gaps only shows the position before it on both sides, as BLAST does).

    Example:
        >>> from warpalign import Scoring, align
        >>> aln = align("HEAGAWGHEE", "PAWHEAE", Scoring("BLOSUM62"))
        >>> print(format_alignment("q", "t", aln), end="")
        # q vs t: score 17
        # query 5-9, target 2-5 (1-based inclusive); cigar 2M1I2M; identity 80.0% over 5
        Query  5  AWGHE  9
                  || ||
        Sbjct  2  AW-HE  5
        <BLANKLINE>
    """
    lines = [f"# {qname} vs {tname}: score {aln.score}"]
    if aln.cigar is None:
        if aln.query_end is not None:
            lines.append(f"# query end {aln.query_end}, target end {aln.target_end} "
                         "(1-based, inclusive)")
        return "\n".join(lines) + "\n"
    qa, ta = aln.query_aligned, aln.target_aligned
    if not qa:
        lines.append("# no alignment (empty local alignment)")
        return "\n".join(lines) + "\n"
    lines.append(f"# query {aln.query_start + 1}-{aln.query_end}, target {aln.target_start + 1}-"
                 f"{aln.target_end} (1-based inclusive); cigar {aln.cigar}; "
                 f"identity {100 * aln.identity:.1f}% over {aln.length}")
    mid = "".join("|" if a == b and a != "-" else " " for a, b in zip(qa, ta))
    digits = len(str(max(aln.query_end, aln.target_end)))
    q_next, t_next = aln.query_start + 1, aln.target_start + 1   # 1-based, next residue
    for k in range(0, len(qa), width):
        q_part, t_part = qa[k:k + width], ta[k:k + width]
        q_first, q_next = q_next, q_next + len(q_part) - q_part.count("-")
        t_first, t_next = t_next, t_next + len(t_part) - t_part.count("-")
        q_shown = (q_first, q_next - 1) if q_next > q_first else (q_first - 1, q_first - 1)
        t_shown = (t_first, t_next - 1) if t_next > t_first else (t_first - 1, t_first - 1)
        lines += [f"Query  {q_shown[0]:<{digits}}  {q_part}  {q_shown[1]}",
                  f"       {'':<{digits}}  {mid[k:k + width]}".rstrip(),
                  f"Sbjct  {t_shown[0]:<{digits}}  {t_part}  {t_shown[1]}", ""]
    return "\n".join(lines) + "\n"


# --- BLAST tabular (outfmt 6) --------------------------------------------------------

BLAST_TAB_COLUMNS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart",
                     "qend", "sstart", "send", "evalue", "bitscore")


def format_evalue(evalue: float) -> str:
    """An E-value as BLAST's tables print it (``CAlignFormatUtil::GetScoreString``).

    Example:
        >>> [format_evalue(e) for e in (1e-200, 3.2e-120, 2.6e-45, 0.0123, 0.5, 3.14, 42.0)]
        ['0.0', '3e-120', '3e-45', '0.012', '0.50', '3.1', '42']
    """
    if evalue < 1.0e-180:
        text = "0.0"
    elif evalue < 1.0e-99:
        text = f"{evalue:2.0e}"
    elif evalue < 0.0009:
        text = f"{evalue:3.0e}"
    elif evalue < 0.1:
        text = f"{evalue:4.3f}"
    elif evalue < 1.0:
        text = f"{evalue:3.2f}"
    elif evalue < 10.0:
        text = f"{evalue:2.1f}"
    else:
        text = f"{evalue:5.0f}"
    return text.strip()


def format_bitscore(bits: float) -> str:
    """A bit score as BLAST's tables print it: 43.1, 152 (truncated above 99.9), 1.235e+04.

    Example:
        >>> [format_bitscore(b) for b in (43.14, 152.9, 12345.0)]
        ['43.1', '152', '1.234e+04']
    """
    if bits > 9999:
        text = f"{bits:4.3e}"
    elif bits > 99.9:
        text = str(int(bits))
    else:
        text = f"{bits:4.1f}"
    return text.strip()


def blast_tab_fields(qname: str, tname: str, aln: Alignment, evalue: float | None = None,
                     bitscore: float | None = None, query_length: int | None = None
                     ) -> list[str]:
    """The twelve outfmt-6 fields of one alignment (strings, in BLAST_TAB_COLUMNS order).

    pident is 100·identities/length over all alignment columns (gaps included) with three
    decimals; gapopen counts runs of gaps; coordinates are 1-based inclusive (0 0 for an
    empty alignment; a minus-strand hit as blastn writes it, sstart > send, which needs
    ``query_length``); evalue and bitscore are "NA" when statistics were not applied.
    """
    if aln.cigar is None or aln.query_aligned is None:
        raise NotComputed("BLAST tabular output needs the alignments; use mode='full'")
    length = aln.length
    pident = 100.0 * aln.matches / length if length else 0.0
    qs, qe, ss, se = _table_coordinates(aln, query_length)
    return [qname, tname, f"{pident:.3f}", str(length), str(aln.mismatches),
            str(aln.gap_opens), qs, qe, ss, se,
            NA if evalue is None else format_evalue(evalue),
            NA if bitscore is None else format_bitscore(bitscore)]


def write_blast_tab(results: Iterable[Hits], out: TextIO, header: bool = False,
                    scoring: Any = None) -> None:
    """BLAST tabular output (``-outfmt 6``): one line per hit with the twelve columns
    qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore.

    The hits need alignments (``mode="full"``); evalue and bitscore come from
    :func:`warpalign.stats.apply_statistics` and are "NA" without it. ``header`` writes
    ``#``-comment lines before the hits (BLAST's ``-outfmt 7`` style): the columns and,
    given ``scoring``, its gap costs in both conventions (:func:`blast_gap_comment`).
    Without ``header`` the output has no comment at all, as ``-outfmt 6``, so that tools
    reading BLAST tables take it as it is.

    Example:
        >>> import io
        >>> from warpalign import Scoring, search
        >>> from warpalign.stats import apply_statistics
        >>> s = Scoring("BLOSUM62", gap_open=12, gap_extend=1)
        >>> res = search(["MKVLAWHEAGAWGHEE"], {"t1": "HEAGAWGHEE"}, s, top_k=1, mode="full")
        >>> out = io.StringIO()
        >>> write_blast_tab(apply_statistics(res, (10, 1), s), out)
        >>> out.getvalue().split()
        ['query0', 't1', '100.000', '10', '0', '0', '7', '16', '1', '10', '4e-07', '28.5']
    """
    if header:
        out.write("# Fields: " + ", ".join(BLAST_TAB_COLUMNS) + "\n")
        if scoring is not None:
            out.write(blast_gap_comment(scoring) + "\n")
    for hits in results:
        if len(hits) and hits.alignments is None:
            raise NotComputed(f"BLAST tabular output needs the alignments, which were not "
                              f"computed in mode={hits.mode!r}; use mode='full'")
        for hit in hits:
            fields = blast_tab_fields(hits.query_name, hit.name, hit.alignment, hit.evalue,
                                      hit.bitscore, hits.query_length)
            out.write("\t".join(fields) + "\n")


def blast_gap_comment(scoring: Any) -> str:
    """One ``#`` line stating the scoring and its gaps in BLAST's convention and ours.

    Example:
        >>> from warpalign import Scoring
        >>> print(blast_gap_comment(Scoring("BLOSUM62", gap_open=12, gap_extend=1))[:52])
        # Scoring: BLOSUM62, gap existence 11, extension 1 (
    """
    what = scoring.matrix_name or f"match {scoring.match}, mismatch {scoring.mismatch}"
    existence, extension = scoring.blast_gaps
    return (f"# Scoring: {what}, gap existence {existence}, extension {extension} (BLAST: a "
            f"gap of length k costs existence + k*extension; warpalign gap_open "
            f"{scoring.gap_open}, gap_extend {scoring.gap_extend})")


# --- SAM ----------------------------------------------------------------------------

class SamRecord(NamedTuple):
    """One alignment to write as a SAM line.

    ``query`` is the whole query sequence as read (written as SEQ, reverse-complemented
    for a minus-strand alignment) or its length (SEQ "*"); ``reference`` is the target's
    name, as in the @SQ header; ``alignment`` None or empty writes an unmapped record
    (flag 4). ``quality``: the read's FASTQ quality string (QUAL; reversed with SEQ),
    None for "*". ``mapq``: the mapping quality (:func:`mapping_quality`), None for 255
    (not available).
    """

    query_name: str
    query: str | int
    reference: str | None
    alignment: Alignment | None
    quality: str | None = None
    mapq: int | None = None


def sam_cigar(aln: Alignment, query_length: int) -> str:
    """The alignment's CIGAR with the unaligned query ends as soft clips (S), so that
    SEQ is the whole query: ``{query_start}S`` + CIGAR + ``{query_length - query_end}S``.

    Example:
        >>> sam_cigar(Alignment(17, 4, 9, 1, 5, "2M1I2M"), 10)
        '4S2M1I2M1S'
    """
    if aln.cigar is None or aln.query_start is None:
        raise NotComputed("SAM output needs the alignment path; use mode='full'")
    tail = query_length - aln.query_end
    if tail < 0:
        raise ValueError(f"query length {query_length} is shorter than the alignment's "
                         f"query end {aln.query_end}")
    head = f"{aln.query_start}S" if aln.query_start else ""
    return head + aln.cigar + (f"{tail}S" if tail else "")


#: MAPQ of a read whose best score is unique (no second alignment at all).
MAPQ_MAX = 60


def mapping_quality(best: int, second: int) -> int:
    """MAPQ from a read's best and second-best alignment scores, as BWA scales it:
    ``round(60 * (best - second) / best)`` (halves round up), so 60 when nothing else
    aligns (``second`` 0), 0 when another alignment scores as well (or better) and for
    ``best`` <= 0, and in between in proportion to the lead of the best.

    Example:
        >>> mapping_quality(150, 0), mapping_quality(150, 150), mapping_quality(150, 100)
        (60, 0, 20)
    """
    best, second = int(best), max(int(second), 0)
    if best <= 0 or second >= best:
        return 0
    return min(MAPQ_MAX, (2 * MAPQ_MAX * (best - second) + best) // (2 * best))


def read_records(query_name: str, query: str, hits: Iterable[tuple[str, Alignment]], *,
                 report: int = 1, min_score: int | None = None,
                 quality: str | None = None) -> list[SamRecord]:
    """The SAM records of one read from its hits, best first (each ``(reference,
    alignment)``): the first ``report`` scoring at least ``min_score`` (default: above 0),
    the first of them primary with MAPQ :func:`mapping_quality` (best, second), the others
    secondary (FLAG 256) with MAPQ 0; one unmapped record when none is left.

    ``second`` is the score of the second hit given (pass ``report`` + 1 hits, at least
    2, to have it), counted as 0 when below ``min_score``: an alignment too weak to be
    reported does not compete for the read.

    Example:
        >>> hits = [("chr1", Alignment(40, 0, 40, 100, 140, "40M")),
        ...         ("chr2", Alignment(30, 0, 40, 7, 47, "40M"))]
        >>> [(r.reference, r.mapq) for r in read_records("r", "A" * 40, hits, min_score=20)]
        [('chr1', 15)]
        >>> [(r.reference, r.mapq) for r in read_records("r", "A" * 40, hits, min_score=35)]
        [('chr1', 60)]
        >>> [r.alignment for r in read_records("r", "A" * 40, hits, min_score=50)]
        [None]
    """
    floor = 1 if min_score is None else max(int(min_score), 1)
    scored = [(ref, aln) for ref, aln in hits if aln is not None and aln.score >= floor]
    if not scored:
        return [SamRecord(query_name, query, None, None, quality, None)]
    second = scored[1][1].score if len(scored) > 1 else 0
    mapq = mapping_quality(scored[0][1].score, second)
    return [SamRecord(query_name, query, ref, aln, quality, mapq if k == 0 else 0)
            for k, (ref, aln) in enumerate(scored[:report])]


def _edit_distance(aln: Alignment) -> int | None:
    if aln.query_aligned is None or aln.target_aligned is None:
        return None
    return sum(a != b for a, b in zip(aln.query_aligned, aln.target_aligned))


#: SAM v1.6, section 1.4: QNAME and RNAME (also @SQ SN). A name that breaks these rules is
#: an error naming it, never shortened or changed: two reads must not end up as one.
_QNAME_CHAR = "[!-?A-~]"
_RNAME_FIRST, _RNAME_CHAR = "[0-9A-Za-z!#$%&+./:;?@^_|~-]", "[0-9A-Za-z!#$%&*+./:;=?@^_|~-]"
_QNAME = re.compile(f"{_QNAME_CHAR}{{1,254}}")
_RNAME = re.compile(f"{_RNAME_FIRST}{_RNAME_CHAR}*")


def check_sam_names(query_names: Iterable[str] = (), reference_names: Iterable[str] = ()
                    ) -> None:
    """Raise ValueError naming the first name that SAM cannot carry.

    Query names (QNAME) must be 1 to 254 printable ASCII characters other than ``@``;
    reference names (RNAME and @SQ SN) printable ASCII without ``\\ , " ' ` ( ) [ ] { } < >``,
    not starting with ``*`` or ``=``. Names are written as they are or not at all.

    Example:
        >>> check_sam_names(["read/1"], ["chr1", "HLA-A*01:01"])
        >>> check_sam_names(["r" * 255])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: query name 'rrrr...' cannot be written as SAM QNAME: 255 characters, ...
    """
    for name in query_names:
        if not _QNAME.fullmatch(name):
            raise ValueError(_bad_sam_name("query", name))
    for name in reference_names:
        if not _RNAME.fullmatch(name):
            raise ValueError(_bad_sam_name("reference", name))


def _bad_sam_name(kind: str, name: str) -> str:
    field = "QNAME" if kind == "query" else "RNAME"
    shown = repr(name if len(name) <= 40 else name[:40] + "...")
    if not name:
        why = "it is empty"
    elif kind == "query" and len(name) > 254:
        why = f"{len(name)} characters, SAM allows at most 254"
    elif kind == "reference" and not re.fullmatch(_RNAME_FIRST, name[0]):
        why = f"SAM {field} cannot start with {name[0]!r}"
    else:
        char = _QNAME_CHAR if kind == "query" else _RNAME_CHAR
        at = next(i for i, c in enumerate(name) if not re.fullmatch(char, c))
        why = f"character {name[at]!r} at position {at} is not allowed in SAM {field}"
    return f"{kind} name {shown} cannot be written as SAM {field}: {why}; rename the record"


def _sam_header(reference_lengths: Any) -> tuple[list[str], dict[str, int]]:
    from . import __version__
    items = reference_lengths.items() if isinstance(reference_lengths, Mapping) else reference_lengths
    lengths: dict[str, int] = {}
    for name, length in items:
        name = str(name)
        if name in lengths:
            raise ValueError(f"reference name {name!r} appears twice; SAM needs unique names")
        lengths[name] = int(length)
    check_sam_names(reference_names=lengths)
    lines = ["@HD\tVN:1.6\tSO:unsorted"]
    lines += [f"@SQ\tSN:{name}\tLN:{length}" for name, length in lengths.items()]
    lines.append(f"@PG\tID:warpalign\tPN:warpalign\tVN:{__version__}")
    return lines, lengths


def write_sam(records: Iterable[SamRecord | tuple], out: TextIO, reference_lengths: Any) -> None:
    """Alignments as SAM: the header (@HD, one @SQ per reference, @PG), one line per record.

    Args:
        records: :class:`SamRecord` s or plain ``(query_name, query, reference,
            alignment)`` tuples (``query``: the query sequence, or its length for SEQ "*").
        out: a text stream.
        reference_lengths: ``{name: length}`` or (name, length) pairs of every reference,
            in header order.

    Query and reference names must be valid SAM names (:func:`check_sam_names`); one that
    is not raises ValueError naming it.

    Mapped records: FLAG 0 (256 for a further alignment of a query already written;
    +16 for a minus-strand alignment, whose SEQ is the reverse complement of the query and
    QUAL reversed), POS = target_start + 1, MAPQ the record's ``mapq`` (255, not
    available, when None), CIGAR from :func:`sam_cigar` (M/I/D with soft-clipped query
    ends, in reference order), tags ``AS:i`` (the score) and ``NM:i`` (edit distance, when
    the aligned strings are known). Unmapped records (no alignment, or an empty local
    alignment of score 0): FLAG 4, RNAME "*", POS 0, MAPQ 0, CIGAR "*", SEQ and QUAL as
    read.

    Example:
        >>> import io
        >>> from warpalign import Scoring, align
        >>> aln = align("HEAGAWGHEE", "PAWHEAE", Scoring("BLOSUM62"), mode="full")
        >>> aln.query_aligned, aln.target_aligned
        ('AWGHE', 'AW-HE')
        >>> out = io.StringIO()
        >>> write_sam([("q", "HEAGAWGHEE", "t", aln)], out, {"t": 7})
        >>> out.getvalue().splitlines()[-1].split()
        ['q', '0', 't', '2', '255', '4S2M1I2M1S', '*', '0', '0', 'HEAGAWGHEE', '*', 'AS:i:17', 'NM:i:1']
    """
    header, lengths = _sam_header(reference_lengths)
    out.write("\n".join(header) + "\n")
    seen: set[str] = set()
    for rec in records:
        rec = SamRecord(*rec)
        out.write(_sam_line(rec, lengths, seen) + "\n")


#: str.translate table of IUPAC complements, both cases.
_COMPLEMENT_TEXT = str.maketrans({**IUPAC_COMPLEMENT,
                                  **{k.lower(): v.lower() for k, v in IUPAC_COMPLEMENT.items()}})


def _sam_line(rec: SamRecord, lengths: dict[str, int], seen: set[str]) -> str:
    qname, query, ref, aln, qual, mapq = rec
    check_sam_names([qname])
    if isinstance(query, str):
        seq, qlen = (query or "*"), len(query)
        if "*" in query or "\t" in query or " " in query:
            raise ValueError(f"query {qname!r} cannot be written as SAM SEQ (it contains "
                             f"'*', a tab or a space)")
    else:
        seq, qlen = "*", int(query)
    if qual is not None and (len(qual) != qlen or not _sam_qual(qual)):
        raise ValueError(f"query {qname!r}: the quality string cannot be written as SAM "
                         f"QUAL ({len(qual)} characters for {qlen} bases, each '!' to '~')")
    qual = qual or "*"
    if aln is None or not aln.cigar:
        if aln is not None and aln.cigar is None:
            raise NotComputed("SAM output needs the alignment path; use mode='full'")
        return f"{qname}\t4\t*\t0\t0\t*\t*\t0\t0\t{seq}\t{qual}"
    if ref is None or str(ref) not in lengths:
        raise ValueError(f"reference {ref!r} of query {qname!r} is not in reference_lengths")
    flag = 256 if qname in seen else 0
    seen.add(qname)
    if aln.strand == "-":
        flag |= 16
        seq = seq if seq == "*" else _reverse_complement_text(qname, seq)
        qual = qual[::-1]
    tags = [f"AS:i:{aln.score}"]
    nm = _edit_distance(aln)
    if nm is not None:
        tags.append(f"NM:i:{nm}")
    return "\t".join([qname, str(flag), str(ref), str(aln.target_start + 1),
                      str(255 if mapq is None else mapq), sam_cigar(aln, qlen), "*", "0",
                      "0", seq, qual, *tags])


def _sam_qual(qual: str) -> bool:
    """Every character of ``qual`` from '!' to '~' (string methods: no loop in Python)."""
    return qual.isascii() and qual.isprintable() and " " not in qual


#: The characters with a complement, both cases.
_COMPLEMENTABLE = frozenset(IUPAC_COMPLEMENT) | frozenset(k.lower() for k in IUPAC_COMPLEMENT)


def _reverse_complement_text(qname: str, seq: str) -> str:
    if not _COMPLEMENTABLE.issuperset(seq):
        bad = next(c for c in seq if c not in _COMPLEMENTABLE)
        raise ValueError(f"query {qname!r}: a minus-strand alignment of a sequence with "
                         f"{bad!r}, which has no complement")
    return seq.translate(_COMPLEMENT_TEXT)[::-1]


def search_sam_records(results: Iterable[Hits], queries: Any, *, report: int | None = None,
                       min_score: int | None = None,
                       qualities: Iterable[str | None] | None = None) -> Iterable[SamRecord]:
    """SAM records of search hits (``mode="full"``), each query a read and its hits'
    targets references (:func:`read_records`: the first ``report`` hits, default all,
    scoring at least ``min_score``; MAPQ from the best two hits, so search one more than
    you report). ``queries`` are the query sequences as strings and ``qualities`` their
    FASTQ qualities (None: "*"), in the order of ``results``. A query without hits gives
    one unmapped record. Reference lengths for :func:`write_sam`:
    ``zip(db.names, db.lengths)``, or :func:`hit_references` for only the hit targets.
    """
    results = list(results)
    qualities = [None] * len(results) if qualities is None else list(qualities)
    for hits, query, quality in zip(results, queries, qualities, strict=True):
        if len(hits) and hits.alignments is None:
            raise NotComputed(f"SAM output needs the alignments, which were not computed "
                              f"in mode={hits.mode!r}; use mode='full'")
        yield from read_records(hits.query_name, query,
                                [(hit.name, hit.alignment) for hit in hits],
                                report=len(hits) if report is None else report,
                                min_score=min_score, quality=quality)


def hit_references(records: Iterable[SamRecord], database: Any) -> list[tuple[str, int]]:
    """(name, length) of the references that ``records`` name, in database order: the
    @SQ lines of a search's SAM (a database of millions of sequences need not be listed)."""
    used = {rec.reference for rec in records if rec.reference is not None}
    return [(name, int(length)) for name, length in zip(database.names, database.lengths)
            if name in used]
