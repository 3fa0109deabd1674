"""What the crash-safety checks (npy_crash.py, npz_crash.py) share: their
command line, a fresh work directory, a seeded random source and a Tally;
a child killed with SIGKILL at a random moment; the files left over."""
import argparse
import os
import random
import shutil
import signal
import subprocess
import time

from tally import Tally


def setup(description, more_options=None):
    """Parse --tool, --workdir and --trials (and what more_options(parser)
    adds); empty the work directory. Returns (args, rng, tally)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--trials", type=int, default=100)
    if more_options is not None:
        more_options(ap)
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    return args, random.Random(20261203), Tally()


def kill_at_random(argv, rng, longest):
    """Start argv and kill it with SIGKILL after 0 to `longest` seconds."""
    p = subprocess.Popen(argv)
    time.sleep(rng.uniform(0.0, longest))
    p.send_signal(signal.SIGKILL)
    p.wait()


def left_over(workdir, keep):
    """The files in workdir other than those named in keep."""
    return sorted(f for f in os.listdir(workdir) if f not in keep)
