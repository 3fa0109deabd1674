#!/usr/bin/python3
"""compare_builds.py BASE_BUILD NEW_BUILD [--rounds N] [--only NAME...] [--spread]

Speed before and after a change: runs every benchmark of tests/bench from
two build trees (configure both the same way, e.g. -DCMAKE_BUILD_TYPE=
Release), alternating base and new round by round (the order swapped
every other round, so neither always runs on a warmer machine), and
prints for each measured line the median of the library's own figure
(GB/s, files/s, headers/s) in each build, the ratio new/base of those
medians, and the median over rounds of the ratio of the in-run references
(the first "vs ..." ratio of the line: libnpyio against read(), write(),
NumPy in the same process), which cancels most of the machine's drift.
A line whose ratios both move by more than 3% is marked "<-"; --spread
adds each build's min..max under it. Sizes are
smaller than the benchmarks' defaults so that a run takes minutes.
"""
import argparse
import re
import statistics
import subprocess
import sys

# Each benchmark with arguments for one short round; {tool} is the build's
# npyio (bench_dump times it).
BENCHES = [
    ("bench_header", []),
    ("bench_io", ["--size", "256", "--rounds", "3"]),
    ("bench_small", ["--files", "3000", "--rounds", "3"]),
    ("bench_npz", ["--size", "64", "--rounds", "2"]),
    ("bench_large", ["--size", "256", "--rounds", "2"]),
    ("bench_grow", ["--rounds", "3"]),
    ("bench_dump", ["{tool}", "--mib", "256", "--rounds", "3"]),
    ("bench_reorder", ["--size", "64", "--rounds", "2"]),
    ("bench_member", ["--size", "256", "--rounds", "3"]),
]

LINE = re.compile(r"^(?P<label>\S.*?)\s+(?:libnpyio|dump)\s+"
                  r"(?P<value>[\d.]+)\s*(?P<unit>\S*)(?P<rest>.*)$")
VS = re.compile(r"vs [^|]*?([\d.]+)x")
# bench_grow's lines: a time per call (turned into calls per second, so
# that higher is better everywhere), or a ratio of its own.
GROW = re.compile(r"^(?P<label>[^:]+):\s+(?P<value>[\d.]+)"
                  r"\s*(?P<unit>us|x faster)")


def parse(line):
    """(label, value, unit, vs-ratio or None) of a measured line, or None."""
    m = LINE.match(line)
    if m is not None:
        vs = VS.search(m.group("rest"))
        return (m.group("label").strip(), float(m.group("value")),
                m.group("unit"), float(vs.group(1)) if vs else None)
    m = GROW.match(line)
    if m is None:
        return None
    value = float(m.group("value"))
    if m.group("unit") == "us":
        return (m.group("label"), 1e6 / value, "calls/s", None)
    return (m.group("label"), value, "x", None)


def run(build, name, args):
    """The measured lines of one run: {label: (value, unit, vs-ratio)}."""
    argv = [f"{build}/tests/{name}"] + [
        a.replace("{tool}", f"{build}/src/npyio") for a in args]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({out.returncode}):\n"
                 f"{out.stdout}{out.stderr}")
    lines, times = {}, {}
    for line in out.stdout.splitlines():
        got = parse(line.strip())
        if got is None:
            continue
        # A label met again in the same run (bench_reorder's tables for a
        # tall and a wide array) is numbered.
        label = f"{name}: {got[0]}"
        times[label] = times.get(label, 0) + 1
        if times[label] > 1:
            label = f"{label} #{times[label]}"
        lines[label] = got[1:]
    return lines


def collect(base, new, rounds, benches):
    """Per label, the values of each build and the per-round vs ratios."""
    seen = {}
    for r in range(rounds):
        for name, args in benches:
            order = [("base", base), ("new", new)]
            if r % 2:
                order.reverse()
            got = {side: run(build, name, args) for side, build in order}
            for label, (value, unit, vs) in got["base"].items():
                if label not in got["new"]:
                    continue
                nvalue, _, nvs = got["new"][label]
                s = seen.setdefault(label, {"unit": unit, "base": [],
                                            "new": [], "vs": []})
                s["base"].append(value)
                s["new"].append(nvalue)
                if vs and nvs:
                    s["vs"].append(nvs / vs)
        print(f"round {r + 1} of {rounds} done", file=sys.stderr)
    return seen


def spread(values):
    """min..max of a build's values."""
    return f"({min(values):.4g}..{max(values):.4g})"


def report(seen, show_spread=False):
    print(f"{'line':58} {'base':>10} {'new':>10} {'new/base':>9} "
          f"{'vs-ratio':>9}")
    moved = 0
    for label, s in seen.items():
        b, n = statistics.median(s["base"]), statistics.median(s["new"])
        ratio = n / b if b else float("nan")
        vs = statistics.median(s["vs"]) if s["vs"] else None
        far = abs(ratio - 1) > 0.03 and (vs is None or abs(vs - 1) > 0.03)
        moved += far
        print(f"{label[:58]:58} {b:10.4g} {n:10.4g} {ratio:9.3f} "
              f"{(f'{vs:9.3f}' if vs else '      n/a')}"
              f"{'  <-' if far else ''}  {s['unit']}")
        if show_spread:
            print(f"{'':58} {spread(s['base']):>21} {spread(s['new']):>21}")
    print(f"{len(seen)} lines, {moved} moved by more than 3% on both "
          "counts")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--only", nargs="*", help="benchmark names")
    p.add_argument("--spread", action="store_true",
                   help="a line of each build's min..max under each line")
    a = p.parse_args()
    benches = [b for b in BENCHES if not a.only or b[0] in a.only]
    report(collect(a.base, a.new, a.rounds, benches), a.spread)


if __name__ == "__main__":
    main()
