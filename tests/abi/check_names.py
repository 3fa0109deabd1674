#!/usr/bin/env python3
"""The naming rule of npyio.h, checked mechanically (the rule is written at
the top of the header):

    check_names.py HEADER FLAG_TABLE_TEST

- every function is npyio_<family>_... for a handle family, or one of the
  task and library-wide calls;
- a function that makes a handle (an `npyio_H **` parameter) is named
  npyio_H_new*, _parse, _open_* or _create_* (two named exceptions);
- predicates (documented "@return 1 or 0" / "1 if") are _is_/_has_, and
  every _is_/_has_ returns int;
- each handle has exactly one end (_unref, _free or _close), and only the
  writers an _abort;
- parameters: `flags` is the only uint32_t and no call takes a `mode`;
  level comes before flags, flags before options, the key second in the
  archive writer's adds and copy; sizes and indexes are size_t, rows,
  offsets and shapes int64_t, ndim int;
- flags: every NPYIO_{READ,WRITE,MAP,NPZ_WRITE,RECORD,STREAM}_* is one bit,
  no two alike, and no other prefix defines a flag;
- FLAG_TABLE_TEST (test_flag_table.c) lists every public flag and every
  call with a flags parameter, with exactly the flags its documentation
  names, so the refusal test covers them all.
Prints `names OK` or a `NAME CHECK FAILED: ...` line per violation.
"""

import re
import sys

FAMILIES = ["npz_writer", "record_builder", "options", "dtype", "header",
            "stream", "reader", "writer", "map", "npz"]
LIBRARY_CALLS = {"npyio_version_string", "npyio_version_number",
                 "npyio_status_string", "npyio_last_error", "npyio_free"}
TASKS = {"npyio_save", "npyio_load", "npyio_load_as", "npyio_append",
         "npyio_savez", "npyio_savez_append", "npyio_save_with_header",
         "npyio_load_with_header", "npyio_savez_with_header"}
# Calls that hand out a handle without being its constructor.
MAKERS_ELSEWHERE = {"npyio_record_builder_finish", "npyio_load_with_header"}
ENDS = {"unref", "free", "close"}
FLAG_PREFIXES = ("READ", "WRITE", "MAP", "NPZ_WRITE", "RECORD", "STREAM")
INT_TYPES = {  # parameter name -> the type the rule gives it
    "len": "size_t", "cap": "size_t", "type_cap": "size_t",
    "shape_cap": "size_t", "index": "size_t", "itemsize": "size_t",
    "nbytes": "size_t", "first": "int64_t", "offset": "int64_t",
    "multiplier": "int64_t", "ndim": "int", "flags": "uint32_t",
    "level": "int",
}

failures = []


def fail(text):
    failures.append(text)
    print("NAME CHECK FAILED: " + text)


def declarations(header):
    """(name, return type, [(type, name)], doc) of every NPYIO_API call."""
    out = []
    for m in re.finditer(r"NPYIO_API\s+([^;(]*?)\b(npyio_\w+)\s*\(([^;]*?)\)"
                         r"\s*;", header, re.S):
        doc_start = header.rfind("/**", 0, m.start())
        doc = header[doc_start:m.start()]
        params = []
        for p in m.group(3).split(","):
            p = " ".join(p.split())
            if p in ("void", ""):
                continue
            pm = re.match(r"(.*?)(\w+)$", p)
            params.append((pm.group(1).replace(" *", "*").strip(),
                           pm.group(2)))
        out.append((m.group(2), " ".join(m.group(1).split()), params, doc))
    return out


def family_of(name):
    for f in FAMILIES:  # longest first: npz_writer before npz
        if name.startswith("npyio_" + f + "_"):
            return f
    return None


def check_families(decls):
    for name, _, _, _ in decls:
        if family_of(name) is None and name not in LIBRARY_CALLS | TASKS:
            fail("%s: not npyio_<family>_... and not a task call" % name)


def check_makers(decls):
    for name, _, params, _ in decls:
        for ptype, _ in params:
            m = re.match(r"(?:const )?npyio_(\w+)\*\*$", ptype)
            if not m or m.group(1) not in FAMILIES:
                continue
            made = m.group(1)
            ok = re.match(r"npyio_%s_(new|parse|open_|create_)" % made, name)
            if not ok and name not in MAKERS_ELSEWHERE:
                fail("%s makes an npyio_%s but is not npyio_%s_new*, "
                     "_parse, _open_* or _create_*" % (name, made, made))


def check_predicates(decls):
    for name, ret, _, doc in decls:
        asks = re.search(r"@return 1 or 0|@return 1 if", doc) is not None
        named = re.search(r"_(is|has)_", name) is not None
        if asks and not named:
            fail("%s answers 1 or 0 but is not named _is_/_has_" % name)
        if named and ret != "int":
            fail("%s is named as a predicate but returns %s" % (name, ret))


def check_ends(decls):
    names = {d[0] for d in decls}
    for f in FAMILIES:
        ends = [e for e in ENDS if "npyio_%s_%s" % (f, e) in names]
        if len(ends) != 1:
            fail("npyio_%s has ends %r, not exactly one of %s" %
                 (f, ends, sorted(ENDS)))
        aborts = "npyio_%s_abort" % f in names
        if aborts != (f in ("writer", "npz_writer")):
            fail("npyio_%s: an _abort only for writers" % f)


def check_parameters(decls):
    for name, _, params, _ in decls:
        names = [p[1] for p in params]
        for ptype, pname in params:
            want = INT_TYPES.get(pname)
            if pname == "mode":
                fail("%s takes a mode; openers take flags" % name)
            base = ptype.replace("const ", "").rstrip("*")
            if want and base != want:
                fail("%s: %s is %s, the rule says %s" % (name, pname, ptype,
                                                         want))
            if ptype == "uint32_t" and pname != "flags":
                fail("%s: uint32_t %s; only flags are uint32_t" % (name,
                                                                  pname))
        order = [n for n in ("level", "flags", "options") if n in names]
        if order != sorted(order, key=names.index) or \
                [names.index(n) for n in order] != sorted(
                    names.index(n) for n in order):
            fail("%s: level, flags, options out of order" % name)
        if re.match(r"npyio_npz_writer_(add|copy)", name) and \
                names[1:2] != ["key"]:
            fail("%s: the key must be the second parameter" % name)
        if "level" in names and "flags" in names and \
                names.index("level") > names.index("flags"):
            fail("%s: level after flags" % name)
        if "options" in names and "flags" in names and \
                names.index("options") < names.index("flags"):
            fail("%s: options before flags" % name)


def header_flags(header):
    flags = {}
    for m in re.finditer(r"^#define (NPYIO_([A-Z_]+?)_[A-Z0-9_]+) "
                         r"(0x[0-9a-fA-F]+|\d+)u?\b", header, re.M):
        name = m.group(1)
        if any(name.startswith("NPYIO_%s_" % p) for p in FLAG_PREFIXES):
            if name.startswith("NPYIO_NPZ_STAT_"):
                continue
            flags[name] = int(m.group(3), 0)
    return flags


def check_flags(header):
    flags = header_flags(header)
    seen = {}
    for name, value in flags.items():
        if value == 0 or value & (value - 1):
            fail("%s = 0x%x is not one bit" % (name, value))
        if value in seen:
            fail("%s and %s are both 0x%x" % (tuple(sorted((seen[value],
                                                            name))) +
                                              (value,)))
        seen[value] = name
    for m in re.finditer(r"^#define (NPYIO_(OPEN|NPZ_NO|OPT)_\w+)", header,
                         re.M):
        fail("%s: a flag prefix that says nowhere it goes" % m.group(1))
    return flags


def documented_flags(doc):
    m = re.search(r"@param\[in\] flags ([^@]*)", doc)
    if not m:
        return None
    return set(re.findall(r"NPYIO_[A-Z_]+", m.group(1)))


def check_flag_table(decls, flags, test_text):
    listed = set(re.findall(r"^\s*FLAG\((NPYIO_\w+)\)", test_text, re.M) +
                 re.findall(r"\bFLAG\((NPYIO_\w+)\)", test_text))
    if listed != set(flags):
        fail("test_flag_table.c lists flags %s; the header has %s" %
             (sorted(listed - set(flags)), sorted(set(flags) - listed)))
    table = {}
    for m in re.finditer(r"FLAG_CALL\((\w+),\s*([^)]*?)\),", test_text,
                         re.S):
        takes = set(re.findall(r"NPYIO_\w+", m.group(2)))
        table["npyio_" + m.group(1)] = takes
    for name, _, params, doc in decls:
        if "flags" not in [p[1] for p in params]:
            continue
        doc_flags = documented_flags(doc)
        if doc_flags is None:
            fail("%s: no @param[in] flags line" % name)
            continue
        doc_flags &= set(flags)
        if name not in table:
            fail("%s takes flags but is not in test_flag_table.c" % name)
        elif table[name] != doc_flags:
            fail("%s: test_flag_table.c says it takes %s, its documentation "
                 "%s" % (name, sorted(table[name]), sorted(doc_flags)))


def main():
    header = open(sys.argv[1]).read()
    test_text = open(sys.argv[2]).read()
    decls = declarations(header)
    if len(decls) < 100:
        fail("only %d declarations found" % len(decls))
    check_families(decls)
    check_makers(decls)
    check_predicates(decls)
    check_ends(decls)
    check_parameters(decls)
    flags = check_flags(header)
    check_flag_table(decls, flags, test_text)
    if failures:
        return 1
    print("names OK: %d functions, %d flags" % (len(decls), len(flags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
