"""Small example data the demos, docs and tests run on.

``example_db.fasta.gz``: 2,000 UniProtKB proteins (928,757 residues), every 10th record
of MMseqs2's example database. ``example_queries.fasta``: 5 proteins (168-360 aa) from
MMseqs2's example queries, each with a clear homolog in the example database. Source and
licence: see ``README.md`` beside this file (UniProtKB, CC BY 4.0). ``phix.fasta``: the
phage phiX174 genome (5,386 bp, NCBI NC_001422) and ``example_reads.fastq``: 8 reads of
150 bp cut from it, every other one reverse-complemented, and 2 random reads (read
mapping with ``warpalign locate --format sam``).

Example:
    >>> from warpalign.data import example_database_path, example_queries_path
    >>> example_database_path().name, example_queries_path().name
    ('example_db.fasta.gz', 'example_queries.fasta')
    >>> example_reference_path().name, example_reads_path().name
    ('phix.fasta', 'example_reads.fastq')
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

__all__ = ["example_database_path", "example_queries_path", "example_reads_path",
           "example_reference_path"]


def _path(name: str) -> Path:
    # The package is installed as plain files (never zipped), so the resource is a file.
    return Path(os.fspath(files(__name__).joinpath(name)))


def example_database_path() -> Path:
    """Path of the example database FASTA (gzip): 2,000 UniProtKB proteins."""
    return _path("example_db.fasta.gz")


def example_queries_path() -> Path:
    """Path of the example queries FASTA: 5 UniProtKB proteins of 168-360 residues."""
    return _path("example_queries.fasta")


def example_reference_path() -> Path:
    """Path of the example reference FASTA: the phage phiX174 genome (5,386 bp)."""
    return _path("phix.fasta")


def example_reads_path() -> Path:
    """Path of the example reads FASTQ: 8 reads of 150 bp from both strands of phiX174
    (3 substitutions each) and 2 random reads."""
    return _path("example_reads.fastq")
