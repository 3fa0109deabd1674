#!/usr/bin/env python3
"""Random .npy files through every command of the npyio tool (ctest label
`interop`; most useful in the sanitizer build):

    cli_random.py --tool PATH/npyio --seed N --count M --workdir DIR

Each case is an array NumPy saves: a random record or scalar dtype (drawn
as in random_records.py), a random shape of 0-3 dimensions, C or Fortran
order, random data bytes; one case in seven then has a few header or data
bytes overwritten, and one in ten is cut short. Every command runs on it
(info --json, print with several --max, dump, validate, convert with a
random order and byte order). Any exit status other than 0 or 1, a
sanitizer report, or an exit 1 without an "npyio: " message is a failure;
the failing file is kept in DIR. Prints the seed and "N passed, M
failed"; exits 77 without NumPy. Deterministic for a given seed.
"""
import argparse
import io
import os
import random
import subprocess
import sys
import warnings

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_records  # noqa: E402  (its dtype draws)


def random_file(rng, draw):
    """The bytes of one case, or None if NumPy refused the draw."""
    try:
        dt = np.dtype(draw.record() if rng.random() < 0.6 else draw.scalar())
    except (TypeError, ValueError):
        return None
    shape = tuple(rng.choice([0, 1, 2, 3, 5, 8])
                  for _ in range(rng.choice([0, 1, 1, 2, 2, 3])))
    count = int(np.prod(shape)) if shape else 1
    raw = bytes(rng.getrandbits(8) for _ in range(count * dt.itemsize))
    a = np.frombuffer(raw, dt).reshape(shape) if count else np.zeros(shape, dt)
    if rng.random() < 0.3:
        a = np.asfortranarray(a)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "format 3.0 needs NumPy >= 1.17"
        np.save(f, a)
    b = bytearray(f.getvalue())
    r = rng.random()
    if r < 0.15:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.getrandbits(8)
    elif r < 0.25:
        b = b[:rng.randrange(len(b) + 1)]
    return bytes(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    random_records.LONG_NAME_RATE = 0.0  # keep the cases small
    rng = random.Random(args.seed)
    draw = random_records.Draw(rng)
    os.makedirs(args.workdir, exist_ok=True)
    path = os.path.join(args.workdir, "case.npy")
    out = os.path.join(args.workdir, "out.npy")
    tally = Tally()
    for k in range(args.count):
        data = random_file(rng, draw)
        if data is None:
            continue
        with open(path, "wb") as f:
            f.write(data)
        for words in (["info", "--json", path],
                      ["print", "--max", str(rng.choice([0, 5, 1000])), path],
                      ["dump", path], ["validate", path],
                      ["convert", "--order", rng.choice("CF"), "--byteorder",
                       rng.choice(["native", "little", "big"]), path, out]):
            r = subprocess.run([args.tool] + words, capture_output=True,
                               timeout=120)
            err = r.stderr.decode(errors="replace")
            bad = (r.returncode not in (0, 1) or "Sanitizer" in err or
                   "runtime error" in err or
                   (r.returncode == 1 and not err.startswith("npyio: ")))
            keep = os.path.join(args.workdir, "failed_%d_%d.npy"
                                % (args.seed, k))
            if bad:
                with open(keep, "wb") as f:
                    f.write(data)
            tally.check(not bad, "%s: exit %d, kept %s\n%s"
                        % (" ".join(words[:-1]), r.returncode, keep,
                           err[:800]))
    print("seed %d" % args.seed)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
