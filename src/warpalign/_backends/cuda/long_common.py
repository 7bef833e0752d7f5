"""What the long-pair GPU passes (``long.py``) and their staged traceback
(``long_staged.py``) share: long.cu's value bounds and modes, the launch counters, and
stage 3's leaf size."""

from __future__ import annotations

NEG = -(1 << 30)                 # long.cu's LONG_NEG
#: Values must stay inside +-2^29 so that NEG - penalties never wraps (as score_end's int32).
VALUE_LIMIT = 1 << 29
MODE_LOCAL, MODE_GLOBAL, MODE_SEMIGLOBAL, MODE_ANCHORED = 0, 1, 2, 3
#: first_open that makes column 0 a wall (values below -2^29)
WALL = 1 << 29
#: Kernel launches, their seconds (host wall time around launch and copy) and cells.
STATS = {"launches": 0, "seconds": 0.0, "cells": 0}
#: Stage 3's leaves: segments of at most this many cells (and ``max_full_cells``) are traced
#: from a direction matrix on CPU threads, larger ones split on the GPU. E. coli pair on an
#: H200 (.carry/stage3.py, 16 host cores): stage 3 takes 4.37 s with 2^24-cell leaves, 3.60 s
#: with 2^22 (GPU splits down to MIN_CELLS = 2^22), 3.86 / 4.01 s with smaller leaves and
#: split floors (2^22 / 2^20, 2^20 / 2^18).
STAGE3_LEAF_CELLS = 1 << 22
