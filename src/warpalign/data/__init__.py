"""Small example data the demos, docs and tests run on.

``example_db.fasta.gz``: 2,000 UniProtKB proteins (928,757 residues), every 10th record
of MMseqs2's example database. ``example_queries.fasta``: 5 proteins (168-360 aa) from
MMseqs2's example queries, each with a clear homolog in the example database. Source and
licence: see ``README.md`` beside this file (UniProtKB, CC BY 4.0).

Example:
    >>> from warpalign.data import example_database_path, example_queries_path
    >>> example_database_path().name, example_queries_path().name
    ('example_db.fasta.gz', 'example_queries.fasta')
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

__all__ = ["example_database_path", "example_queries_path"]


def _path(name: str) -> Path:
    # The package is installed as plain files (never zipped), so the resource is a file.
    return Path(os.fspath(files(__name__).joinpath(name)))


def example_database_path() -> Path:
    """Path of the example database FASTA (gzip): 2,000 UniProtKB proteins."""
    return _path("example_db.fasta.gz")


def example_queries_path() -> Path:
    """Path of the example queries FASTA: 5 UniProtKB proteins of 168-360 residues."""
    return _path("example_queries.fasta")
