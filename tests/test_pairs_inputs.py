"""score_pairs' bulk input forms (issue 22): 2-D arrays, SequenceBuffer, lists of str or
bytes, batches, and the streamed CLI -- each equal to the list-of-str form and to the exact
scalar kernel (``pairwise.score_end``) or the naive DP (``tests/reference.py``). The bodies
that take ``backend`` run on every backend (CUDA: cuda-marked, host arrays staged up);
CuPy arrays are tested in tests/test_cuda_pairs.py."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from reference import dp
from warpalign import Scoring
from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from warpalign.buffers import SequenceBuffer
from warpalign.cli import pairs as pairs_command
from warpalign.errors import AlphabetError, AlphabetMismatch, InputError
from warpalign.pairs import score_pairs

PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)  # paper 004
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
METHODS = ["bitsliced", "wordwise"]
LETTERS = np.frombuffer(b"ACGT", np.uint8)


def exact(xs, ys, scoring, algorithm="local"):
    enc = scoring.alphabet.encode
    return [int(score_end(enc(x), enc(y), scoring.matrix, scoring.gap_open, scoring.gap_extend,
                          ALGORITHM_CODES[algorithm])[0]) for x, y in zip(xs, ys)]


def dna_rows(rng, rows, length, letters=LETTERS):
    return letters[rng.integers(0, len(letters), (rows, length))]


def texts(rows: np.ndarray) -> list[str]:
    return [row.tobytes().decode() for row in rows]


def buffer_of(seqs: list[str], prefix: bytes = b"") -> SequenceBuffer:
    """``seqs`` in one NumPy buffer after ``prefix`` (offsets that do not start at 0)."""
    raw = np.frombuffer(prefix + "".join(seqs).encode(), np.uint8)
    offsets = len(prefix) + np.concatenate([[0], np.cumsum([len(s) for s in seqs])])
    return SequenceBuffer(raw, offsets)


# --------------------------------------------------------------------------- equal results


@pytest.mark.parametrize("method", METHODS)
def test_2d_arrays_give_one_score_per_row(method, backend):
    # 256 rows were once read as ONE sequence of 256 x 128 letters (one score, quadratic time)
    rng = np.random.default_rng(1)
    xs, ys = dna_rows(rng, 256, 40), dna_rows(rng, 256, 90)
    ys[:50, 10:50] = xs[:50]                                  # related pairs score high
    res = score_pairs(xs, ys, PAPER, method=method, backend=backend)
    want = exact(texts(xs), texts(ys), PAPER)
    assert res.scores.shape == (256,) and res.scores.tolist() == want
    assert max(want) >= 80
    assert res.scores.tolist() == score_pairs(texts(xs), texts(ys), PAPER, method=method,
                                              backend=backend).scores.tolist()


@pytest.mark.parametrize("scoring, letters", [(PAPER, b"ACGTNacgtn"), (AFFINE, b"ACGT"),
                                              (BLOSUM, b"ARNDCQEGHILKMFPSTWYV")],
                         ids=["paper", "affine", "blosum62"])
@pytest.mark.parametrize("algorithm", ["local", "global", "semiglobal"])
def test_every_form_equals_the_list_form(scoring, letters, algorithm, backend):
    rng = np.random.default_rng(2)
    alphabet = np.frombuffer(letters, np.uint8)
    xs = [alphabet[rng.integers(0, len(alphabet), int(n))].tobytes().decode()
          for n in rng.integers(0, 70, 77)]
    ys = [alphabet[rng.integers(0, len(alphabet), int(n))].tobytes().decode()
          for n in rng.integers(0, 110, 77)]
    want = exact(xs, ys, scoring, algorithm)
    forms = {
        "list": (xs, ys),
        "bytes": ([x.encode() for x in xs], [y.encode() for y in ys]),
        "buffer": (buffer_of(xs), buffer_of(ys, prefix=b"NNNN")),
        "bytes-buffer": (SequenceBuffer("".join(xs).encode(), buffer_of(xs).offsets),
                         buffer_of(ys)),
        "mixed": (buffer_of(xs), ys),
        "arrays": ([np.frombuffer(x.encode(), np.uint8) for x in xs], ys),
    }
    for name, (x, y) in forms.items():
        got = score_pairs(x, y, scoring, algorithm=algorithm, backend=backend, method="wordwise")
        assert got.scores.tolist() == want, name


def test_lists_of_equal_length_strs_equal_the_other_forms(backend):
    # one length: converted by NumPy in one pass (issue 22); mixed, subclassed or
    # non-ASCII items take the join, which gives the same characters or names the error
    rng = np.random.default_rng(21)
    rows_x, rows_y = dna_rows(rng, 64, 33), dna_rows(rng, 64, 80)
    rows_y[:9, 5:38] = rows_x[:9]
    want = exact(texts(rows_x), texts(rows_y), PAPER)

    class Seq(str):
        pass

    forms = {
        "strs": (texts(rows_x), texts(rows_y)),
        "arrays": (rows_x, rows_y),
        "strs-and-bytes": ([r.tobytes() if i % 2 else r.tobytes().decode()
                            for i, r in enumerate(rows_x)], texts(rows_y)),
        "subclass": ([Seq(x) for x in texts(rows_x)], texts(rows_y)),
    }
    for name, (x, y) in forms.items():
        got = score_pairs(x, y, PAPER, method="wordwise", backend=backend)
        assert got.scores.tolist() == want, name
    assert max(want) >= 60
    ys = texts(rows_y)
    ys[41] = ys[41][:17] + "é" + ys[41][18:]
    with pytest.raises(AlphabetError, match=r"ys\[41\]: record 'seq41', position 17.*'é'"):
        score_pairs(texts(rows_x), ys, PAPER, backend=backend)
    ys[41] = ys[41][:17] + "\0" + ys[41][18:]           # NUL: a character like any other
    with pytest.raises(AlphabetError, match=r"ys\[41\]: record 'seq41', position 17"):
        score_pairs(texts(rows_x), ys, PAPER, backend=backend)
    with pytest.raises(InputError):                      # a number is no sequence
        score_pairs([1234] * 64, texts(rows_y), PAPER, backend=backend)


def test_2d_arrays_of_any_layout_and_the_dp_oracle(backend):
    rng = np.random.default_rng(3)
    wide = dna_rows(rng, 33, 64)
    xs = wide[:, ::2]                                   # strided rows: copied to one buffer
    ys = np.asfortranarray(dna_rows(rng, 33, 45))
    enc = PAPER.alphabet.encode
    want = [dp(enc(x.tobytes()), enc(y.tobytes()), PAPER.matrix, 1, 1)[0] for x, y in zip(xs, ys)]
    for method in ("auto", *METHODS):
        assert score_pairs(xs, ys, PAPER, method=method, backend=backend).scores.tolist() == want
    empty = np.zeros((5, 0), np.uint8)                  # rows of length 0
    assert score_pairs(empty, ys[:5], PAPER, backend=backend).scores.tolist() == [0] * 5
    assert len(score_pairs(np.zeros((0, 8), np.uint8), [], PAPER, backend=backend)) == 0


@pytest.mark.parametrize("method", METHODS)
def test_batches_equal_one_batch(method, backend):
    rng = np.random.default_rng(4)
    xs = texts(dna_rows(rng, 150, 30))
    ys = [x[3:] + "ACGT" if i % 5 == 0 else "".join(rng.choice(list("ACGT"), 50))
          for i, x in enumerate(xs)]
    ys[7] = "A" * 400                                   # longer than a batch: stands alone
    whole = score_pairs(xs, ys, PAPER, method=method, backend=backend, threshold=40, mode="full")
    assert whole.scores.tolist() == exact(xs, ys, PAPER)
    for limit in (1, 97, 1000):
        part = score_pairs(buffer_of(xs), ys, PAPER, method=method, backend=backend,
                           threshold=40, mode="full", batch_residues=limit)
        assert part.scores.tolist() == whole.scores.tolist()
        assert part.indices.tolist() == whole.indices.tolist() and len(part.indices) > 10
        assert part.alignments == whole.alignments
        assert part.method == method and "encode" in part.timings


def test_2d_arrays_in_mode_full_equal_the_list_form(backend):
    # every pair aligned (on CUDA the chained pass, its plan keyed by the rows' lengths
    # given with the arrays, whatever the batch), then rows of other lengths: another plan
    rng = np.random.default_rng(31)
    rows_x, rows_y = dna_rows(rng, 96, 40), dna_rows(rng, 96, 150)
    rows_y[:30, 20:60] = rows_x[:30]
    for x, y in ((rows_x, rows_y), (rows_x[:, :33], rows_y[:, 5:82])):
        want = score_pairs(texts(x), texts(y), PAPER, mode="full", backend="cpu")
        assert want.scores.tolist() == exact(texts(x), texts(y), PAPER)
        for limit in (None, 1000, 5000):
            got = score_pairs(x, y, PAPER, mode="full", backend=backend, batch_residues=limit)
            assert got.scores.tolist() == want.scores.tolist()
            assert got.alignments == want.alignments
    assert max(want.scores) >= 60


def test_batches_keep_the_saturation_count(backend):
    xs = ["A" * 200] * 10                               # local 16-bit lanes: rescored
    big = Scoring(match=200, mismatch=-1, gap_open=1, gap_extend=1)
    whole = score_pairs(xs, xs, big, method="wordwise", backend=backend)
    part = score_pairs(xs, xs, big, method="wordwise", backend=backend, batch_residues=900)
    assert whole.scores.tolist() == part.scores.tolist() == [40000] * 10
    assert part.saturated == whole.saturated


# --------------------------------------------------------------------------- errors


def test_bad_characters_name_the_pair_position_and_character(backend):
    rng = np.random.default_rng(5)
    xs = dna_rows(rng, 6, 20)
    xs[3, 7] = ord("X")
    with pytest.raises(AlphabetError, match=r"xs\[3\]: record 'seq3', position 7.*'X'") as info:
        score_pairs(xs, xs.copy(), PAPER, backend=backend)
    assert (info.value.record, info.value.position, info.value.character) == ("seq3", 7, "X")
    buf = SequenceBuffer(b"ACGTAC!T", [0, 4, 8], names=["one", "two"], source="reads.fa",
                         first=100)
    with pytest.raises(AlphabetError, match=r"reads.fa\[101\]: record 'two', position 2.*'!'"):
        score_pairs(["ACGT", "ACGT"], buf, PAPER, backend=backend, batch_residues=8)
    with pytest.raises(AlphabetError, match=r"ys\[1\]: record 'seq1', position 2.*'é'"):
        score_pairs(["ACGT", "ACGT"], ["ACGT", "ACéT"], PAPER, backend=backend)
    with pytest.raises(AlphabetError, match=r"xs\[1\].*position 1.*'N'.*A, C, G, T"):
        score_pairs(buffer_of(["ACGT", "ANGT", "AC"]), ["ACGT"] * 3, PAPER, backend=backend,
                    method="bitsliced", batch_residues=6)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(InputError, match="xs: a 2-D array of sequences must have dtype uint8"):
        score_pairs(np.zeros((2, 3), np.int64), ["A", "A"], PAPER)
    with pytest.raises(InputError, match=r"offsets\[2\] decreases"):
        SequenceBuffer(b"ACGTACGT", [0, 5, 3, 8])
    with pytest.raises(InputError, match=r"offsets\[-1\] = 9 > len\(buffer\) = 8"):
        SequenceBuffer(b"ACGTACGT", [0, 9])
    with pytest.raises(InputError, match="2 names for 1 sequences"):
        SequenceBuffer(b"ACGT", [0, 4], names=["a", "b"])
    with pytest.raises(InputError, match="1-D uint8"):
        SequenceBuffer(np.zeros(4, np.int32), [0, 4])
    with pytest.raises(ValueError, match="as many sequences: got 3 and 2"):
        score_pairs(np.zeros((3, 2), np.uint8) + 65, buffer_of(["A", "C"]), PAPER)
    with pytest.raises(ValueError, match="invalid batch_residues: 0"):
        score_pairs(["A"], ["A"], PAPER, batch_residues=0)


def test_nucleotides_under_an_implied_protein_matrix_are_refused_over_all_batches():
    xs = ["ACGTACGTAC"] * 4
    with pytest.raises(AlphabetMismatch, match="xs and ys: nucleotide sequences"):
        score_pairs(buffer_of(xs), np.frombuffer("".join(xs).encode(), np.uint8).reshape(4, 10),
                    Scoring("BLOSUM62"), backend="cpu", batch_residues=20)
    # judged on the whole input: one protein-looking batch does not decide alone
    mixed = ["MKVLAWHEAG", *xs]
    res = score_pairs(mixed, mixed, Scoring("BLOSUM62"), backend="cpu", batch_residues=25)
    assert res.scores.tolist() == exact(mixed, mixed, Scoring("BLOSUM62"))


# --------------------------------------------------------------------------- CLI


def _cli(argv):
    parser = argparse.ArgumentParser(prog="warpalign")
    pairs_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args([str(a) for a in argv])
    return args.run(args)


def _fasta(path, names, seqs, width=60):
    with open(path, "w") as fh:
        for name, seq in zip(names, seqs):
            fh.write(f">{name} some description\n")
            fh.writelines(seq[k:k + width] + "\n" for k in range(0, max(len(seq), 1), width))


@pytest.mark.parametrize("extra", [[], ["--threshold", "30"], ["--mode", "full"],
                                   ["--algorithm", "global", "--method", "wordwise"]])
def test_cli_streams_in_chunks_equal_to_the_in_memory_call(tmp_path, capsys, extra):
    rng = np.random.default_rng(6)
    xs = [texts(dna_rows(rng, 1, int(n)))[0] for n in rng.integers(5, 60, 23)]
    ys = [x[2:] + "TTT" if i % 3 else texts(dna_rows(rng, 1, 70))[0] for i, x in enumerate(xs)]
    xn, yn = [f"x{i}" for i in range(23)], [f"y{i}" for i in range(23)]
    _fasta(tmp_path / "x.fa", xn, xs, width=7)           # wrapped lines
    _fasta(tmp_path / "y.fa", yn, ys)
    outputs = []
    for chunk in ("4", "1", "100"):
        assert _cli(["pairs", tmp_path / "x.fa", tmp_path / "y.fa", "--chunk", chunk,
                     "--header", *extra]) == 0
        out, err = capsys.readouterr()
        assert err == ""                                  # no progress bar when piped
        outputs.append(out)
    assert outputs[0] == outputs[1] == outputs[2]
    rows = [line.split("\t") for line in outputs[0].splitlines()[1:]]
    threshold = int(extra[1]) if extra[:1] == ["--threshold"] else None
    algorithm = extra[1] if extra[:1] == ["--algorithm"] else "local"
    ref = score_pairs(xs, ys, PAPER, threshold=threshold, algorithm=algorithm, backend="cpu",
                      mode="full" if "full" in extra else "score")
    index = ref.indices.tolist() if threshold is not None or "full" in extra else range(23)
    assert [r[:4] for r in rows] == [[str(i), xn[i], yn[i], str(ref.scores[i])] for i in index]
    assert len(rows) == len(index) and (threshold is None or 0 < len(rows) < 23)
    if "full" in extra:
        assert [r[10] for r in rows] == [ref.alignments[k].cigar for k in range(len(index))]


def test_cli_chunks_check_record_counts_and_characters(tmp_path, capsys):
    _fasta(tmp_path / "x.fa", "abcde", ["ACGT"] * 5)
    _fasta(tmp_path / "y.fa", "abcd", ["ACGT"] * 4)
    with pytest.raises(ValueError, match=r"x.fa has 5 records but .*y.fa has 4"):
        _cli(["pairs", tmp_path / "x.fa", tmp_path / "y.fa", "--chunk", "2"])
    _fasta(tmp_path / "y.fa", "abcde", ["ACGT", "ACGT", "ACGT", "ACGT", "ACXT"])
    with pytest.raises(AlphabetError, match=r"y.fa\[4\]: record 'e', position 2.*'X'"):
        _cli(["pairs", tmp_path / "x.fa", tmp_path / "y.fa", "--chunk", "2"])


@pytest.mark.parametrize("extra", [[], ["--mode", "full", "--format", "sam"]],
                         ids=["tsv", "sam"])
def test_cli_progress_bar_when_asked(tmp_path, capsys, extra):
    """A bar counting the pairs on stderr with --progress (over several chunks), none with
    --no-progress nor by default when stderr is not a terminal (here: captured); the same
    output either way."""
    _fasta(tmp_path / "x.fa", "abc", ["ACGT", "AC", "ACGTT"])
    outputs = []
    for flag in ("--progress", "--no-progress", None):
        argv = ["pairs", tmp_path / "x.fa", tmp_path / "x.fa", "--chunk", "2", *extra]
        assert _cli(argv + ([flag] if flag else [])) == 0
        out, err = capsys.readouterr()
        outputs.append(out)
        if flag == "--progress":
            assert err.startswith("\rpairs: "), err   # (tqdm draws at most every 0.1 s)
        else:
            assert err == ""
    assert outputs[0] == outputs[1] == outputs[2]
    if not extra:
        assert outputs[0].splitlines() == ["0\ta\ta\t8", "1\tb\tb\t4", "2\tc\tc\t10"]
    else:
        assert [line.split("\t")[:6] for line in outputs[0].splitlines()
                if not line.startswith("@")] == [[n, "0", n, "1", "255", m]
                                                  for n, m in (("a", "4M"), ("b", "2M"),
                                                               ("c", "5M"))]
