/*
 * reader_core.h - what the reader's three files share: the handle's
 * layout, its states and the reorder block, and the helpers one file
 * lends the others. The files, lowest first (each calls only those before
 * it): reader_rows.c, the data section (the states, positions and bands
 * of rows, the reorder block, reads with a type, rows and chunks);
 * reader_parallel.c, whole reads on several threads; reader.c, the
 * handle's life (open, close, the type) and whole reads. Private to those
 * three; the rest of the library uses reader.h.
 */
#ifndef NPYIO_READER_CORE_H
#define NPYIO_READER_CORE_H

#include "alloc.h"
#include "cast.h"
#include "convert.h"
#include "error.h"
#include "header.h"
#include "stream.h"

#define NPYIO__MAGIC_READER 0x52454144u /* "READ" */

/*
 * Fortran data read in C order a piece at a time (chunks smaller than the
 * block, conversions a cache-sized block at a time) goes through one
 * block of whole rows reordered once: every column run of the file is
 * then read once per block, whatever the size of the pieces, instead of
 * once per piece (a 64 KiB chunk of a 5000 x 5000 array touches 2 rows:
 * 5000 reads of 16 bytes). Rows larger than the block are read piece by
 * piece, as they come.
 */
typedef struct reorder_block {
    bool opened;           /* asked for (it may have none: rows 0) */
    unsigned char *data;
    uint64_t rows;         /* rows it holds at most (0: no block) */
    uint64_t end_row;      /* fills stop before this row */
    uint64_t first, count; /* elements held, in C order */
} reorder_block;

/*
 * Where a reader is in reading its data. The whole read (or the pickle)
 * and the chunked pass are two ways to read the data once: each excludes
 * the other once begun. Rows are read by position, at any time. Every
 * read call consults check_state() before it starts and moves the state
 * when it does; a failure (the sticky error) overrides every state:
 * later reads repeat it.
 */
typedef enum reader_state {
    READER_FRESH,  /* nothing read yet */
    READER_ROWS,   /* rows read by position: the data is still to read */
    READER_CHUNKS, /* a chunked pass begun (with its flags), or ended */
    READER_DONE    /* the data read whole, or its pickle */
} reader_state;

typedef enum read_call { CALL_WHOLE, CALL_CHUNK, CALL_ROWS } read_call;

struct npyio_reader {
    uint32_t magic;
    npyio_stream *stream;
    bool owns_stream; /* opened from a path */
    reader_state state;
    uint32_t pass_flags; /* the chunked pass's flags, in READER_CHUNKS */
    npyio_header *header;
    npyio__mem mem;
    int64_t data_start; /* stream position of the data (seekable) */
    bool length_checked; /* the data section is known to be whole */
    uint64_t data_pos;  /* bytes of the data section consumed so far */
    size_t room;        /* bytes before a whole read's destination the
                           stream may overwrite (read_alloc's block) */
    uint64_t chunk_pos; /* read_chunk's cursor: bytes, or elements
                           reordered */
    /* The chunked pass's converter, made once per pass. */
    bool chunking;
    npyio__converter chunks;
    reorder_block chunk_block; /* its block, if it uses one */
    size_t block_bytes;        /* REORDER_BLOCK_BYTES (tests: less) */
    /* Rows read in sequence: the block (filled with rows_flags), and
     * the row after the last request (see read_rows_blocked in
     * reader_rows.c). */
    reorder_block rows_block;
    uint32_t rows_flags;
    uint64_t rows_next;
    /* A failed read: the first failure, repeated by later reads. */
    npyio__sticky sticky;
    /* npyio_reader_set_type(): every read delivers elements converted
     * by this plan (its target's itemsize, byte order). */
    bool casting;
    npyio__cast_plan cast;
    /* NPYIO_LIMIT_THREADS, as the options held it: whole reads from
     * positioned streams are cut into parts read and converted on the
     * threads npyio__thread_count gives. */
    int64_t thread_limit;
};

/* ---- reader_rows.c: the handle's states and failures ---------------------------- */

/* The stream can seek (asked the first time a read needs to know), and
 * also read at positions (pread). */
bool npyio__reader_seekable(npyio_reader *r);
bool npyio__reader_positioned(npyio_reader *r);

/* A live reader (`where` names the call in the message). */
npyio_status npyio__check_reader(const npyio_reader *r, const char *where);

/* A live reader that has not failed, and no flags but `allowed`. */
npyio_status npyio__check_call(npyio_reader *r, uint32_t flags,
                               uint32_t allowed, const char *where);

/* Checks common to every read of numbers (whole, chunks, rows). */
npyio_status npyio__check_numbers(npyio_reader *r, uint32_t flags,
                                  const char *where);

/* May `call` go on in the reader's state? NPYIO_E_STATE, saying why, if
 * not; and the state a call moves the reader to. */
npyio_status npyio__check_state(const npyio_reader *r, read_call call,
                                uint32_t flags, const char *where);
void npyio__enter_state(npyio_reader *r, read_call call, uint32_t flags);

/* A read that failed after the stream moved leaves the reader failed:
 * st, kept as the sticky error; later reads repeat it. */
npyio_status npyio__fail_reader(npyio_reader *r, npyio_status st);
npyio_status npyio__repeat_failure(const npyio_reader *r, const char *where);

/* The end of a chunked pass (or of the reader): its converter and block
 * go. */
void npyio__end_chunks(npyio_reader *r);

/* ---- reader_rows.c: the data section -------------------------------------------- */

/* Move to `offset` bytes into the data section (on a pipe: forward only). */
npyio_status npyio__seek_data(npyio_reader *r, uint64_t offset);

/* len bytes of data at data offset `at`, by a positioned read (safe on
 * several threads at once; `part`: by that part's job of a read in parts,
 * else NULL); short is truncated. */
npyio_status npyio__pread_data(npyio_reader *r, npyio__stream_part *part,
                               void *buf, size_t len, uint64_t at);

/* Whole elements per block of a swap in cache. */
size_t npyio__block_bytes(size_t itemsize);

/* The converter for one pass with these flags (bands of at most
 * band_rows rows of Fortran data; 0: all), and whether these flags
 * reorder the data. */
npyio_status npyio__make_converter(npyio_reader *r, uint32_t flags,
                                   bool bands, uint64_t band_rows,
                                   npyio__converter *c);
bool npyio__reorders(const npyio_reader *r, uint32_t flags);

/* Rows [first, first + count) of Fortran data into dst, as the converter
 * delivers them. */
npyio_status npyio__read_band(npyio_reader *r, npyio__converter *c,
                              uint64_t first, uint64_t count, void *dst);

/* Elements of the array, and in one row along axis 0. */
uint64_t npyio__element_count(const npyio_header *h);
uint64_t npyio__row_elements(const npyio_header *h);

/* ---- reader_rows.c: the reorder block and reads with a type --------------------- */

/* Rows a block holds (shared by `shares` blocks, at most `rows`); a block
 * of that many rows (0: none) filled with rows before end_row only; its
 * end. */
uint64_t npyio__block_rows(const npyio_reader *r, uint64_t rows,
                           unsigned shares);
void npyio__block_open(npyio_reader *r, uint64_t rows, uint64_t end_row,
                       reorder_block *b);
void npyio__block_close(reorder_block *b);

/* The most rows one block of a conversion touches (a converter's
 * band_rows). */
uint64_t npyio__cast_band_rows(const npyio_reader *r);

/* Elements [pos, pos + n) converted into dst a block at a time through
 * `bounce` (with `part`: with pread, by that part of a read in parts); its
 * bounce buffer; the same at the stream's position with a bounce buffer
 * of its own. */
npyio_status npyio__cast_blocks(npyio_reader *r, npyio__converter *c,
                                bool reorder, npyio__stream_part *part,
                                uint64_t pos, uint64_t n, unsigned char *dst,
                                void *bounce, reorder_block *block);
npyio_status npyio__cast_bounce(npyio_reader *r, uint64_t n, void **bounce);
npyio_status npyio__read_cast(npyio_reader *r, npyio__converter *c,
                              bool reorder, uint64_t pos, uint64_t n,
                              unsigned char *dst, reorder_block *block);

/* Fortran data in C order from a stream that cannot seek: refused. */
npyio_status npyio__refuse_pipe_reorder(const char *where);

/* ---- reader_parallel.c ----------------------------------------------------------- */

/* The whole read on several threads where it can be; *done false: read
 * it on the calling thread. */
npyio_status npyio__read_parallel(npyio_reader *r, uint32_t flags,
                                  const npyio__converter *swap, void *dst,
                                  bool *done);

#endif /* NPYIO_READER_CORE_H */
