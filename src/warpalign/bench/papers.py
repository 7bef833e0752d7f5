"""The papers' published numbers, typed from their tables (``../shared/papers/*.txt``).

:func:`published` gives them as plot points (x on the plots' length axis, as in
:func:`warpalign.bench.plot.x_of`); :mod:`warpalign.bench.report` sets them beside ours.
"""

from __future__ import annotations

#: Paper 000 (Nishimura et al.), Table V: GCUPS of the bitwise SWA for 32K pairs, m = 128;
#: CPU = one thread of a Core i7-6700 (64-bit words), GPU = GeForce GTX TITAN X (32-bit).
PAPER000_TABLE_V = {  # n: (CPU GCUPS, GPU GCUPS)
    1024: (0.76, 1877.40), 2048: (0.76, 2022.85), 4096: (0.75, 2197.58),
    8192: (0.75, 2199.75), 16384: (0.76, 2149.79), 32768: (0.76, 2159.60),
    65536: (0.77, 2158.43)}
#: Paper 000, Table IV, GPU bitwise 32-bit: total ms (H2G + W2B + SWA + B2W + G2H) and SWA ms.
PAPER000_TABLE_IV_GPU32 = {  # n: (total ms, SWA ms)
    1024: (12.66, 6.91), 2048: (23.52, 12.61), 4096: (43.59, 24.17), 8192: (86.94, 48.29),
    16384: (177.21, 96.56), 32768: (351.27, 196.03), 65536: (695.42, 392.52)}

#: Paper 001 (Kawanami & Fujimoto), Table 1: full LCS on a GeForce GTX 580 (host Core i7
#: 920); (|A| in millions, |B| in millions, total s, CPU s, GPU s, transfer s).
PAPER001_TABLE_1 = [
    (5, 1, 335.10, 12.15, 320.60, 2.35), (5, 2, 515.95, 17.99, 495.51, 2.45),
    (5, 3, 697.56, 20.25, 674.77, 2.54), (5, 4, 866.04, 23.99, 839.47, 2.58),
    (5, 5, 1050.03, 25.38, 1021.86, 2.79), (5, 6, 1251.85, 27.64, 1220.62, 3.59),
    (5, 7, 1453.22, 29.77, 1419.09, 4.36), (5, 8, 1652.43, 32.33, 1615.45, 4.65),
    (5, 9, 1850.64, 35.38, 1810.26, 5.00), (5, 10, 2046.29, 38.22, 2003.62, 4.45),
    (10, 1, 647.21, 13.68, 629.01, 4.52), (10, 2, 998.79, 24.33, 969.70, 4.76),
    (10, 3, 1354.90, 28.19, 1321.85, 4.86), (10, 4, 1680.16, 35.79, 1639.50, 4.87),
    (10, 5, 2047.44, 38.50, 2003.96, 4.98), (10, 6, 2341.78, 40.64, 2296.13, 5.01),
    (10, 7, 2679.54, 46.62, 2627.82, 5.10), (10, 8, 2991.43, 48.18, 2938.10, 5.15),
    (10, 9, 3357.05, 49.75, 3301.87, 5.43), (10, 10, 3667.39, 51.54, 3610.33, 5.52),
    (15, 1, 954.44, 16.23, 932.39, 5.82), (15, 2, 1472.40, 27.64, 1438.78, 5.98),
    (15, 3, 2002.67, 32.97, 1963.42, 6.28), (15, 4, 2485.72, 43.44, 2435.76, 6.52),
    (15, 5, 3039.24, 45.93, 2986.43, 6.88), (15, 6, 3472.54, 48.35, 3417.00, 7.19),
    (15, 7, 3980.38, 57.51, 3915.33, 7.54), (15, 8, 4441.27, 58.67, 4374.90, 7.70),
    (15, 9, 5005.08, 60.41, 4936.03, 8.64), (15, 10, 5462.73, 61.82, 5391.97, 8.94),
    (20, 1, 1262.07, 18.57, 1234.71, 8.79), (20, 2, 1945.03, 27.31, 1908.62, 9.10),
    (20, 3, 2650.20, 34.55, 2606.29, 9.36), (20, 4, 3290.98, 48.55, 3232.87, 9.56),
    (20, 5, 4027.68, 52.45, 3965.57, 9.66), (20, 6, 4599.46, 56.33, 4533.42, 9.71),
    (20, 7, 5274.06, 69.39, 5194.96, 9.71), (20, 8, 5881.29, 71.58, 5800.11, 9.60),
    (20, 9, 6637.26, 74.17, 6553.24, 9.85), (20, 10, 7239.77, 76.49, 7153.42, 9.86)]

#: Paper 002 (Yasui & Ino): its figures did not survive; the text gives 12.3 GCUPS at
#: query n = 256, m = 33 M (GTX 980 Ti), and Table 1 the total ms for n = 256.
PAPER002_TEXT_PEAK = (256, 33_000_000, 12.3)   # (query, reference, GCUPS), section 4
PAPER002_TABLE_1 = {100_000: 53.3, 33_000_000: 707.1}   # reference m: total ms, n = 256

#: Paper 003 (Dohi et al.), Table III: GCUPS, Swiss-Prot 57.6, BLOSUM50 10-2k, GTX 295.
PAPER003_TABLE_III = [  # (accession, query length, 1 GPU, 2 GPUs, 4 GPUs)
    ("P02232", 144, 9.09, 17.26, 29.46), ("P01111", 189, 10.53, 19.98, 34.44),
    ("P05013", 189, 10.53, 19.98, 34.42), ("P09488", 218, 10.78, 20.45, 35.44),
    ("P14942", 222, 10.97, 20.83, 36.09), ("P00762", 246, 10.96, 20.84, 36.23),
    ("P10318", 362, 11.57, 22.01, 38.78), ("P07327", 374, 11.96, 22.76, 40.07),
    ("P01008", 464, 12.21, 23.25, 41.19), ("P10635", 497, 12.36, 23.54, 41.19),
    ("P25705", 553, 12.39, 23.61, 41.97), ("P03435", 567, 12.71, 24.22, 43.05)]


def published(job: str) -> list[dict]:
    """The papers' points for ``job``'s plot: dicts with x, gcups, series (source named).

    Example:
        >>> [(r["x"], r["gcups"]) for r in published("search")][:2]
        [(144, 9.09), (189, 10.53)]
    """
    rows: list[dict] = []
    if job == "pairs":
        for n, (cpu, gpu) in PAPER000_TABLE_V.items():
            rows.append({"x": n, "gcups": gpu, "series": "paper 000 Table V, GTX TITAN X"})
            rows.append({"x": n, "gcups": cpu,
                         "series": "paper 000 Table V, Core i7-6700 1 thread"})
    elif job == "lcs":
        for a, b, total, *_ in PAPER001_TABLE_1:
            rows.append({"x": a * b * 10**12, "gcups": a * b * 1e12 / total / 1e9,
                         "series": "paper 001 Table 1 (|A||B|/total), GTX 580"})
    elif job == "locate":
        n = PAPER002_TEXT_PEAK[0]
        for m, ms in PAPER002_TABLE_1.items():
            rows.append({"x": m, "gcups": n * m / (ms / 1e3) / 1e9,
                         "series": "paper 002 Table 1 (n=256, mn/t), GTX 980 Ti"})
        rows.append({"x": PAPER002_TEXT_PEAK[1], "gcups": PAPER002_TEXT_PEAK[2],
                     "series": "paper 002 text peak (n=256), GTX 980 Ti"})
    elif job == "search":
        for _, length, g1, _, _ in PAPER003_TABLE_III:
            rows.append({"x": length, "gcups": g1,
                         "series": "paper 003 Table III, 1 GPU (GTX 295)"})
    return rows

