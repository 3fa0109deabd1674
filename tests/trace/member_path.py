#!/usr/bin/python3
"""member_path.py BUILD [ARCHIVE INDEX [damage]]

The path one npyio_npz_load() of an archive member takes through the
library's modules, traced by gdb: a breakpoint on every function of every
src/*.c file (static ones too), the calls inside npyio_npz_load() recorded
(not the archive's open), as tests/trace/member_load.c loads member INDEX
of ARCHIVE (default: member 6, 'f8_be.npy', of
tests/data/npz/savez.npz). Prints

  - the modules (src files) visited, in the order first entered, with
    their layers (tests/abi/layers.txt);
  - every call that goes back UP a layer (the callee's layer above the
    caller's: never a symbol call, which abi_layer_symbols forbids, but a
    call through a table of functions, such as a stream's back end), with
    the caller and callee functions and how many times it was made;
  - the archive layer's (npz.c's) calls into the modules above the
    foundations (layer 35), in order;
  - how many times the archive layer checked its facts (the index, the
    member, the limits), opened the member's stream and read its bytes.

With "damage" the member is expected to fail (a damaged archive), and the
damage check that follows the failed read is traced too. Needs gdb, and a
build with debug information (RelWithDebInfo or Debug). Nothing is
asserted: the printout is for reading (issue 40, item 4).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

GDB_SCRIPT = r'''
import gdb, os
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("start", to_string=True)
src = os.environ["TRACE_SRC"]
for name in sorted(os.listdir(src)):
    if name.endswith(".c"):
        try:
            gdb.execute("rbreak %s:." % name, to_string=True)
        except gdb.error:
            pass
out = open(os.environ["TRACE_OUT"], "w")
def where(frame):
    if frame is None:
        return ("main", "main")
    sal = frame.find_sal()
    f = os.path.basename(sal.symtab.filename) if sal.symtab else "?"
    return (frame.name() or "?", f)
# Only the calls made inside npyio_npz_load (not the archive's open).
state = {"in_load": False}
class LoadEnd(gdb.FinishBreakpoint):
    def stop(self):
        state["in_load"] = False
        return False
def stop(event):
    if not isinstance(event, gdb.BreakpointEvent):
        return
    frame = gdb.newest_frame()
    callee = where(frame)
    if callee[0] == "npyio_npz_load" and not state["in_load"]:
        state["in_load"] = True
        LoadEnd(frame, internal=True)
    if not state["in_load"]:
        return
    caller = where(frame.older())
    out.write("%s\t%s\t%s\t%s\n" % (caller + callee))
gdb.events.stop.connect(stop)
while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not gdb.selected_inferior().pid:
        break
out.close()
'''

FACTS = ["check_index", "check_member", "npyio__member_open",
         "npyio__reader_adopt", "check_damage", "npyio__member_verify",
         "npyio__header_read", "stored_read", "stored_pread",
         "stored_finish", "npyio__check_load_outputs"]


def layers():
    table = {}
    with open(os.path.join(ROOT, "tests", "abi", "layers.txt")) as f:
        for line in f:
            words = line.split("#")[0].split()
            if len(words) >= 2:
                table[words[0]] = int(words[1])
    return table


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    archive = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        ROOT, "tests", "data", "npz", "savez.npz")
    index = sys.argv[3] if len(sys.argv) > 3 else "6"
    extra = sys.argv[4:5]
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "trace.py")
        trace = os.path.join(tmp, "trace.tsv")
        with open(script, "w") as f:
            f.write(GDB_SCRIPT)
        env = dict(os.environ, TRACE_SRC=os.path.join(ROOT, "src"),
                   TRACE_OUT=trace)
        subprocess.run(["gdb", "-q", "-batch", "-x", script, "--args",
                        os.path.join(build, "tests", "member_load"),
                        archive, index] + extra, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        with open(trace) as f:
            calls = [line.rstrip("\n").split("\t") for line in f]
    report(calls, layers())


def report(calls, table):
    def layer(path):
        return table.get(path[:-2] if path.endswith(".c") else path)

    seen, ups, counts = [], {}, {}
    for caller, cfile, callee, efile in calls:
        if efile not in seen:
            seen.append(efile)
        counts[callee] = counts.get(callee, 0) + 1
        lc, le = layer(cfile), layer(efile)
        if lc is not None and le is not None and le > lc:
            key = "%s (%s, %d) -> %s (%s, %d)" % (caller, cfile, lc, callee,
                                                 efile, le)
            ups[key] = ups.get(key, 0) + 1
    print("%d calls into the library, %d modules visited:" %
          (len(calls), len(seen)))
    print("  " + " ".join("%s(%s)" % (f, layer(f)) for f in seen))
    print("%d kinds of call back up a layer:" % len(ups))
    for key, n in ups.items():
        print("  %5d x %s" % (n, key))
    print("the archive layer's calls into other modules, in order:")
    line = []
    for caller, cfile, callee, efile in calls:
        if cfile == "npz.c" and efile != "npz.c" and \
                layer(efile) is not None and layer(efile) > 35:
            line.append("%s (%s)" % (callee, efile[:-2]))
    print("  " + " -> ".join(line))
    print("facts and opens:")
    for name in FACTS:
        print("  %5d x %s" % (counts.get(name, 0), name))


if __name__ == "__main__":
    main()
