#!/usr/bin/python3
"""Smoke test of the benchmark report (ctest bench_report, label slow):
report.py --quick into a temporary directory, then bench.json must parse
and hold results for every bench it ran, and bench.svg must be valid XML
with one bar per contender in the results. Never a figure: --quick runs
tiny sizes once.

    check_report.py --build BUILD [report.py options...]
"""

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SVG = "{http://www.w3.org/2000/svg}"


def fail(why):
    print("check_report: FAIL: " + why)
    sys.exit(1)


def main(argv):
    with tempfile.TemporaryDirectory(prefix="npyio-report-check-") as out:
        command = [sys.executable, os.path.join(HERE, "report.py"),
                   "--quick", "--out", out] + argv
        print("check_report: " + " ".join(command), flush=True)
        done = subprocess.run(command)
        if done.returncode != 0:
            fail("report.py exited with %d" % done.returncode)
        with open(os.path.join(out, "bench.json")) as f:
            report = json.load(f)
        svg = ET.parse(os.path.join(out, "bench.svg")).getroot()
    for key in ("cores", "kernel", "cpu_model", "date", "git_commit"):
        if key not in report["machine"]:
            fail("bench.json: no machine fact " + key)
    if not report["runs"]:
        fail("bench.json: no runs")
    for index, run in enumerate(report["runs"]):
        mine = [r for r in report["results"] if r.get("run") == index]
        if run["returncode"] != 0 or not mine or not run.get("command"):
            fail("run %d (%s): exit %s, %d results" % (
                index, run.get("command_line"), run["returncode"],
                len(mine)))
        if any(r["bench"] != run["bench"] for r in mine):
            fail("run %d: results named after another bench" % index)
    for r in report["results"]:
        for key in ("bench", "path", "unit", "ours", "contenders"):
            if key not in r:
                fail("a result without %s: %r" % (key, r))
    if "--cnpy" not in argv and not report["cnpy"].startswith("not run"):
        fail("bench.json: cnpy %r without --cnpy" % report["cnpy"])
    contenders = sum(len(r["contenders"]) for r in report["results"])
    bars = [e for e in svg.iter(SVG + "rect") if e.get("class") == "bar"]
    if svg.tag != SVG + "svg" or len(bars) != contenders or not bars:
        fail("bench.svg: %d bars for %d contenders" % (len(bars),
                                                       contenders))
    print("check_report: OK: %d runs, %d results, %d bars" % (
        len(report["runs"]), len(report["results"]), len(bars)))


if __name__ == "__main__":
    main(sys.argv[1:])
