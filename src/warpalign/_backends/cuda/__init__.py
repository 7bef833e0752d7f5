"""CUDA backend (CuPy + NVRTC kernels, imported lazily): database search in
``search.py`` (+ ``packed.py``, ``kernels.py``, ``handles.py``, kernels in ``search.cu``),
bulk pairs in ``pairs.py``, ``locate``'s windows and scans in ``windows.py`` and
``scan.py``, long pairs in ``long.py``, LCS in ``lcs.py``; ``loader.py`` compiles."""

from .handles import (Candidates, ChunkedTargets, DeviceTargets, MultiTargets, _Leases,
                      split_targets)
from .packed import _Cut, _PackedJob
from .search import METHODS, CudaBackend

__all__ = ["METHODS", "Candidates", "ChunkedTargets", "CudaBackend", "DeviceTargets",
           "MultiTargets", "_Cut", "_Leases", "_PackedJob", "split_targets"]
