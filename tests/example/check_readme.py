#!/usr/bin/env python3
"""check_readme.py README SRC_DIR PREFIX: the README's promises, checked.

PREFIX is an installed libnpyio (the install_prefix fixture). Checked:

- the README has at most 350 lines;
- the numbers it states agree with the tree: the version with
  NPYIO_VERSION_STRING, the count of exported functions and the symbol
  version with cmake/npyio.map, the count of flags with npyio.h;
- every link into the tree names a file that exists;
- each cheat-sheet row (the table under "## From NumPy and cnpy") names
  calls that npyio.h (or npyio.hpp, for npyio::) declares, and links an
  example that uses one of them;
- every command line shown ("$ " lines of sh blocks) runs and exits 0,
  and none shows a variant in its comment ("# also --dtype f4"), which
  would not run;
  in README order in one scratch directory whose tests/ is the tree's,
  with the installed tool on PATH, pkg-config finding the installed
  library, and HOME/.local being PREFIX (the README's custom prefix);
  then every python block runs there too (after the first program made
  grid.npy); the apt-get commands, which are not "$ " lines, are CI's;
- the libraries it says a static link adds are pkg-config's;
- each cmake block's lines are those of the consumer project the install
  tests build (tests/consumer/cmake-project/CMakeLists.txt).

C blocks are check_readme.sh's (each is a tour program ctest builds and
runs). Prints what failed; exit 1 if anything did.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

MAX_LINES = 350
FLAG_RE = re.compile(
    r"^#define (NPYIO_(?:READ|WRITE|MAP|NPZ_WRITE|RECORD|STREAM)_[A-Z_]+) "
    r"+0x[0-9a-fA-F]+u", re.M)
NAME_RE = re.compile(r"\b(npyio::[a-z_]+|npyio_[a-z0-9_]+|NPYIO_[A-Z0-9_]+)")

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message)


def blocks(text):
    """(language, first line number, lines) of each fenced block."""
    found, lang, start, lines = [], None, 0, []
    for number, line in enumerate(text.split("\n"), 1):
        if lang is None and line.startswith("```"):
            lang, start, lines = line[3:].strip(), number, []
        elif lang is not None and line == "```":
            found.append((lang, start, lines))
            lang = None
        elif lang is not None:
            lines.append(line)
    return found


def check_numbers(text, src):
    header = open(os.path.join(src, "include", "npyio.h")).read()
    mapfile = open(os.path.join(src, "cmake", "npyio.map")).read()
    version = re.search(r'#define NPYIO_VERSION_STRING "([^"]+)"',
                        header).group(1)
    exported = re.findall(r"^\s+(npyio_[a-z0-9_]+);", mapfile, re.M)
    nodes = re.findall(r"^(NPYIO_[0-9.]+) \{", mapfile, re.M)
    flags = FLAG_RE.findall(header)
    said = {
        "version": re.findall(r"libnpyio (\d+\.\d+\.\d+)", text),
        "functions": re.findall(r"exports (\d+) functions", text),
        "flags": re.findall(r"(\d+) flags", text),
        "node": re.findall(r"symbol\s+version `(NPYIO_[0-9.]+)`", text),
    }
    truth = {"version": version, "functions": str(len(exported)),
             "flags": str(len(flags)), "node": nodes[-1] if nodes else "?"}
    for what, values in said.items():
        if not values:
            fail("the README no longer states the %s (%s)" %
                 (what, truth[what]))
        for value in values:
            if value != truth[what]:
                fail("the README says %s %s, the tree %s" %
                     (what, value, truth[what]))


def check_links(text, src):
    for target in re.findall(r"\]\(([^)#:]+)\)", text):
        if not os.path.exists(os.path.join(src, target)):
            fail("link to %s: no such file" % target)


def declared_names(src):
    names = set()
    for path in ("include/npyio.h", "include/npyio.hpp"):
        body = open(os.path.join(src, path)).read()
        names |= set(re.findall(r"\b(npyio_[a-z0-9_]+)\s*\(", body))
        names |= set(re.findall(r"#define (NPYIO_[A-Z0-9_]+)", body))
    hpp = open(os.path.join(src, "include", "npyio.hpp")).read()
    for name in re.findall(r"\b([a-z_]+)\s*\(", hpp):
        names.add("npyio::" + name)
    for name in re.findall(r"\b(?:class|struct)\s+([a-z_]+)", hpp):
        names.add("npyio::" + name)
    return names


def check_cheat_sheet(text, src):
    part = text.split("## From NumPy and cnpy", 1)
    if len(part) < 2:
        fail("no cheat-sheet section")
        return 0
    rows = [line for line in part[1].split("\n## ", 1)[0].split("\n")
            if line.startswith("| ") and not line.startswith("| task")
            and not line.startswith("| ---")]
    known = declared_names(src)
    count = 0
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) != 5:
            fail("cheat-sheet row with %d cells: %s" % (len(cells), row))
            continue
        task, calls, example = cells[0], cells[3], cells[4]
        names = [n for n in NAME_RE.findall(calls) if n != "NPYIO_OK"]
        if not names:
            fail("cheat-sheet row '%s' names no call" % task)
        for name in names:
            if name not in known:
                fail("cheat-sheet row '%s': %s is not declared" %
                     (task, name))
        links = re.findall(r"\]\(([^)]+)\)", example)
        if not links:
            fail("cheat-sheet row '%s' links no example" % task)
        used = "".join(open(os.path.join(src, p)).read() for p in links
                       if os.path.exists(os.path.join(src, p)))
        plain = [n.replace("npyio::", "") for n in names]
        if not any(n in used for n in plain):
            fail("cheat-sheet row '%s': its example uses none of %s" %
                 (task, ", ".join(names)))
        count += 1
    return count


def environment(prefix, scratch):
    home = os.path.join(scratch, "home")
    os.makedirs(home)
    os.symlink(prefix, os.path.join(home, ".local"))
    found = glob.glob(os.path.join(prefix, "**", "pkgconfig", "npyio.pc"),
                      recursive=True)
    if not found:
        sys.exit("FAIL: no npyio.pc under %s: is the library installed "
                 "there?" % prefix)
    pcdir = os.path.dirname(found[0])
    env = dict(os.environ, HOME=home, PKG_CONFIG_PATH=pcdir,
               PATH=os.path.join(prefix, "bin") + os.pathsep +
               os.environ.get("PATH", ""),
               LD_LIBRARY_PATH=os.path.dirname(pcdir))
    return env


def check_no_variants(start, commands):
    """A command's comment names no option ("# also --dtype f4"): a
    variant shown only in a comment is not run, and that one failed on
    the file it named; written out as a line of its own, it runs."""
    for command in commands:
        comment = command.split("  # ", 1)[1] if "  # " in command else ""
        if re.search(r"(?<![\w-])--[a-z]", comment):
            fail("the sh block at README line %d: a variant in a comment, "
                 "not run (write it out as a line): %s" % (start, command))


def run_blocks(text, src, prefix):
    ran = {"commands": 0, "python": 0, "cmake": 0}
    consumer = open(os.path.join(src, "tests", "consumer", "cmake-project",
                                 "CMakeLists.txt")).read().split("\n")
    with tempfile.TemporaryDirectory(prefix="npyio-readme-") as scratch:
        env = environment(os.path.abspath(prefix), scratch)
        check_static_libs(text, env)
        work = os.path.join(scratch, "work")
        os.makedirs(work)
        os.symlink(os.path.join(os.path.abspath(src), "tests"),
                   os.path.join(work, "tests"))
        later = []
        for lang, start, lines in blocks(text):
            if lang == "sh":
                commands = [l[2:] for l in lines if l.startswith("$ ")]
                check_no_variants(start, commands)
                if commands:
                    run(["sh", "-ec", "\n".join(commands)], work, env,
                        "the sh block at README line %d" % start)
                    ran["commands"] += len(commands)
            elif lang == "python":
                later.append((start, lines))
            elif lang == "cmake":
                for line in lines:
                    if line.strip() and line not in consumer:
                        fail("README line %d is not in the consumer "
                             "project: %s" % (start, line))
                ran["cmake"] += 1
        for start, lines in later:
            run([sys.executable, "-c", "\n".join(lines)], work, env,
                "the python block at README line %d" % start)
            ran["python"] += 1
    return ran


def check_static_libs(text, env):
    """The libraries the README says a static link adds are pkg-config's."""
    said = re.findall(r"--static --cflags --libs npyio`, which adds what it "
                      r"needs\s+\(`([^`]+)`\)", text)
    libs = subprocess.run(["pkg-config", "--static", "--libs", "npyio"],
                          env=env, stdout=subprocess.PIPE, text=True).stdout
    given = " ".join(w for w in libs.split()
                     if w.startswith("-l") and w != "-lnpyio")
    if not said:
        fail("the README no longer says what a static link adds (%s)" %
             given)
    for value in said:
        if value != given:
            fail("the README says a static link adds %s, pkg-config %s" %
                 (value, given))


def run(argv, cwd, env, what):
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        fail("%s exited %d:\n%s" % (what, done.returncode, done.stdout))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    readme, src, prefix = sys.argv[1:]
    text = open(readme).read()
    lines = text.count("\n")
    if lines > MAX_LINES:
        fail("the README has %d lines, more than %d" % (lines, MAX_LINES))
    check_numbers(text, src)
    check_links(text, src)
    rows = check_cheat_sheet(text, src)
    ran = run_blocks(text, src, prefix)
    if failures:
        sys.exit(1)
    print("README checked: %d lines, %d cheat-sheet rows, %d command lines, "
          "%d python blocks, %d cmake blocks" %
          (lines, rows, ran["commands"], ran["python"], ran["cmake"]))


if __name__ == "__main__":
    main()
