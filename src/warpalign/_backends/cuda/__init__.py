"""CUDA backend (CuPy + NVRTC kernels, imported lazily): database search in
``search.py`` (+ ``packed.py``, ``kernels.py``, ``handles.py``, several devices in
``multi.py``, databases streamed in chunks in ``streamed.py``, kernels in ``search.cu``),
bulk pairs in ``pairs.py``, ``locate``'s windows and scans in ``windows.py`` and
``scan.py``, long pairs in ``long.py``, LCS in ``lcs.py``; ``loader.py`` compiles;
``topk.py`` is the host side of the top-k cut (pure, tested on NumPy)."""

from .handles import Candidates, ChunkedTargets, DeviceTargets, MultiTargets, split_targets
from .search import METHODS, CudaBackend

__all__ = ["METHODS", "Candidates", "ChunkedTargets", "CudaBackend", "DeviceTargets",
           "MultiTargets", "split_targets"]
