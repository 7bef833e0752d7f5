"""Benchmarks behind ``warpalign bench`` and the tables of ``docs/REPRODUCTION.md``.

The drivers live in the package, not in the checkout's ``bench/`` folder, so that a
pip-installed warpalign can measure itself: ``warpalign bench`` needs nothing but the
package (the search job uses the bundled example data, the other jobs seeded random DNA).
The scripts in ``bench/`` stay the research harness (kernel variants, several GPUs,
E. coli, Swiss-Prot-sized databases); both write JSON lines with DESIGN.md's keys, so
:func:`warpalign.bench.report.report` reads either.

Each job times one public entry point on the current machine, with an in-run baseline:

========  =====================================  ==========================================
job       what is timed                          baseline measured in the same run
========  =====================================  ==========================================
search    ``search()`` per query, score mode     parasail ``sw_striped_profile_16``, 1 core
pairs     ``score_pairs`` (bitsliced, wordwise)  parasail ``sw_scan_16`` on the same cores
lcs       ``lcs_length`` (and ``lcs``)           rapidfuzz ``LCSseq.similarity``, 1 core
locate    ``locate`` (windows; scan on CUDA)     ``method="dp"``: the exact scalar DP, 1 core
========  =====================================  ==========================================

Modules: :mod:`.runner` (settings, :func:`~.runner.run`, the table), :mod:`.drivers` (one
per job), :mod:`.plot` (PNG per job), :mod:`.papers` (the papers' published numbers),
:mod:`.report` (docs/REPRODUCTION.md). Also a command line for the documentation::

    python -m warpalign.bench report bench/results > docs/REPRODUCTION.md
    python -m warpalign.bench plot bench/results/*.jsonl --out plots/
"""
