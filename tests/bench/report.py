#!/usr/bin/python3
"""The benchmark report: run the benches of tests/bench in turn, collect
their results and write DIR/bench.json and DIR/bench.svg.

    /usr/bin/python3 tests/bench/report.py --build build --out DIR
        [--size MiB] [--rounds N] [--quick] [--cnpy DIR] [--dir WORKDIR]
        [--benches io,npz,...] [--reorder-chunk SIZE]

Each bench interleaves its contenders round by round and appends one JSON
object per result line to $NPYIO_BENCH_JSON (tests/bench/benchutil.h); this
script points that variable at a fresh file for every run. A bench that
writes no JSON (a bench built before it did) has its printed lines read instead
("parsed": true in its results).

bench.json: "machine" (cores, kernel, CPU model, memory, date, git commit,
NumPy), "runs" (each bench's exact command line, exit status, seconds and
printed output), "results" (the JSON lines, each with its run) and "cnpy"
(what became of the cnpy comparison). bench.svg: one group of bars per
path, one bar per contender: the median of the per-round ratios of the
contender's time over ours on a log scale (> 1, right of the line at 1:
libnpyio is faster), min..max as a thin whisker.

--quick: tiny sizes and one round, to check that everything runs (the
figures mean nothing). Standard library only; the benches start NumPy
(/usr/bin/python3) themselves.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
# The comparisons, run by default; then the benches asked for by
# name only (bench_grow is left out: its 1.5 GiB of files are not sized).
DEFAULT_BENCHES = ["io", "npz", "npz-many", "inflate", "libdeflate",
                   "small", "dump", "threads", "reorder", "cnpy"]
ALL_BENCHES = DEFAULT_BENCHES + ["header", "large"]
CNPY_NOT_RUN = "not run: pass --cnpy DIR (a cnpy checkout)"
# bench_cnpy's rows belong beside these benches' rows of the same name.
CNPY_BESIDE = {"save, durability off": "bench_io",
               "load (new buffer)": "bench_io",
               "stored write": "bench_npz",
               "stored read (CRC)": "bench_npz"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True,
                   help="the CMake build directory (benches in tests/)")
    p.add_argument("--out", required=True,
                   help="where bench.json and bench.svg go")
    p.add_argument("--size", type=int,
                   help="MiB of data for the large-array benches (default: "
                        "each bench's own)")
    p.add_argument("--rounds", type=int, default=7,
                   help="interleaved rounds of every bench (default 7)")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes and 1 round: a smoke test")
    p.add_argument("--cnpy", metavar="DIR",
                   help="a cnpy checkout (cnpy.cpp, cnpy.h): build "
                        "bench_cnpy.cpp against it and run it")
    p.add_argument("--dir", help="where the benches write their files "
                                 "(default /dev/shm, else a temporary "
                                 "directory)")
    p.add_argument("--benches", default=",".join(DEFAULT_BENCHES),
                   help="which to run, of " + ",".join(ALL_BENCHES) +
                        " (default: all but header,large)")
    p.add_argument("--reorder-chunk",
                   help="bench_reorder's --chunk (default 64K, the "
                        "issue's; '' for its own default, 64 MiB)")
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"),
                   help="the C++ compiler for bench_cnpy")
    args = p.parse_args(argv)
    if args.quick:
        args.rounds = 1
    if not 1 <= args.rounds <= 64:
        p.error("--rounds: 1 to 64")
    unknown = set(args.benches.split(",")) - set(ALL_BENCHES)
    if unknown:
        p.error("--benches: unknown " + ",".join(sorted(unknown)))
    return args


# ---- the facts of the machine -----------------------------------------------

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Processor", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def memory_kib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def output_of(command, cwd=None):
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def machine_facts(work):
    status = output_of(["git", "-C", SOURCE, "status", "--porcelain",
                        "--untracked-files=no"])
    return {
        "cores": os.cpu_count(),
        "cpu_model": cpu_model(),
        "kernel": " ".join(platform.uname()[2:4]),
        "machine": platform.machine(),
        "memory_kib": memory_kib(),
        "date": datetime.datetime.now(datetime.timezone.utc)
                .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": output_of(["git", "-C", SOURCE, "rev-parse", "HEAD"]),
        "git_dirty": bool(status) if status is not None else None,
        "numpy": output_of(["/usr/bin/python3", "-c",
                            "import numpy; print(numpy.__version__)"]),
        "work_dir": work,
        "work_fs": output_of(["stat", "-f", "-c", "%T", work]),
    }


# ---- running the benches ----------------------------------------------------

def reorder_chunk(args):
    """bench_reorder's --chunk value (the issue's 64K unless asked), or
    None to pass none (--reorder-chunk '')."""
    if args.reorder_chunk is not None:
        return args.reorder_chunk or None
    return "64K"


def plan(args, work, tests, tool):
    """The runs: (bench name, argv)."""
    quick, rounds = args.quick, ["--rounds", str(args.rounds)]
    size = ["--size", "2"] if quick else (
        ["--size", str(args.size)] if args.size else [])
    where = ["--dir", work]
    wanted = args.benches.split(",")
    runs = []
    if "io" in wanted:
        runs.append(("bench_io", [os.path.join(tests, "bench_io")] + size +
                     rounds + where))
    if "npz" in wanted:
        runs.append(("bench_npz", [os.path.join(tests, "bench_npz")] + size +
                     rounds + where + ["--threads", "2"] +
                     (["--walk", "1"] if quick else [])))
    if "npz-many" in wanted:
        runs.append(("bench_npz", [os.path.join(tests, "bench_npz"),
                                   "--only", "many"] + rounds + where +
                     (["--members", "100"] if quick else [])))
    if "inflate" in wanted:
        # A member of np.savez_compressed loaded in one libdeflate call vs
        # zlib's one-shot inflate and np.load (issue 43): 256 MiB.
        mib = ["--size", "2"] if quick else (
            ["--size", str(args.size)] if args.size else ["--size", "256"])
        runs.append(("bench_npz", [os.path.join(tests, "bench_npz"),
                                   "--only", "inflate"] + mib + rounds +
                     where))
    if "libdeflate" in wanted:
        # npyio_savez and pack --compress in one libdeflate call vs zlib
        # and np.savez_compressed, and the 2-thread crossover: 128 MiB.
        mib = ["--size", "2"] if quick else (
            ["--size", str(min(args.size, 128))] if args.size
            else ["--size", "128"])
        runs.append(("bench_npz", [os.path.join(tests, "bench_npz"),
                                   "--only", "libdeflate", "--tool", tool] +
                     mib + rounds + where))
    if "small" in wanted:
        runs.append(("bench_small", [os.path.join(tests, "bench_small")] +
                     rounds + where + (["--files", "50"] if quick else [])))
    if "dump" in wanted:
        mib = ["--mib", "2"] if quick else (
            ["--mib", str(args.size)] if args.size else [])
        runs.append(("bench_dump", [os.path.join(tests, "bench_dump"), tool]
                     + mib + rounds + where))
    if "threads" in wanted:
        # The tool's --threads 2 against one thread (issue 43): at least
        # 384 MiB, so that the indexed member lies beyond the one
        # libdeflate call (257 MiB) and its blocks are read ahead on the
        # threads (a 256 MiB one takes the one call on both sides).
        mib = ["--mib", "6"] if quick else (
            ["--mib", str(max(args.size, 384))] if args.size
            else ["--mib", "384"])
        runs.append(("bench_dump", [os.path.join(tests, "bench_dump"), tool,
                                    "--threads", "2"] + mib + rounds + where))
    if "reorder" in wanted:
        chunk = reorder_chunk(args)
        runs.append(("bench_reorder", [os.path.join(tests, "bench_reorder")]
                     + size + rounds + where + ["--tool", tool] +
                     (["--chunk", chunk] if chunk else [])))
    if "header" in wanted:
        runs.append(("bench_header", [os.path.join(tests, "bench_header"),
                                      str(args.rounds)]))
    if "large" in wanted:
        runs.append(("bench_large", [os.path.join(tests, "bench_large")] +
                     (["--size", "8"] if quick else size) +  # 8 at least
                     rounds + where))
    return runs


def run_bench(name, argv, scratch, work):
    """Run one bench with NPYIO_BENCH_JSON set: its run record and its
    results."""
    lines_path = os.path.join(scratch, "lines.jsonl")
    if os.path.exists(lines_path):
        os.unlink(lines_path)
    env = dict(os.environ, NPYIO_BENCH_JSON=lines_path,
               NPYIO_BENCH_NAME=name)
    print("report.py: " + shlex.join(argv), flush=True)
    t0 = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    seconds = round(time.monotonic() - t0, 3)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    results = []
    if os.path.exists(lines_path):
        with open(lines_path) as f:
            results = [json.loads(line) for line in f if line.strip()]
    parsed = not results
    if parsed:
        results = parse_printed(name, done.stdout.replace(work, "DIR"))
    attach_sections(results, done.stdout.splitlines())
    run = {"bench": name, "command": argv,
           "command_line": shlex.join(argv), "returncode": done.returncode,
           "seconds": seconds, "output": done.stdout,
           "errors": done.stderr, "results": len(results)}
    if parsed and results:
        run["parsed"] = "no JSON lines: read from the printed lines"
    return run, results


RESULT_LINE = re.compile(
    r"^(?P<path>.*?)\s+(?P<who>libnpyio|dump)\s+(?P<rate>[\d.]+)\s+"
    r"(?P<unit>\S+)\s*(?P<rest>(?:\|\s*vs .*)+)$")
CONTENDER = re.compile(r"\|\s*vs (?P<name>.+?) (?P<ratio>[\d.]+)x "
                       r"\((?P<lo>[\d.]+)\.\.(?P<hi>[\d.]+)\)")


def parse_printed(name, stdout):
    """Results from the human-readable lines "NAME libnpyio RATE UNIT | vs
    X 1.23x (lo..hi) ..." of a bench that wrote no JSON."""
    results = []
    for line in stdout.splitlines():
        m = RESULT_LINE.match(line)
        if not m:
            continue
        contenders = [{"name": c["name"], "ratio": float(c["ratio"]),
                       "min": float(c["lo"]), "max": float(c["hi"])}
                      for c in CONTENDER.finditer(m["rest"])]
        results.append({"bench": name, "path": m["path"].strip(),
                        "unit": m["unit"], "ours": float(m["rate"]),
                        "contenders": contenders, "rounds": None,
                        "parsed": True})
    return results


SECTION = re.compile(r"^\S[^|]*\(\d[\d, ]*\)$")  # "tall (5000000, 5)"


def attach_sections(results, lines):
    """Where a bench prints the same row names under several headings
    (bench_reorder: one a shape), the heading of each result."""
    i, section = 0, None
    for r in results:
        while i < len(lines) and not lines[i].startswith(r["path"]):
            if SECTION.match(lines[i].strip()):
                section = lines[i].strip()
            i += 1
        if i < len(lines):
            i += 1
            if section:
                r["section"] = section


# ---- cnpy -------------------------------------------------------------------

def find_library(build):
    for root, _, files in os.walk(build):
        for name in ("libnpyio.so", "libnpyio.dylib", "libnpyio.a"):
            if name in files:
                return os.path.join(root, name)
    return None


def build_cnpy(args, scratch):
    """Compile bench_cnpy.cpp against the checkout: (binary, None, the
    commands) or (None, why not, the commands tried)."""
    cnpy = os.path.abspath(args.cnpy)
    if not all(os.path.exists(os.path.join(cnpy, f))
               for f in ("cnpy.cpp", "cnpy.h")):
        return None, "not run: no cnpy.cpp and cnpy.h in " + cnpy, []
    library = find_library(os.path.abspath(args.build))
    if library is None:
        return None, "not run: no libnpyio in " + args.build, []
    binary = os.path.join(scratch, "bench_cnpy")
    obj = os.path.join(scratch, "cnpy.o")
    commands = [
        [args.cxx, "-std=c++17", "-O2", "-w", "-c",
         os.path.join(cnpy, "cnpy.cpp"), "-o", obj],
        [args.cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Wpedantic",
         "-isystem", cnpy, "-I", os.path.join(SOURCE, "include"),
         "-I", HERE, os.path.join(HERE, "bench_cnpy.cpp"), obj,
         library, "-Wl,-rpath," + os.path.dirname(library), "-lz",
         "-lpthread", "-o", binary]]
    for command in commands:
        print("report.py: " + shlex.join(command), flush=True)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            return None, ("failed to build: " + shlex.join(command) + ": " +
                          done.stderr.strip()[-2000:]), commands
    return binary, None, commands


# ---- the plot ---------------------------------------------------------------

KINDS = [  # (kind, colour), in the legend's order
    ("NumPy", "#1f77b4"),
    ("system-call floor", "#7f7f7f"),
    ("zlib", "#9467bd"),
    ("cnpy", "#d62728"),
    ("libnpyio, another setting", "#2ca02c"),
]
COLOURS = dict(KINDS)


def kind_of(name):
    n = name.lower()
    if n.startswith("cnpy"):
        return "cnpy"
    if "np." in n or "numpy" in n:
        return "NumPy"
    if "zlib" in n:
        return "zlib"
    if re.match(r"(1 thread|one thread|1 process|no index|whole|mapped \.npy)", n):
        return "libnpyio, another setting"
    return "system-call floor"


def groups_of(results):
    """[(label, unit, [contender...])]: one group per path, in order; the
    rows of bench_cnpy joined to the same row of the bench beside them,
    "(the same)" rows to the row above."""
    groups, where = [], {}
    for r in results:
        if not r.get("contenders"):
            continue
        bench = r["bench"]
        if bench == "bench_cnpy" and r["path"] in CNPY_BESIDE:
            bench = CNPY_BESIDE[r["path"]]
        path = r["path"].strip()
        if path == "(the same)" and groups:
            groups[-1][2].extend(r["contenders"])
            continue
        section = r.get("section")
        key = (bench, section, path)
        label = "%s: %s%s" % (bench.replace("bench_", ""),
                              section + ": " if section else "", path)
        if key in where:
            groups[where[key]][2].extend(r["contenders"])
        else:
            where[key] = len(groups)
            groups.append((label, r.get("unit"), list(r["contenders"])))
    return groups


def finite(v):
    return isinstance(v, (int, float)) and v > 0 and math.isfinite(v)


def svg_plot(results, title, subtitle):
    groups = groups_of(results)
    char_w = 6.6  # a generous width of one 11 px sans-serif character
    label_w = 30 + int(char_w * max([len(g[0]) for g in groups] + [20]))
    right_w = 20 + int(char_w * max(
        [len("%.2fx vs %s" % (9.99, c["name"])) for g in groups
         for c in g[2]] + [20]))
    bar, gap, plot_w = 14, 10, 560
    top, bottom = 104, 40
    values = [v for _, _, cs in groups for c in cs
              for v in (c.get("ratio"), c.get("min"), c.get("max"))
              if finite(v)] or [1.0]
    lo = min(0.5, min(values)) / 1.2
    hi = max(2.0, max(values)) * 1.2
    l2lo, l2hi = math.floor(math.log2(lo)), math.ceil(math.log2(hi))

    def x(v):
        v = min(max(v, 2.0 ** l2lo), 2.0 ** l2hi)
        return label_w + plot_w * (math.log2(v) - l2lo) / (l2hi - l2lo)

    rows = sum(max(len(cs), 1) for _, _, cs in groups)
    height = top + rows * bar + len(groups) * gap + bottom
    width = label_w + plot_w + right_w
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">'
           % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="15" font-weight="bold">%s</text>'
           % escape(title),
           '<text x="10" y="38">%s</text>' % escape(subtitle),
           '<text x="10" y="54">Bars: the median over rounds of the '
           'contender\'s time / libnpyio\'s (log scale; right of 1 = '
           'libnpyio faster). Whiskers: min..max.</text>']
    # legend
    lx = 10
    for kind, colour in KINDS:
        out.append('<rect x="%d" y="64" width="12" height="12" fill="%s"/>'
                   % (lx, colour))
        out.append('<text x="%d" y="74">%s</text>' % (lx + 16, escape(kind)))
        lx += 30 + 6 * len(kind)
    # grid and axis
    axis_y = height - bottom + 4
    for e in range(l2lo, l2hi + 1):
        v = 2.0 ** e
        gx = x(v)
        text = ("%g" % v) if v >= 1 else "1/%g" % (1 / v)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" '
                   'stroke="#dddddd"/>' % (gx, top - 6, gx, axis_y))
        for ty in (top - 10, axis_y + 14):
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s'
                       '</text>' % (gx, ty, text))
    out.append('<text x="%d" y="%d" text-anchor="middle">ratio (x), '
               'log scale</text>' % (label_w + plot_w // 2, axis_y + 30))
    y = top
    for label, unit, contenders in groups:
        n = max(len(contenders), 1)
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                   % (label_w - 8, y + n * bar / 2 + 4, escape(label)))
        for c in contenders:
            ratio = c.get("ratio")
            colour = COLOURS[kind_of(c["name"])]
            if finite(ratio):
                x0, x1 = sorted((x(1.0), x(ratio)))
                out.append('<rect class="bar" x="%.1f" y="%.1f" width="%.1f"'
                           ' height="%d" fill="%s"><title>%s: %.2fx'
                           '</title></rect>'
                           % (x0, y + 2, max(x1 - x0, 1), bar - 4, colour,
                              escape(c["name"]), ratio))
                if finite(c.get("min")) and finite(c.get("max")):
                    wy = y + bar / 2
                    out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" '
                               'y2="%.1f" stroke="black" stroke-width="1"/>'
                               % (x(c["min"]), wy, x(c["max"]), wy))
                    for end in (c["min"], c["max"]):
                        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" '
                                   'y2="%.1f" stroke="black"/>'
                                   % (x(end), wy - 3, x(end), wy + 3))
                text = "%.2fx vs %s" % (ratio, c["name"])
            else:
                out.append('<rect class="bar" x="%.1f" y="%.1f" width="1" '
                           'height="%d" fill="%s"/>'
                           % (x(1.0), y + 2, bar - 4, colour))
                text = "no figure vs %s" % c["name"]
            out.append('<text x="%d" y="%.1f">%s</text>'
                       % (label_w + plot_w + 6, y + bar - 3, escape(text)))
            y += bar
        if not contenders:
            y += bar
        y += gap
        out.append('<line x1="10" y1="%.1f" x2="%d" y2="%.1f" '
                   'stroke="#eeeeee"/>' % (y - gap / 2, width - 10,
                                           y - gap / 2))
    one = x(1.0)
    out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" '
               'stroke-width="1.5"/>' % (one, top - 6, one, axis_y))
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---- main -------------------------------------------------------------------

def main(argv):
    args = parse_args(argv)
    build = os.path.abspath(args.build)
    tests = os.path.join(build, "tests")
    tool = os.path.join(build, "src", "npyio")
    os.makedirs(args.out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="npyio-report-")
    work = args.dir or ("/dev/shm" if os.access("/dev/shm", os.W_OK)
                        else scratch)
    work = tempfile.mkdtemp(prefix="npyio-bench-", dir=work)
    report = {"generated_by": "tests/bench/report.py",
              "command": [sys.executable] + [os.path.abspath(__file__)] +
              argv,
              "machine": machine_facts(work),
              "options": {"quick": args.quick, "rounds": args.rounds,
                          "size_mib": 2 if args.quick else args.size,
                          "benches": args.benches.split(",")},
              "notes": [], "cnpy": CNPY_NOT_RUN, "runs": [], "results": []}
    runs = plan(args, work, tests, tool)
    failed = []
    try:
        if args.cnpy and "cnpy" in args.benches.split(","):
            binary, why, commands = build_cnpy(args, scratch)
            report["cnpy"] = {"dir": os.path.abspath(args.cnpy),
                              "commit": output_of(["git", "-C", args.cnpy,
                                                   "rev-parse", "HEAD"]),
                              "build": [shlex.join(c) for c in commands],
                              "status": why or "run"}
            if binary:
                size = ["--size", "2", "--npz-size", "2"] if args.quick \
                    else (["--size", str(args.size), "--npz-size",
                           str(args.size)] if args.size else [])
                runs.append(("bench_cnpy", [binary] + size +
                             ["--rounds", str(args.rounds), "--dir", work]))
        elif args.cnpy:
            report["cnpy"] = "not run: cnpy left out of --benches"
        for name, command in runs:
            run, results = run_bench(name, command, scratch, work)
            index = len(report["runs"])
            report["runs"].append(run)
            for r in results:
                r["run"] = index
            report["results"].extend(results)
            if run["returncode"] != 0 or not results:
                failed.append(run["command_line"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    if isinstance(report["cnpy"], dict) and report["cnpy"]["status"] == \
            "run" and any(r["command"][0].endswith("bench_cnpy") and
                          r["returncode"] != 0 for r in report["runs"]):
        report["cnpy"]["status"] = "failed: see its run's errors"
    m = report["machine"]
    subtitle = "%s cores, %s, Linux %s, %s, %d round%s%s" % (
        m["cores"], m["cpu_model"] or "CPU unknown",
        (m["kernel"] or "").split()[0], m["date"], args.rounds,
        "" if args.rounds == 1 else "s",
        " (--quick: the figures mean nothing)" if args.quick else "")
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "bench.svg"), "w") as f:
        f.write(svg_plot(report["results"],
                         "libnpyio against NumPy, cnpy and the system calls",
                         subtitle))
    print("report.py: wrote %s and %s (%d results from %d runs)" % (
        os.path.join(args.out, "bench.json"),
        os.path.join(args.out, "bench.svg"), len(report["results"]),
        len(report["runs"])))
    for command in failed:
        print("report.py: failed or gave no results: " + command,
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
