"""The option strings of every job, defined once, as tuples of names.

The jobs check their keyword arguments against these tuples and the command line offers
them as choices. This module imports nothing, so building the command line's parsers
loads no job, NumPy, Numba or Biopython (``warpalign search --help`` answers at once and
``warpalign search`` loads only what the search runs).
"""

from __future__ import annotations

#: ``backend=`` of every job ("auto": CUDA when CuPy imports and a device answers).
BACKENDS = ("auto", "cpu", "cuda")
#: ``algorithm=`` of align, search and score_pairs.
ALGORITHMS = ("local", "global", "semiglobal")
#: The algorithms' codes in the kernels (CPU and GPU).
LOCAL, GLOBAL, SEMIGLOBAL = 0, 1, 2
ALGORITHM_CODES = {"local": LOCAL, "global": GLOBAL, "semiglobal": SEMIGLOBAL}
#: The alphabets by name (:data:`warpalign.alphabet.ALPHABETS` maps them to objects).
ALPHABETS = ("protein", "dna", "bytes")

SEARCH_MODES = ("score", "end", "full")
SEARCH_METHODS = ("auto", "warp")   # "warp": paper 003's kernel, CUDA backend only
ALIGN_MODES = ("score", "end", "full")
PAIRS_MODES = ("score", "full")
PAIRS_METHODS = ("auto", "bitsliced", "wordwise")
LOCATE_MODES = ("score", "end", "full")
#: locate's methods run by ``_backends.cpu.scan`` on the CPU and ``_backends.cuda.scan``
#: on the GPU (issue 6).
LOCATE_GPU_METHODS = ("scan", "scan1", "antidiagonal", "blocked")
#: locate's methods; "auto" resolves to "windows".
LOCATE_METHODS = ("auto", "windows", "dp", *LOCATE_GPU_METHODS)
LOCATE_ALGORITHMS = ("local",)
#: ``warpalign bench``'s jobs.
BENCH_JOBS = ("search", "pairs", "lcs", "locate")
