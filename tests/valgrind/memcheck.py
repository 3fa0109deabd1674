#!/usr/bin/python3
"""Run the tests of some ctest labels under valgrind's memcheck.

    memcheck.py BUILD_DIR [-L LABEL]... [-E REGEX] [-j JOBS]

Each test whose command is one of our programs (an executable of the build) runs as
ctest would run it (its command line, its working directory, its
environment properties) under

    valgrind --error-exitcode=99 --leak-check=full
             --errors-for-leak-kinds=definite,indirect

and fails on any memcheck error or definite/indirect leak. Tests whose
command is a script are listed with the reason they are not run here
(scripts run our programs many times; tests/cli's scripts take valgrind as
their EMULATOR argument instead, see .ci/run). Prints one line per test
and a summary; exits 1 if any test failed.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

# Children forked by a test (writers killed on purpose, processes filling
# one file) end with _exit(), leaving the parent's memory: only the test's
# own process is checked for leaks.
HERE = os.path.dirname(os.path.abspath(__file__))

VALGRIND = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect",
            "--child-silent-after-fork=yes"]

# Tests that are programs but are not run under valgrind, and why.
NOT_UNDER_VALGRIND = {
    "test_reorder": "large arrays reordered every way: 300 s under valgrind "
                    "(measured 2026-12-07), beyond CI's budget; the "
                    "ASan+UBSan and coverage builds run it",
    "test_parallel_read": "large files read on many thread counts: 293 s "
                          "under valgrind (measured 2026-12-07), beyond "
                          "CI's budget; the ASan+UBSan, ThreadSanitizer "
                          "and coverage builds run it",
}

# Why a script's programs are not run here.
SCRIPTS = {
    "cli_npz": ".ci/run runs it with valgrind as its EMULATOR",
    "cli_errors": ".ci/run runs it with valgrind as its EMULATOR",
    "cli_corpus": "runs the tool about 2,400 times (half an hour under "
                  "valgrind, beyond CI's budget); the ASan+UBSan build runs "
                  "it, and cli_npz runs under valgrind",
    "readme_snippets": "compiles and runs the README's snippets, which "
                       "the tour_* tests run as programs here",
    "man_gen": "runs the build-time page generator gen_man on broken "
               "headers; the ASan+UBSan build checks it (and builds the "
               "pages with it)",
}

# Tests run with other options, and why.
OPTIONS = {
    # Its children (several processes filling one file, appenders racing
    # for the lock) end with _exit() holding blocks the parent allocated
    # before fork(), which memcheck reports as leaked in each child; memory
    # errors are still checked everywhere, and leaks in the parent by the
    # ASan build (LeakSanitizer does not follow fork()).
    "test_grow": ["--leak-check=no"],
    # Debian's minizip keeps blocks of its own after a write fails inside
    # it (tests/unit/minizip.lsan.supp says which); ours are all checked.
    "test_iofault": ["--suppressions=" + os.path.join(HERE, "minizip.supp")],
    "test_pathfault": ["--suppressions=" + os.path.join(HERE, "minizip.supp")],
}


def is_ours(path, build):
    """One of the programs this build made (not sh, bash or python)."""
    build = os.path.realpath(build) + os.sep
    if not os.path.realpath(path).startswith(build):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def tests_of(build, labels, exclude):
    cmd = ["ctest", "--test-dir", build, "--show-only=json-v1"]
    for label in labels:
        cmd += ["-L", label]
    if exclude:
        cmd += ["-E", exclude]
    cmd += ["-LE", "slow"]
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    return json.loads(out)["tests"]


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def plan(test, build):
    """None and a skip line, or the test's run: (name, argv, cwd, env,
    its properties)."""
    name, command = test["name"], test.get("command", [])
    props = properties(test)
    if not command or not is_ours(command[0], build):
        return None, "skip %-28s a script (%s): %s" % (
            name, os.path.basename(command[0]) if command else "none",
            SCRIPTS.get(name, "not one of our programs"))
    if name in NOT_UNDER_VALGRIND:
        return None, "skip %-28s %s" % (name, NOT_UNDER_VALGRIND[name])
    env = dict(os.environ)
    # Tests that check the hardware's rounding skip what valgrind's
    # emulation rounds otherwise (test_cast: a 64-bit integer to float
    # goes through a double under valgrind, rounding twice).
    env["NPYIO_UNDER_VALGRIND"] = "1"
    for item in props.get("ENVIRONMENT", []):
        key, _, value = item.partition("=")
        env[key] = value
    cwd = props.get("WORKING_DIRECTORY", os.path.join(build, "tests"))
    return (name, VALGRIND + OPTIONS.get(name, []) + command, cwd, env,
            props), None


def run_one(run):
    """Run one planned test: its result line, and its output if it
    failed."""
    name, argv, cwd, env, props = run
    start = time.time()
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    ok = r.returncode == 0 or (
        r.returncode != 99 and "SKIP_RETURN_CODE" in props and
        r.returncode == int(props["SKIP_RETURN_CODE"]))
    line = "%s %-28s %.1f s" % ("ok  " if ok else "FAIL", name,
                                time.time() - start)
    output = "" if ok else (r.stdout.decode(errors="replace")[-3000:] +
                            r.stderr.decode(errors="replace")[-6000:])
    return ok, line, output


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("-L", dest="labels", action="append", default=[])
    ap.add_argument("-E", dest="exclude", default="")
    # Tests run side by side, as ctest --parallel runs them.
    ap.add_argument("-j", dest="jobs", type=int, default=1)
    args = ap.parse_args()
    runs = []
    for test in tests_of(args.build, args.labels, args.exclude):
        run, skip = plan(test, args.build)
        if skip is not None:
            print(skip)
        else:
            runs.append(run)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for ok, line, output in pool.map(run_one, runs):
            print(line)
            sys.stdout.write(output)
            sys.stdout.flush()
            failed += not ok
    print("valgrind: %d tests run, %d failed" % (len(runs), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
