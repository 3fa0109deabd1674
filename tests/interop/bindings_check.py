#!/usr/bin/env python3
"""Interop test: libnpyio used from Python through its ABI alone, as a
bindings author would, with ctypes (standard library) or cffi in ABI mode.

    bindings_check.py --binding ctypes|cffi --prefix PREFIX --workdir DIR

PREFIX is an installed libnpyio (the `installed` fixture). Everything the
script knows about the library comes from what that install provides:
    pkg-config --variable=cdef npyio     the cdef file: with cffi, fed whole
                                         to ffi.cdef(); with ctypes, the
                                         source of every constant
    pkg-config --variable=libdir npyio   where libnpyio.so.1 is
    pkg-config --variable=includedir     npyio.h, to check that the cdef
                                         file covers all of it
No constant is typed here: each is looked up by name in the cdef file (or
in cffi's lib), so a constant that is missing or wrong there fails a check.

Checks: the cdef file names every constant and function of the installed
header; the version; statuses and messages of real failures; a limit set
through its constant; arrays written with npyio_save_with_header (files byte-identical
to np.save's, NumPy loads them equal) and read back from NumPy's files
(as stored, and converted to native C order); a caller-defined stream of
Python callbacks for reading and for writing, and a failing callback; a
file mapped read-only and read-write; archives: NumPy's (np.savez and
np.savez_compressed) opened, listed and read member by member and in one
call, and an archive written member by member that np.load and zipfile
read. Prints one line per failed check,
then `N passed, M failed`; exits 0 only if all passed, 77 (ctest: skipped)
without NumPy or without the chosen binding module.
"""

import argparse
import ctypes
import importlib.util
import os
import re
import subprocess
import sys

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("bindings_check.py: NumPy is not available to %s; skipping"
          % sys.executable)
    sys.exit(77)

SKIP = 77
# Not constants a binding can use: the include guard, the export marker,
# and a string (npyio_version_string() gives it).
NOT_IN_CDEF = {"NPYIO_H", "NPYIO_API", "NPYIO_VERSION_STRING"}


# ---------------------------------------------------------------------------
# What the install provides
# ---------------------------------------------------------------------------

def pkg_config(prefix, *args):
    pcdirs = [root for root, _, files in os.walk(prefix) if "npyio.pc" in files]
    if len(pcdirs) != 1:
        raise SystemExit("bindings_check.py: no single npyio.pc under %s" % prefix)
    env = dict(os.environ, PKG_CONFIG_PATH=pcdirs[0])
    return subprocess.check_output(["pkg-config"] + list(args) + ["npyio"],
                                   env=env, text=True).strip()


class Constants(dict):
    """The constants by name; a name that is missing is a clear failure."""

    def __missing__(self, name):
        raise SystemExit("FAIL: constant %s is not in the cdef file" % name)


def cdef_constants(text):
    """NAME -> value of every `#define NAME <decimal>` in the cdef file."""
    return Constants((m.group(1), int(m.group(2))) for m in
                     re.finditer(r"^#define (NPYIO_\w+) (-?[0-9]+)$", text, re.M))


def header_names(header_text):
    """(constant names, function names) the installed npyio.h declares."""
    # Object-like macros only: NPYIO_TYPE_OF(p) and the C11 layer's other
    # function-like macros are not constants, NPYIO__ names are helpers.
    constants = set(re.findall(r"^#define (NPYIO_(?!_)\w+)(?![\w(])",
                               header_text, re.M))
    functions = set(re.findall(r"^NPYIO_API\b[^(]*?\b(npyio_\w+)\(",
                               header_text, re.M))
    return constants - NOT_IN_CDEF, functions


# ---------------------------------------------------------------------------
# The two bindings: the same small surface, each the way its module works.
# Handles are opaque pointers; data goes in and out as Python bytes.
# ---------------------------------------------------------------------------

def stream_callbacks(read, write, seek, put, take):
    """The C callbacks of npyio_stream_ops over Python functions:
    read(cap) -> bytes or None on failure; write(bytes) -> count or None;
    seek(offset, whence) -> position or None. put(buf, data) copies bytes
    into C memory, take(buf, n) copies n bytes out: the binding's own."""
    def c_read(_user, buf, cap, got):
        data = read(cap)
        if data is None:
            return 1
        put(buf, data)
        got[0] = len(data)
        return 0

    def c_write(_user, buf, length, put_count):
        count = write(take(buf, length))
        if count is None:
            return 1
        put_count[0] = count
        return 0

    def c_seek(_user, offset, whence, pos):
        where = seek(offset, whence)
        if where is None:
            return 1
        pos[0] = where
        return 0
    return c_read, c_write, c_seek

def file_callbacks(f, put, take):
    """The optional members of npyio_stream_ops (pread, pwrite, length,
    truncate, sync) and read, write, seek over a Python file object f
    (opened "r+b"), as a binding's file object would give them: positioned
    I/O on its descriptor, never moving its position."""
    fd = f.fileno()

    def c_read(_user, buf, cap, got):
        data = os.read(fd, cap)
        put(buf, data)
        got[0] = len(data)
        return 0

    def c_write(_user, buf, length, count):
        count[0] = os.write(fd, take(buf, length))
        return 0

    def c_seek(_user, offset, whence, pos):
        pos[0] = os.lseek(fd, offset, whence)  # NPYIO_SEEK_* are 0, 1, 2
        return 0

    def c_pread(_user, buf, cap, offset, got):
        data = os.pread(fd, cap, offset)
        put(buf, data)
        got[0] = len(data)
        return 0

    def c_pwrite(_user, buf, length, offset, count):
        count[0] = os.pwrite(fd, take(buf, length), offset)
        return 0

    def c_length(_user, length):
        length[0] = os.fstat(fd).st_size
        return 0

    def c_truncate(_user, length):
        os.ftruncate(fd, length)
        return 0

    def c_sync(_user, durable):
        if durable:
            os.fsync(fd)
        return 0
    return dict(read=c_read, write=c_write, seek=c_seek, pread=c_pread,
                pwrite=c_pwrite, length=c_length, truncate=c_truncate,
                sync=c_sync)


class Binding:
    """What both bindings do alike, given self.lib."""

    def call(self, fname, *args):
        return getattr(self.lib, fname)(*args)

    def header_shape(self, header):
        ndim = self.lib.npyio_header_ndim(header)
        dims = self.lib.npyio_header_shape(header)
        return tuple(dims[i] for i in range(ndim))

    def writer_write(self, writer, data):
        return self.lib.npyio_writer_write(writer, data, len(data))

    def free_data(self, data):
        self.lib.npyio_free(data[1])


class CtypesBinding(Binding):
    """ctypes: prototypes declared here (ctypes cannot read C), constants
    from the cdef file."""
    name = "ctypes"
    NULL = None

    def __init__(self, libpath, cdef_text):
        self.C = cdef_constants(cdef_text)
        lib = self.lib = ctypes.CDLL(libpath)
        P = ctypes.c_void_p
        PP = ctypes.POINTER(ctypes.c_void_p)
        st = ctypes.c_int32
        sz = ctypes.c_size_t
        u32 = ctypes.c_uint32
        i64 = ctypes.c_int64
        protos = {
            "npyio_version_number": (u32, []),
            "npyio_version_string": (ctypes.c_char_p, []),
            "npyio_status_string": (ctypes.c_char_p, [st]),
            "npyio_last_error": (ctypes.c_char_p, []),
            "npyio_free": (None, [P]),
            "npyio_options_new": (st, [PP]),
            "npyio_options_free": (None, [P]),
            "npyio_options_set_limit": (st, [P, ctypes.c_int32, i64]),
            "npyio_dtype_parse": (st, [ctypes.c_char_p, sz, P, PP]),
            "npyio_dtype_unref": (None, [P]),
            "npyio_dtype_kind": (ctypes.c_int32, [P]),
            "npyio_dtype_descr": (st, [P, ctypes.c_char_p, sz,
                                       ctypes.POINTER(sz)]),
            "npyio_header_new": (st, [P, ctypes.c_int, ctypes.POINTER(i64),
                                      ctypes.c_int, PP]),
            "npyio_header_free": (None, [P]),
            "npyio_header_dtype": (P, [P]),
            "npyio_header_ndim": (ctypes.c_int, [P]),
            "npyio_header_shape": (ctypes.POINTER(i64), [P]),
            "npyio_header_is_fortran_order": (ctypes.c_int, [P]),
            "npyio_header_nbytes": (i64, [P]),
            "npyio_save_with_header": (st, [ctypes.c_char_p, P, ctypes.c_char_p, sz, u32,
                                P]),
            "npyio_load_with_header": (st, [ctypes.c_char_p, u32, P, PP, PP]),
            "npyio_reader_open_path": (st, [ctypes.c_char_p, P, PP]),
            "npyio_reader_open_stream": (st, [P, P, PP]),
            "npyio_reader_header": (P, [P]),
            "npyio_reader_read": (st, [P, ctypes.c_char_p, sz, u32]),
            "npyio_reader_close": (st, [P]),
            "npyio_writer_create_stream": (st, [P, P, u32, P, PP]),
            "npyio_writer_write": (st, [P, ctypes.c_char_p, sz]),
            "npyio_writer_close": (st, [P]),
            "npyio_stream_open_ops": (st, [P, P, P, PP]),
            "npyio_stream_close": (st, [P]),
            "npyio_map_open_path": (st, [ctypes.c_char_p, u32, P, PP]),
            "npyio_map_data": (P, [P]),
            "npyio_map_header": (P, [P]),
            "npyio_map_close": (st, [P]),
            "npyio_npz_open_path": (st, [ctypes.c_char_p, P, PP]),
            "npyio_npz_close": (st, [P]),
            "npyio_npz_count": (sz, [P]),
            "npyio_npz_key": (ctypes.c_char_p, [P, sz]),
            "npyio_npz_name": (ctypes.c_char_p, [P, sz]),
            "npyio_npz_find": (st, [P, ctypes.c_char_p, ctypes.POINTER(sz),
                                    ctypes.POINTER(ctypes.c_int)]),
            "npyio_reader_open_member": (st, [P, sz, PP]),
            "npyio_npz_verify": (st, [P, sz]),
            "npyio_npz_load": (st, [P, sz, PP, ctypes.POINTER(sz),
                                    ctypes.c_char_p, sz,
                                    ctypes.POINTER(ctypes.c_int),
                                    ctypes.POINTER(ctypes.c_int64), sz]),
            "npyio_npz_load_as": (st, [P, sz, ctypes.c_char_p, u32, PP,
                                       ctypes.POINTER(sz),
                                       ctypes.POINTER(ctypes.c_int),
                                       ctypes.POINTER(ctypes.c_int64), sz]),
            "npyio_load_as": (st, [ctypes.c_char_p, ctypes.c_char_p, u32, P,
                                   PP, ctypes.POINTER(sz),
                                   ctypes.POINTER(ctypes.c_int),
                                   ctypes.POINTER(ctypes.c_int64), sz]),
            "npyio_reader_set_type": (st, [P, ctypes.c_char_p, u32]),
            "npyio_npz_writer_create_path": (st, [ctypes.c_char_p, u32, P, PP]),
            "npyio_npz_writer_add_with_header": (st, [P, ctypes.c_char_p, P,
                                                      ctypes.c_char_p, sz,
                                                      ctypes.c_int, u32]),
            "npyio_npz_writer_close": (st, [P]),
        }
        for fname, (restype, argtypes) in protos.items():
            fn = getattr(lib, fname)
            fn.restype = restype
            fn.argtypes = argtypes
        self.READ = ctypes.CFUNCTYPE(ctypes.c_int, P, P, sz, ctypes.POINTER(sz))
        self.WRITE = ctypes.CFUNCTYPE(ctypes.c_int, P, P, sz, ctypes.POINTER(sz))
        self.SEEK = ctypes.CFUNCTYPE(ctypes.c_int, P, i64, ctypes.c_int,
                                     ctypes.POINTER(i64))
        self.CLOSE = ctypes.CFUNCTYPE(ctypes.c_int, P)

        class Ops(ctypes.Structure):
            _fields_ = [("size", sz), ("read", self.READ),
                        ("write", self.WRITE), ("seek", self.SEEK),
                        ("close", self.CLOSE)]
        self.Ops = Ops
        # The whole 1.0 table, optional members included.
        self.FILE_MEMBERS = {
            "pread": ctypes.CFUNCTYPE(ctypes.c_int, P, P, sz, i64,
                                      ctypes.POINTER(sz)),
            "pwrite": ctypes.CFUNCTYPE(ctypes.c_int, P, P, sz, i64,
                                       ctypes.POINTER(sz)),
            "length": ctypes.CFUNCTYPE(ctypes.c_int, P, ctypes.POINTER(i64)),
            "truncate": ctypes.CFUNCTYPE(ctypes.c_int, P, i64),
            "sync": ctypes.CFUNCTYPE(ctypes.c_int, P, ctypes.c_int),
            "lock": ctypes.CFUNCTYPE(ctypes.c_int, P, ctypes.c_int,
                                     ctypes.c_int),
        }

        class FileOps(ctypes.Structure):
            _fields_ = Ops._fields_ + list(self.FILE_MEMBERS.items())
        self.FileOps = FileOps
        for fname, args in (
                ("npyio_writer_open_append_stream", [P, P, u32, P, PP]),
                ("npyio_writer_open_in_place_stream", [P, u32, P, PP]),
                ("npyio_writer_write_rows", [P, i64, i64, ctypes.c_char_p,
                                             sz]),
                ("npyio_npz_open_stream", [P, P, PP])):
            getattr(lib, fname).restype = st
            getattr(lib, fname).argtypes = args

    def has_function(self, fname):
        return hasattr(self.lib, fname)

    def text(self, fname, *args):
        value = getattr(self.lib, fname)(*args)
        return None if value is None else value.decode()

    def new_handle(self, fname, *args):
        out = ctypes.c_void_p()
        status = getattr(self.lib, fname)(*args, ctypes.byref(out))
        return status, out.value

    def dtype_descr(self, dtype):
        need = ctypes.c_size_t()
        status = self.lib.npyio_dtype_descr(dtype, None, 0, ctypes.byref(need))
        buf = ctypes.create_string_buffer(need.value + 1)
        status2 = self.lib.npyio_dtype_descr(dtype, buf, need.value + 1,
                                             ctypes.byref(need))
        return status, status2, buf.value.decode()

    def header_new(self, dtype, shape, fortran):
        dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        return self.new_handle("npyio_header_new", dtype, len(shape), dims,
                               int(fortran))

    def load(self, path, flags, options=None):
        header, data = ctypes.c_void_p(), ctypes.c_void_p()
        status = self.lib.npyio_load_with_header(path.encode(), flags, options,
                                     ctypes.byref(header), ctypes.byref(data))
        if status != self.C["NPYIO_OK"]:
            return status, None, None
        nbytes = self.lib.npyio_header_nbytes(header)
        return status, header.value, (ctypes.string_at(data, nbytes), data)

    def reader_read(self, reader, nbytes, flags):
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        status = self.lib.npyio_reader_read(reader, buf, nbytes, flags)
        return status, buf.raw[:nbytes]

    def open_ops_stream(self, read=None, write=None, seek=None):
        """A stream over Python callbacks (see stream_callbacks); None for
        those the stream has not."""
        c_read, c_write, c_seek = stream_callbacks(
            read, write, seek, put=lambda buf, data: ctypes.memmove(
                buf, data, len(data)), take=ctypes.string_at)
        ops = self.Ops(ctypes.sizeof(self.Ops),
                       self.READ(c_read) if read else self.READ(),
                       self.WRITE(c_write) if write else self.WRITE(),
                       self.SEEK(c_seek) if seek else self.SEEK(),
                       self.CLOSE())
        status, stream = self.new_handle("npyio_stream_open_ops",
                                         ctypes.byref(ops), None, None)
        return status, stream, ops  # ops keeps the callbacks alive

    def open_file_stream(self, f):
        """A stream over a Python file object with every member but lock."""
        calls = file_callbacks(f, put=lambda buf, data: ctypes.memmove(
            buf, data, len(data)), take=ctypes.string_at)
        kinds = dict(read=self.READ, write=self.WRITE, seek=self.SEEK,
                     **self.FILE_MEMBERS)
        ops = self.FileOps(size=ctypes.sizeof(self.FileOps),
                           **{name: kinds[name](fn)
                              for name, fn in calls.items()})
        status, stream = self.new_handle("npyio_stream_open_ops",
                                         ctypes.byref(ops), None, None)
        return status, stream, ops

    def npz_find(self, npz, key):
        index, ambiguous = ctypes.c_size_t(), ctypes.c_int()
        status = self.lib.npyio_npz_find(npz, key.encode(),
                                         ctypes.byref(index),
                                         ctypes.byref(ambiguous))
        return status, index.value, ambiguous.value

    def loaded(self, status, data, length, ndim, shape, type_buf=None):
        """(status, (type or None, shape), (bytes, pointer)) of a one-call
        load with outputs data, len, ndim, shape."""
        if status != self.C["NPYIO_OK"]:
            return status, None, None
        dims = tuple(shape[i] for i in range(ndim.value))
        text = type_buf.value.decode() if type_buf is not None else None
        return status, (text, dims), (ctypes.string_at(data, length.value),
                                      data)

    def npz_load(self, npz, index, type_cap=64):
        data, length = ctypes.c_void_p(), ctypes.c_size_t()
        ndim, shape = ctypes.c_int(), (ctypes.c_int64 * 64)()
        type_buf = ctypes.create_string_buffer(type_cap)
        status = self.lib.npyio_npz_load(npz, index, ctypes.byref(data),
                                         ctypes.byref(length), type_buf,
                                         type_cap, ctypes.byref(ndim), shape,
                                         64)
        return self.loaded(status, data, length, ndim, shape, type_buf)

    def npz_load_as(self, npz, index, type_text, flags):
        data, length = ctypes.c_void_p(), ctypes.c_size_t()
        ndim, shape = ctypes.c_int(), (ctypes.c_int64 * 64)()
        status = self.lib.npyio_npz_load_as(npz, index, type_text.encode(),
                                            flags, ctypes.byref(data),
                                            ctypes.byref(length),
                                            ctypes.byref(ndim), shape, 64)
        return self.loaded(status, data, length, ndim, shape)

    def load_as(self, path, type_text, flags):
        data, length = ctypes.c_void_p(), ctypes.c_size_t()
        ndim, shape = ctypes.c_int(), (ctypes.c_int64 * 64)()
        status = self.lib.npyio_load_as(path.encode(), type_text.encode(),
                                        flags, None, ctypes.byref(data),
                                        ctypes.byref(length),
                                        ctypes.byref(ndim), shape, 64)
        return self.loaded(status, data, length, ndim, shape)

    def map_view(self, amap):
        """The mapped data as a writable ctypes array of bytes."""
        header = self.lib.npyio_map_header(amap)
        nbytes = self.lib.npyio_header_nbytes(header)
        return (ctypes.c_char * nbytes).from_address(
            self.lib.npyio_map_data(amap))


class CffiBinding(Binding):
    """cffi in ABI mode: the cdef file fed whole to ffi.cdef(), constants
    and prototypes from it."""
    name = "cffi"

    def __init__(self, libpath, cdef_text):
        import cffi
        self.ffi = ffi = cffi.FFI()
        ffi.cdef(cdef_text)
        self.lib = lib = ffi.dlopen(libpath)
        self.NULL = ffi.NULL
        # Constants as cffi parsed them (they must agree with the file).
        self.C = Constants((name, getattr(lib, name))
                           for name in cdef_constants(cdef_text))

    def has_function(self, fname):
        try:
            getattr(self.lib, fname)
        except AttributeError:
            return False
        return True

    def text(self, fname, *args):
        value = getattr(self.lib, fname)(*args)
        return None if value == self.ffi.NULL else self.ffi.string(value).decode()

    def new_handle(self, fname, *args):
        # The out parameter's type (npyio_reader ** ...) from cffi's own
        # parse of the cdef.
        fn = getattr(self.lib, fname)
        out = self.ffi.new(self.ffi.typeof(fn).args[-1])
        status = fn(*args, out)
        return status, (out[0] if out[0] != self.ffi.NULL else None)

    def dtype_descr(self, dtype):
        need = self.ffi.new("size_t *")
        status = self.lib.npyio_dtype_descr(dtype, self.ffi.NULL, 0, need)
        buf = self.ffi.new("char[]", need[0] + 1)
        status2 = self.lib.npyio_dtype_descr(dtype, buf, need[0] + 1, need)
        return status, status2, self.ffi.string(buf).decode()

    def header_new(self, dtype, shape, fortran):
        dims = self.ffi.new("int64_t[]", list(shape) or [0])
        return self.new_handle("npyio_header_new", dtype, len(shape), dims,
                               int(fortran))

    def load(self, path, flags, options=None):
        header = self.ffi.new("npyio_header **")
        data = self.ffi.new("void **")
        status = self.lib.npyio_load_with_header(path.encode(), flags,
                                     options or self.ffi.NULL, header, data)
        if status != self.lib.NPYIO_OK:
            return status, None, None
        nbytes = self.lib.npyio_header_nbytes(header[0])
        return status, header[0], (bytes(self.ffi.buffer(data[0], nbytes)),
                                   data[0])

    def reader_read(self, reader, nbytes, flags):
        buf = self.ffi.new("char[]", max(nbytes, 1))
        status = self.lib.npyio_reader_read(reader, buf, nbytes, flags)
        return status, bytes(self.ffi.buffer(buf, nbytes))

    def open_ops_stream(self, read=None, write=None, seek=None):
        ffi = self.ffi
        keep = []

        def callback(ctype, fn):
            if fn is None:
                return ffi.NULL
            keep.append(ffi.callback(ctype, fn))
            return keep[-1]

        c_read, c_write, c_seek = stream_callbacks(
            read, write, seek, put=lambda buf, data: ffi.memmove(
                buf, data, len(data)), take=lambda buf, n: bytes(ffi.buffer(buf, n)))
        ops = ffi.new("npyio_stream_ops *")
        ops.size = ffi.sizeof("npyio_stream_ops")
        ops.read = callback("int(void *, void *, size_t, size_t *)",
                            c_read if read else None)
        ops.write = callback("int(void *, const void *, size_t, size_t *)",
                             c_write if write else None)
        ops.seek = callback("int(void *, int64_t, int, int64_t *)",
                            c_seek if seek else None)
        status, stream = self.new_handle("npyio_stream_open_ops", ops,
                                         ffi.NULL, ffi.NULL)
        return status, stream, (ops, keep)

    def open_file_stream(self, f):
        ffi = self.ffi
        calls = file_callbacks(f, put=lambda buf, data: ffi.memmove(
            buf, data, len(data)), take=lambda buf, n: bytes(
                ffi.buffer(buf, n)))
        ops = ffi.new("npyio_stream_ops *")
        ops.size = ffi.sizeof("npyio_stream_ops")
        keep = []
        for name, fn in calls.items():
            # The member's C type, from cffi's own parse of the cdef.
            ctype = ffi.typeof(getattr(ops, name))
            keep.append(ffi.callback(ctype, fn))
            setattr(ops, name, keep[-1])
        status, stream = self.new_handle("npyio_stream_open_ops", ops,
                                         ffi.NULL, ffi.NULL)
        return status, stream, (ops, keep)

    def npz_find(self, npz, key):
        index = self.ffi.new("size_t *")
        ambiguous = self.ffi.new("int *")
        status = self.lib.npyio_npz_find(npz, key.encode(), index, ambiguous)
        return status, index[0], ambiguous[0]

    def outputs(self):
        return (self.ffi.new("void **"), self.ffi.new("size_t *"),
                self.ffi.new("int *"), self.ffi.new("int64_t[64]"))

    def loaded(self, status, out, type_buf=None):
        data, length, ndim, shape = out
        if status != self.lib.NPYIO_OK:
            return status, None, None
        dims = tuple(shape[i] for i in range(ndim[0]))
        text = self.ffi.string(type_buf).decode() if type_buf else None
        return status, (text, dims), (bytes(self.ffi.buffer(data[0],
                                                            length[0])),
                                      data[0])

    def npz_load(self, npz, index, type_cap=64):
        out = self.outputs()
        type_buf = self.ffi.new("char[]", type_cap)
        status = self.lib.npyio_npz_load(npz, index, out[0], out[1], type_buf,
                                         type_cap, out[2], out[3], 64)
        return self.loaded(status, out, type_buf)

    def npz_load_as(self, npz, index, type_text, flags):
        out = self.outputs()
        status = self.lib.npyio_npz_load_as(npz, index, type_text.encode(),
                                            flags, *out, 64)
        return self.loaded(status, out)

    def load_as(self, path, type_text, flags):
        out = self.outputs()
        status = self.lib.npyio_load_as(path.encode(), type_text.encode(),
                                        flags, self.ffi.NULL, *out, 64)
        return self.loaded(status, out)

    def map_view(self, amap):
        header = self.lib.npyio_map_header(amap)
        nbytes = self.lib.npyio_header_nbytes(header)
        return self.ffi.buffer(self.lib.npyio_map_data(amap), nbytes)


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

class Checks(Tally):
    def __init__(self, binding, workdir):
        super().__init__()
        self.b = binding
        self.C = binding.C
        self.workdir = workdir

    def check(self, ok, what):
        return super().check(ok, "[%s] %s" % (self.b.name, what))

    def path(self, name):
        return os.path.join(self.workdir, name)

    def expect_status(self, got, name, what):
        return self.check(got == self.C[name], "%s: status %r, want %s (%r)"
                          % (what, got, name, self.C[name]))

    def expect_message(self, fragments, what):
        message = self.b.text("npyio_last_error") or ""
        for fragment in fragments:
            self.check(fragment in message, "%s: message %r does not name %r"
                       % (what, message, fragment))
        return message


def check_coverage(t, cdef_text, header_text):
    """The cdef file declares every constant and function of npyio.h, and
    the library exports each function."""
    constants, functions = header_names(header_text)
    in_cdef = set(cdef_constants(cdef_text))
    t.check(constants == in_cdef,
            "constants of npyio.h not in the cdef file: %s; in the cdef file "
            "but not npyio.h: %s" % (sorted(constants - in_cdef),
                                     sorted(in_cdef - constants)))
    t.check(len(functions) > 50, "found only %d functions in npyio.h"
            % len(functions))
    declared = set(re.findall(r"\b(npyio_\w+)\(", cdef_text))
    t.check(functions <= declared, "functions of npyio.h missing from the "
            "cdef file: %s" % sorted(functions - declared))
    missing = sorted(f for f in functions if not t.b.has_function(f))
    t.check(not missing, "functions %s cannot be called through %s"
            % (missing, t.b.name))


def check_version(t, modversion):
    C = t.C
    number = t.b.call("npyio_version_number")
    t.check(number == C["NPYIO_VERSION_NUMBER"] == C["NPYIO_VERSION_MAJOR"]
            * 10000 + C["NPYIO_VERSION_MINOR"] * 100 + C["NPYIO_VERSION_PATCH"],
            "npyio_version_number() %r, cdef constants %r" % (number, C))
    text = t.b.text("npyio_version_string")
    t.check(text == modversion, "npyio_version_string() %r, pkg-config "
            "--modversion %r" % (text, modversion))


def check_statuses(t):
    names = sorted(n for n in t.C if n.startswith("NPYIO_E_"))
    t.check(len(names) >= 13, "only %d error statuses in the cdef file: %s"
            % (len(names), names))
    texts = {}
    for name in names + ["NPYIO_OK"]:
        text = t.b.text("npyio_status_string", t.C[name])
        texts.setdefault(text, []).append(name)
    t.check(len(texts) == len(names) + 1 and all(texts),
            "npyio_status_string gives the same or empty texts: %r" % texts)
    t.check(all(t.C[n] < 0 for n in names), "error statuses not negative")

    missing = t.path("no-such-file.npy")
    status, reader = t.b.new_handle("npyio_reader_open_path",
                                    missing.encode(), t.b.NULL)
    t.expect_status(status, "NPYIO_E_NOT_FOUND", "opening a missing file")
    t.check(reader is None, "a failed open gives a handle")
    t.expect_message(["npyio_reader_open_path", missing], "missing file")

    status, options = t.b.new_handle("npyio_options_new")
    t.expect_status(status, "NPYIO_OK", "npyio_options_new")
    unknown = max(v for n, v in t.C.items() if n.startswith("NPYIO_LIMIT_")) + 1
    status = t.b.call("npyio_options_set_limit", options, unknown, 1)
    t.expect_status(status, "NPYIO_E_INVALID_ARG", "an unknown limit")
    t.expect_message(["npyio_options_set_limit", str(unknown)], "unknown limit")
    t.b.call("npyio_options_free", options)


def check_limit(t):
    """NPYIO_LIMIT_NDIM, set through its constant, refuses a 3-d file."""
    path = t.path("cube.npy")
    np.save(path, np.zeros((2, 3, 4), dtype="<i4"))
    status, options = t.b.new_handle("npyio_options_new")
    status = t.b.call("npyio_options_set_limit", options,
                      t.C["NPYIO_LIMIT_NDIM"], 2)
    t.expect_status(status, "NPYIO_OK", "setting NPYIO_LIMIT_NDIM")
    status, header, data = t.b.load(path, 0, options)
    t.expect_status(status, "NPYIO_E_LIMIT", "a 3-d file under ndim limit 2")
    t.expect_message(["npyio_load_with_header", "3"], "ndim limit")
    status, header, data = t.b.load(path, 0)
    if t.expect_status(status, "NPYIO_OK", "a 3-d file without the limit"):
        t.b.call("npyio_header_free", header)
        t.b.free_data(data)
    t.b.call("npyio_options_free", options)


def sample_arrays():
    rng = np.random.default_rng(20261202)
    record = np.dtype([("id", "<i4"), ("pos", ">f8", (2,)),
                       ("tag", "S3"), ("inner", [("u", "<u2"), ("c", ">c8")])])
    rec = np.zeros(4, dtype=record)
    rec["id"] = np.arange(4)
    rec["pos"] = rng.standard_normal((4, 2))
    rec["tag"] = [b"a", b"bc", b"def", b""]
    rec["inner"]["u"] = [1, 2, 65535, 7]
    rec["inner"]["c"] = rng.standard_normal(4) + 1j
    return [
        ("f8_c", rng.standard_normal((3, 5)), "NPYIO_KIND_FLOAT"),
        ("i2_be_f", np.asfortranarray(
            rng.integers(-30000, 30000, (4, 3)).astype(">i2")), "NPYIO_KIND_INT"),
        ("u8_0d", np.array(2**63 + 5, dtype="<u8"), "NPYIO_KIND_UINT"),
        ("bool", rng.integers(0, 2, 9).astype(bool), "NPYIO_KIND_BOOL"),
        ("str", np.array(["", "ab", "\u00e9t\u00e9", "\U0001F600x"]),
         "NPYIO_KIND_STR"),
        ("dt", np.array(["2026-12-02T23", "NaT"], dtype="M8[h]"),
         "NPYIO_KIND_DATETIME"),
        ("record", rec, "NPYIO_KIND_RECORD"),
        ("empty", np.zeros((0, 3), dtype="<f4"), "NPYIO_KIND_FLOAT"),
    ]


def native_c_bytes(array):
    native = array.dtype.newbyteorder("=")
    return np.ascontiguousarray(array.astype(native)).tobytes()


def check_write(t, label, array, kind):
    """npyio_save_with_header of the array's bytes under a header built from its descr:
    the file equals np.save's byte for byte and loads equal."""
    from numpy.lib import format as npf
    descr = repr(npf.dtype_to_descr(array.dtype)).encode()
    status, dtype = t.b.new_handle("npyio_dtype_parse", descr,
                                   len(descr), t.b.NULL)
    if not t.expect_status(status, "NPYIO_OK", "%s: dtype from %s"
                           % (label, descr)):
        return
    got_kind = t.b.call("npyio_dtype_kind", dtype)
    t.check(got_kind == t.C[kind], "%s: kind %r, want %s" % (label, got_kind, kind))
    small, status, text = t.b.dtype_descr(dtype)
    t.expect_status(small, "NPYIO_E_BUFFER_TOO_SMALL", "%s: descr into 0 bytes"
                    % label)
    t.check(status == t.C["NPYIO_OK"] and text == descr.decode(),
            "%s: npyio_dtype_descr %r, NumPy %r" % (label, text, descr))
    fortran = array.flags.f_contiguous and not array.flags.c_contiguous
    status, header = t.b.header_new(dtype, array.shape, fortran)
    t.b.call("npyio_dtype_unref", dtype)
    if not t.expect_status(status, "NPYIO_OK", "%s: header" % label):
        return
    ours, theirs = t.path(label + ".ours.npy"), t.path(label + ".numpy.npy")
    data = array.tobytes(order="F" if fortran else "C")
    status = t.b.call("npyio_save_with_header", ours.encode(), header, data, len(data),
                      0, t.b.NULL)
    t.b.call("npyio_header_free", header)
    if not t.expect_status(status, "NPYIO_OK", "%s: npyio_save_with_header" % label):
        return
    np.save(theirs, array)
    with open(ours, "rb") as f1, open(theirs, "rb") as f2:
        t.check(f1.read() == f2.read(), "%s: npyio_save_with_header's file differs from "
                "np.save's" % label)
    back = np.load(ours)
    t.check(back.dtype == array.dtype and back.shape == array.shape
            and back.tobytes() == array.tobytes(),
            "%s: NumPy loads npyio_save_with_header's file differently" % label)


def check_read(t, label, array):
    """npyio_load_with_header of NumPy's file: as stored, and native C order."""
    path = t.path(label + ".numpy.npy")
    np.save(path, array)
    fortran = array.flags.f_contiguous and not array.flags.c_contiguous
    stored = array.tobytes(order="F" if fortran else "C")
    native_c = array.astype(array.dtype.newbyteorder("="), order="C")
    for flags, want in ((0, stored),
                        (t.C["NPYIO_READ_NATIVE"] | t.C["NPYIO_READ_C_ORDER"],
                         native_c_bytes(array))):
        status, header, data = t.b.load(path, flags)
        if not t.expect_status(status, "NPYIO_OK", "%s: npyio_load_with_header flags %d"
                               % (label, flags)):
            continue
        t.check(t.b.header_shape(header) == array.shape,
                "%s: shape %r, NumPy %r" % (label, t.b.header_shape(header),
                                            array.shape))
        t.check(bool(t.b.call("npyio_header_is_fortran_order", header)) ==
                (fortran and flags == 0), "%s: fortran_order" % label)
        t.check(data[0] == want, "%s: npyio_load_with_header flags %d gives other bytes "
                "than NumPy" % (label, flags))
        # The header handed back describes the bytes handed back: saved
        # together, they make the file np.save makes of what NumPy loaded.
        copy = t.path("%s.resaved-%d.npy" % (label, flags))
        status = t.b.call("npyio_save_with_header", copy.encode(), header, data[0],
                          len(data[0]), t.C["NPYIO_WRITE_NO_SYNC"], t.b.NULL)
        expected = t.path("%s.expected-%d.npy" % (label, flags))
        np.save(expected, array if flags == 0 else native_c)
        with open(copy, "rb") as f1, open(expected, "rb") as f2:
            t.check(status == t.C["NPYIO_OK"] and f1.read() == f2.read(),
                    "%s: load flags %d then save is not np.save's file"
                    % (label, flags))
        t.b.call("npyio_header_free", header)
        t.b.free_data(data)


def check_callback_streams(t):
    """A reader and a writer over Python callbacks; a failing callback."""
    array = np.arange(1000, dtype=">f8").reshape(20, 50)
    path = t.path("callback.numpy.npy")
    np.save(path, array)
    with open(path, "rb") as f:
        file_bytes = f.read()

    pos = [0]

    def read(cap):
        cap = min(cap, 333)  # short reads: the library must loop
        chunk = file_bytes[pos[0]:pos[0] + cap]
        pos[0] += len(chunk)
        return chunk

    def seek(offset, whence):
        base = {t.C["NPYIO_SEEK_SET"]: 0, t.C["NPYIO_SEEK_CUR"]: pos[0],
                t.C["NPYIO_SEEK_END"]: len(file_bytes)}.get(whence)
        if base is None or base + offset < 0:
            return None
        pos[0] = base + offset
        return pos[0]

    status, stream, keep = t.b.open_ops_stream(read=read, seek=seek)
    if t.expect_status(status, "NPYIO_OK", "npyio_stream_open_ops (read)"):
        status, reader = t.b.new_handle("npyio_reader_open_stream", stream, t.b.NULL)
        if t.expect_status(status, "NPYIO_OK", "reader over callbacks"):
            status, got = t.b.reader_read(reader, array.nbytes,
                                          t.C["NPYIO_READ_NATIVE"])
            t.expect_status(status, "NPYIO_OK", "reading through callbacks")
            t.check(got == native_c_bytes(array),
                    "callback reader: other bytes than NumPy's")
            t.b.call("npyio_reader_close", reader)
        t.b.call("npyio_stream_close", stream)

    written = []

    def write(data):
        written.append(data[:100])  # short writes: the library must loop
        return len(written[-1])

    status, stream, keep = t.b.open_ops_stream(write=write)
    if t.expect_status(status, "NPYIO_OK", "npyio_stream_open_ops (write)"):
        status, reader = t.b.new_handle("npyio_reader_open_path",
                                        path.encode(), t.b.NULL)
        header = t.b.call("npyio_reader_header", reader)
        status, writer = t.b.new_handle("npyio_writer_create_stream", stream,
                                        header, 0, t.b.NULL)
        if t.expect_status(status, "NPYIO_OK", "writer over callbacks"):
            t.expect_status(t.b.writer_write(writer, array.tobytes()),
                            "NPYIO_OK", "writing through callbacks")
            t.expect_status(t.b.call("npyio_writer_close", writer), "NPYIO_OK",
                            "closing the callback writer")
            t.check(b"".join(written) == file_bytes,
                    "callback writer: other bytes than np.save's")
        t.b.call("npyio_reader_close", reader)
        t.b.call("npyio_stream_close", stream)

    served = [0]

    def failing_read(cap):
        if served[0] >= 200:  # the header, then a failure in the data
            return None
        chunk = file_bytes[served[0]:served[0] + min(cap, 200 - served[0])]
        served[0] += len(chunk)
        return chunk

    status, stream, keep = t.b.open_ops_stream(read=failing_read)
    status, reader = t.b.new_handle("npyio_reader_open_stream", stream, t.b.NULL)
    if t.expect_status(status, "NPYIO_OK", "reader over a failing callback"):
        status, _ = t.b.reader_read(reader, array.nbytes, 0)
        t.expect_status(status, "NPYIO_E_IO", "a failing read callback")
        t.expect_message(["npyio_reader_read: ", "read callback"],
                         "failing read callback")
        t.b.call("npyio_reader_close", reader)
    t.b.call("npyio_stream_close", stream)


def check_file_object(t):
    """A binding's file object does what a path does (but mapping): rows
    appended and written in place through npyio_stream_ops' positioned
    members, and an archive's members read through pread."""
    base = np.arange(6, dtype="=f8").reshape(2, 3)
    path = t.path("file_object.npy")
    np.save(path, base)
    row = np.array([[7.0, 8.0, 9.0]], dtype="=f8")
    status, dtype = t.b.new_handle("npyio_dtype_parse", b"=f8", 3, t.b.NULL)
    status, rows = t.b.header_new(dtype, (1, 3), False)
    t.b.call("npyio_dtype_unref", dtype)
    with open(path, "r+b") as f:
        status, stream, keep = t.b.open_file_stream(f)
        t.expect_status(status, "NPYIO_OK", "a stream over a file object")
        status, writer = t.b.new_handle("npyio_writer_open_append_stream",
                                        stream, rows, 0, t.b.NULL)
        if t.expect_status(status, "NPYIO_OK", "append through a file object"):
            t.expect_status(t.b.writer_write(writer, row.tobytes()),
                            "NPYIO_OK", "appended row")
            t.expect_status(t.b.call("npyio_writer_close", writer),
                            "NPYIO_OK", "append closed")
        status, writer = t.b.new_handle("npyio_writer_open_in_place_stream",
                                        stream, 0, t.b.NULL)
        if t.expect_status(status, "NPYIO_OK", "rows in place, file object"):
            status = t.b.call("npyio_writer_write_rows", writer, 0, 1,
                              (-row).tobytes(), 24)
            t.expect_status(status, "NPYIO_OK", "row 0 written in place")
            t.expect_status(t.b.call("npyio_writer_close", writer),
                            "NPYIO_OK", "in-place writer closed")
        t.b.call("npyio_stream_close", stream)
    t.b.call("npyio_header_free", rows)
    want = np.concatenate([-row, base[1:], row])
    got = np.load(path)
    t.check(got.shape == (3, 3) and np.array_equal(got, want),
            "file object: np.load gives %r, want %r" % (got, want))
    npz_path = t.path("file_object.npz")
    np.savez_compressed(npz_path, a=base, b=row)
    with open(npz_path, "r+b") as f:
        status, stream, keep = t.b.open_file_stream(f)
        status, npz = t.b.new_handle("npyio_npz_open_stream", stream,
                                     t.b.NULL)
        if t.expect_status(status, "NPYIO_OK", "archive over a file object"):
            for index, want in enumerate((base, row)):
                status, _, data = t.b.npz_load_as(npz, index, "=f8", 0)
                t.check(status == t.C["NPYIO_OK"] and
                        data[0] == want.tobytes(),
                        "file object archive member %d" % index)
                if data:
                    t.b.free_data(data)
            t.b.call("npyio_npz_close", npz)
        t.b.call("npyio_stream_close", stream)


def check_map(t):
    array = np.arange(24, dtype="<i4").reshape(4, 6)
    path = t.path("map.npy")
    np.save(path, array)
    status, amap = t.b.new_handle("npyio_map_open_path", path.encode(),
                                  0, t.b.NULL)
    if t.expect_status(status, "NPYIO_OK", "npyio_map_open_path read-only"):
        t.check(bytes(t.b.map_view(amap)) == array.tobytes(),
                "read-only map: other bytes than NumPy's")
        t.b.call("npyio_map_close", amap)
    status, amap = t.b.new_handle("npyio_map_open_path", path.encode(),
                                  t.C["NPYIO_MAP_WRITE"], t.b.NULL)
    if t.expect_status(status, "NPYIO_OK", "npyio_map_open_path read-write"):
        view = t.b.map_view(amap)
        view[0:4] = np.array([-7], dtype="<i4").tobytes()
        t.expect_status(t.b.call("npyio_map_close", amap), "NPYIO_OK",
                        "closing the read-write map")
        t.check(np.load(path)[0, 0] == -7, "a write through the map did not "
                "reach the file")


def npz_arrays():
    """Keys as np.savez takes them (a non-ASCII one, one ending in .npy)
    and the sample arrays."""
    keys = ["plain", "caf\u00e9", "x.npy"]
    arrays = [array for _, array, _ in sample_arrays()]
    keys += ["a%d" % i for i in range(len(arrays) - len(keys))]
    return dict(zip(keys, arrays))


def check_npz_read(t):
    """NumPy's archives, stored and deflated, through the NPZ API: the
    keys in order, each array by key (reader, npyio_npz_load with its type
    and shape, npyio_npz_load_as) equal to NumPy's, verify, and a missing
    key named."""
    arrays = npz_arrays()
    for how, save in (("savez", np.savez),
                      ("savez_compressed", np.savez_compressed)):
        path = t.path(how + ".npz")
        save(path, **arrays)
        status, npz = t.b.new_handle("npyio_npz_open_path", path.encode(),
                                     t.b.NULL)
        if not t.expect_status(status, "NPYIO_OK", "%s: open" % how):
            continue
        count = t.b.call("npyio_npz_count", npz)
        keys = [t.b.text("npyio_npz_key", npz, i) for i in range(count)]
        with np.load(path) as z:
            t.check(keys == z.files, "%s: keys %r, NumPy %r"
                    % (how, keys, z.files))
        names = [t.b.text("npyio_npz_name", npz, i) for i in range(count)]
        t.check(names == [k + ".npy" for k in arrays], "%s: member names %r"
                % (how, names))
        flags = t.C["NPYIO_READ_NATIVE"] | t.C["NPYIO_READ_C_ORDER"]
        for key, array in arrays.items():
            status, index, ambiguous = t.b.npz_find(npz, key)
            if not t.expect_status(status, "NPYIO_OK", "%s: find %r"
                                   % (how, key)):
                continue
            t.check(keys[index] == key and ambiguous == 0,
                    "%s: find %r gives %d (%d)" % (how, key, index, ambiguous))
            t.expect_status(t.b.call("npyio_npz_verify", npz, index),
                            "NPYIO_OK", "%s: verify %r" % (how, key))
            status, reader = t.b.new_handle("npyio_reader_open_member", npz,
                                            index)
            if t.expect_status(status, "NPYIO_OK", "%s: reader of %r"
                               % (how, key)):
                status, got = t.b.reader_read(reader, array.nbytes, flags)
                t.check(status == t.C["NPYIO_OK"] and
                        got == native_c_bytes(array),
                        "%s: member %r read other bytes than NumPy's"
                        % (how, key))
                t.b.call("npyio_reader_close", reader)
            status, desc, data = t.b.npz_load(npz, index, 512)
            if t.expect_status(status, "NPYIO_OK", "%s: npz_load %r"
                               % (how, key)):
                native = array.dtype.newbyteorder("=")
                t.check(desc[1] == array.shape and
                        data[0] == native_c_bytes(array) and
                        (native.names is not None or desc[0] == native.str),
                        "%s: npz_load %r differs from NumPy: %r"
                        % (how, key, desc))
                t.b.free_data(data)
            if array.dtype.kind in "biufc" and array.dtype.names is None:
                check_npz_load_as(t, npz, index, array, "%s: %r" % (how, key))
        status, _, _ = t.b.npz_find(npz, "missing")
        t.expect_status(status, "NPYIO_E_NOT_FOUND", "%s: a missing key" % how)
        t.expect_message(["npyio_npz_find", "missing"], "%s: missing key" % how)
        t.expect_status(t.b.call("npyio_npz_close", npz), "NPYIO_OK",
                        "%s: close" % how)


def check_npz_load_as(t, npz, index, array, label):
    """npyio_npz_load_as of a numeric member to c16 (unsafe) and the
    refusal of f8 to i1 under 'safe'."""
    unsafe = t.C["NPYIO_READ_CAST_UNSAFE"]
    want = np.ascontiguousarray(array.astype("=c16", casting="unsafe"))
    status, desc, data = t.b.npz_load_as(npz, index, "c16", unsafe)
    if t.expect_status(status, "NPYIO_OK", "%s: npz_load_as c16" % label):
        t.check(desc[1] == array.shape and data[0] == want.tobytes(),
                "%s: npz_load_as c16 differs from astype" % label)
        t.b.free_data(data)


def check_load_as(t):
    """npyio_load_as and npyio_reader_set_type: NumPy's astype values, the
    casting rule's refusal named, the type set only before reading."""
    array = np.asfortranarray((np.arange(-6, 6).reshape(3, 4) * 1.25)
                              .astype(">f8"))
    path = t.path("load_as.npy")
    np.save(path, array)
    same_kind = t.C["NPYIO_READ_CAST_SAME_KIND"]
    for type_text, flags, rule in (("f4", same_kind, "same_kind"),
                                   (">i2", t.C["NPYIO_READ_CAST_UNSAFE"],
                                    "unsafe"),
                                   ("c16", 0, "safe")):
        want = np.ascontiguousarray(array.astype(type_text, casting=rule))
        status, desc, data = t.b.load_as(path, type_text, flags)
        if t.expect_status(status, "NPYIO_OK", "load_as %s" % type_text):
            t.check(desc[1] == array.shape and data[0] == want.tobytes(),
                    "load_as %s differs from astype" % type_text)
            t.b.free_data(data)
    status, _, _ = t.b.load_as(path, "i4", 0)
    t.expect_status(status, "NPYIO_E_UNSUPPORTED", "load_as i4 safe")
    t.expect_message(["npyio_load_as", "cannot cast '>f8' to '%s' under the "
                      "'safe' rule" % np.dtype("i4").str], "load_as i4 safe")
    status, reader = t.b.new_handle("npyio_reader_open_path", path.encode(),
                                    t.b.NULL)
    if t.expect_status(status, "NPYIO_OK", "reader for set_type"):
        t.expect_status(t.b.call("npyio_reader_set_type", reader, b"<f4",
                                 same_kind), "NPYIO_OK", "set_type <f4")
        status, got = t.b.reader_read(reader, array.size * 4,
                                      t.C["NPYIO_READ_C_ORDER"])
        t.check(status == t.C["NPYIO_OK"] and
                got == np.ascontiguousarray(array.astype("<f4")).tobytes(),
                "reader with type <f4 differs from astype")
        t.expect_status(t.b.call("npyio_reader_set_type", reader, b"<f8", 0),
                        "NPYIO_E_STATE", "set_type after a read")
        t.b.call("npyio_reader_close", reader)


def check_npz_write(t):
    """An archive written through the NPZ API, stored and deflated members
    alternating: np.load reads every array equal under its key, zipfile's
    testzip finds nothing wrong, and a refused key leaves the archive
    usable."""
    import zipfile
    from numpy.lib import format as npf
    arrays = npz_arrays()
    path = t.path("ours.npz")
    status, npz = t.b.new_handle("npyio_npz_writer_create_path", path.encode(),
                                 t.C["NPYIO_WRITE_NO_SYNC"], t.b.NULL)
    if not t.expect_status(status, "NPYIO_OK", "npz_create_path"):
        return
    for n, (key, array) in enumerate(arrays.items()):
        descr = repr(npf.dtype_to_descr(array.dtype)).encode()
        status, dtype = t.b.new_handle("npyio_dtype_parse", descr,
                                       len(descr), t.b.NULL)
        fortran = array.flags.f_contiguous and not array.flags.c_contiguous
        status, header = t.b.header_new(dtype, array.shape, fortran)
        t.b.call("npyio_dtype_unref", dtype)
        data = array.tobytes(order="F" if fortran else "C")
        status = t.b.call("npyio_npz_writer_add_with_header", npz, key.encode(), header,
                          data, len(data), 6 if n % 2 else 0, 0)
        t.expect_status(status, "NPYIO_OK", "npz_add_array %r" % key)
        if n == 0:
            status = t.b.call("npyio_npz_writer_add_with_header", npz, b"../evil", header,
                              data, len(data), 0, 0)
            t.expect_status(status, "NPYIO_E_INVALID_ARG", "a key with ..")
            t.expect_message(["npyio_npz_writer_add_with_header", "../evil"], "bad key")
        t.b.call("npyio_header_free", header)
    t.expect_status(t.b.call("npyio_npz_writer_close", npz), "NPYIO_OK",
                    "npz_writer_close")
    with zipfile.ZipFile(path) as z:
        t.check(z.testzip() is None, "zipfile's testzip finds a bad member")
    with np.load(path) as z:
        t.check(z.files == list(arrays), "np.load keys %r" % z.files)
        for key, array in arrays.items():
            got = z[key]
            t.check(got.dtype == array.dtype and got.shape == array.shape and
                    got.tobytes() == array.tobytes(),
                    "np.load of our member %r differs" % key)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binding", choices=("ctypes", "cffi"), required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    if args.binding == "cffi":
        if importlib.util.find_spec("cffi") is None:
            print("bindings_check.py: cffi is not available to %s (Debian: "
                  "python3-cffi); skipping" % sys.executable)
            return SKIP

    cdef_path = pkg_config(args.prefix, "--variable=cdef")
    libdir = pkg_config(args.prefix, "--variable=libdir")
    includedir = pkg_config(args.prefix, "--variable=includedir")
    print("cdef file: %s" % cdef_path)
    with open(cdef_path) as f:
        cdef_text = f.read()
    with open(os.path.join(includedir, "npyio.h")) as f:
        header_text = f.read()
    os.makedirs(args.workdir, exist_ok=True)

    binding_class = CffiBinding if args.binding == "cffi" else CtypesBinding
    binding = binding_class(os.path.join(libdir, "libnpyio.so.1"), cdef_text)
    t = Checks(binding, args.workdir)
    if args.binding == "cffi":
        file_constants = cdef_constants(cdef_text)
        t.check(binding.C == file_constants, "cffi's constants differ from the "
                "file's: %r" % {n: (binding.C[n], file_constants[n]) for n in
                                file_constants if binding.C[n] != file_constants[n]})
    check_coverage(t, cdef_text, header_text)
    check_version(t, pkg_config(args.prefix, "--modversion"))
    check_statuses(t)
    check_limit(t)
    for label, array, kind in sample_arrays():
        check_write(t, label, array, kind)
        check_read(t, label, array)
    check_callback_streams(t)
    check_file_object(t)
    check_map(t)
    check_npz_read(t)
    check_load_as(t)
    check_npz_write(t)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
