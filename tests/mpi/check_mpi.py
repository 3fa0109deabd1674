#!/usr/bin/env python3
"""NumPy's view of what tests/mpi/mpi_rows.c wrote (label mpi):

    check_mpi.py FILE fill|append RANKS

fill: np.load gives the (RANKS * 300, 7) float64 array whose element
(r, c) is r * 1000 + c + 0.5, and the file's header is np.save's for it.
append: RANKS * 3 blocks of 300 rows, each block's rows (rank * 100 +
batch) * 1000 + row in every column, each block once, in any order.
Prints "N passed, M failed"; exits 77 without NumPy."""
import io
import sys

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)

ROWS, COLS, BATCHES = 300, 7, 3


def main():
    path, mode, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    t = Tally()
    a = np.load(path)
    if mode == "fill":
        r = np.arange(ranks * ROWS, dtype="f8")[:, None]
        want = r * 1000 + np.arange(COLS, dtype="f8")[None, :] + 0.5
        t.check(a.shape == want.shape and a.dtype == np.dtype("f8"),
                "shape %s dtype %s" % (a.shape, a.dtype))
        t.check(a.shape == want.shape and (a == want).all(),
                "the ranks' rows differ from the expected array")
        saved = io.BytesIO()
        np.save(saved, want)
        with open(path, "rb") as f:
            head = f.read(128)
        t.check(head == saved.getvalue()[:128],
                "the header is not np.save's: %r" % head)
    else:
        t.check(a.shape == (ranks * BATCHES * ROWS, COLS),
                "shape %s" % (a.shape,))
        blocks = a.reshape(-1, ROWS, COLS)
        ids = sorted(int(b[0, 0]) // 1000 for b in blocks)
        want_ids = sorted(rank * 100 + k for rank in range(ranks)
                          for k in range(BATCHES))
        t.check(ids == want_ids, "blocks %s, want %s" % (ids, want_ids))
        for b in blocks:
            base = int(b[0, 0]) // 1000 * 1000
            want = (base + np.arange(ROWS, dtype="f8"))[:, None].repeat(COLS, 1)
            t.check((b == want).all(), "block %d is torn" % (base // 1000))
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
