/*
 * error.h - the thread-local error message (error.c): failing with a status and a
 * message, adding context, quoting untrusted text, the first failure
 * kept by a handle, and the argument checks every public call shares.
 */
#ifndef NPYIO_ERROR_H
#define NPYIO_ERROR_H

#include "internal.h"

/* Size of the thread-local message buffer, terminator included. */
#define NPYIO__MESSAGE_CAP 1024

/*
 * Record a failure for the calling thread and return `status`, so a failing
 * path reads `return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: ...", i)`.
 * Messages are "<where>: <what>"; the text is cut to fit, never overrun.
 */
npyio_status npyio__fail(npyio_status status, const char *fmt, ...)
    NPYIO__PRINTF(2, 3);

/* Prefix the thread's current message with `context` ("<context>: ..."),
 * keeping `status`, unless it starts with "<context>: " already (a step
 * given the context as its `where`); NPYIO_OK passes through untouched. */
npyio_status npyio__with_context(npyio_status status, const char *context);

/* At the return of a public function: a failure's message gets the name
 * of the function the caller called in front ("npyio_load_with_header:
 * ..."), unless it starts with it already (its checks name it, and so do
 * internal steps given it as `where`). Nothing strips another name: inside
 * the library no code calls a status-returning public function of another
 * module (abi_internal_calls), so no other public name leads a message.
 * Returns status. */
npyio_status npyio__as_called(npyio_status status, const char *function);

/*
 * Quote untrusted text for a message: printable ASCII as is, every other
 * byte as \xNN, cut to fit with "..." (messages stay valid UTF-8 whatever
 * the input holds). Returns buf.
 */
const char *npyio__show(const void *text, size_t len, char *buf, size_t cap);

/* Length of the UTF-8 sequence at s[0..avail) if it is one that Python's
 * strict decoder accepts (no overlong forms, surrogates or values beyond
 * U+10FFFF), else 0. avail > 0. */
size_t npyio__utf8_sequence(const unsigned char *s, size_t avail);

/* The offset of the first byte of s[0..len) that is NUL or not part of
 * strict UTF-8 (npyio__utf8_sequence), or len if there is none. */
size_t npyio__utf8_invalid_at(const unsigned char *s, size_t len);

/* The message saved around an internal step that may fail and be
 * recovered from, so that a call that succeeds leaves the thread's last
 * failure's message as it was . */
typedef struct npyio__saved_message {
    char text[NPYIO__MESSAGE_CAP];
} npyio__saved_message;
void npyio__message_save(npyio__saved_message *saved);
void npyio__message_restore(const npyio__saved_message *saved);

/* A reader or writer that failed once its bytes began to move stays
 * failed: its first error is kept, and every later call repeats it. */
typedef struct npyio__sticky {
    npyio_status failed; /* NPYIO_OK until the first failure */
    char first_error[NPYIO__MESSAGE_CAP];
} npyio__sticky;
/* Remember st (with the thread's message) if it is the first failure;
 * returns st. */
npyio_status npyio__sticky_fail(npyio__sticky *s, npyio_status st);
/* NPYIO_E_STATE: "<where>: the <handle> failed earlier (<status>:
 * <first message>)". */
npyio_status npyio__sticky_repeat(const npyio__sticky *s, const char *where,
                                  const char *handle);

/* NPYIO_E_INVALID_ARG, naming the first bit of flags that is not in
 * `accepted` and the function `where` refusing it; NPYIO_OK if none. */
npyio_status npyio__check_flags(uint32_t flags, uint32_t accepted,
                                const char *where);

/* NPYIO_E_INVALID_ARG for a path that is NULL ("path is NULL") or empty
 * ("path is empty": "" names no file; refused before any work, where the
 * kernel's ENOENT came only after it, when a save linked its temporary);
 * NPYIO_OK otherwise. */
npyio_status npyio__check_path(const char *path, const char *where);

/* The checks a public function that opens a path starts with: out given
 * ("out is NULL") and the path a name (npyio__check_path), else
 * NPYIO_E_INVALID_ARG naming `where`. Its public wrapper has cleared *out
 * already, as every one does. */
npyio_status npyio__check_opener(const void *out, const char *path,
                                 const char *where);

/* NPYIO_E_INVALID_ARG for rows [first, first + count) outside `total`
 * rows: "WHERE: rows [1, 3) are not within WHOSE 2 rows". The end is
 * computed only where it fits in int64_t (the caller's numbers may be
 * anything): "rows [1, 1 + 9223372036854775807)" otherwise. */
npyio_status npyio__fail_rows(const char *where, int64_t first,
                              int64_t count, int64_t total,
                              const char *whose);

/* Fault injection, for the tests only (tests/unit/test_pathfault.c): the
 * OS calls that take `faults` (NULL: none; platform.h) ask its hook
 * first, by name ("read", "write", "fsync", "rename", ...): 0 makes the
 * call; an errno value fails it with that error (EINTR is then retried as
 * a real one would be); NPYIO__FAULT_SHORT makes a read or write move at
 * most one byte. The hook comes from the caller's npyio_options
 * (internal.h). Here, not in an OS module: every one asks it alike. */
#define NPYIO__FAULT_SHORT (-1)

/* The hook's answer for `call`: nonzero (errno set) to fail it; count, if
 * given, cut to 1 for a short read or write. */
int npyio__faulted(const npyio__faults *faults, const char *call,
                   size_t *count);

/* The one mapping of OS errors (errno values: the Windows module maps its
 * own errors to them first) to statuses: ENOENT and ENOTDIR (no such
 * file, or a file where the path needs a directory) are
 * NPYIO_E_NOT_FOUND, ENOMEM NPYIO_E_NOMEM, all else NPYIO_E_IO. */
npyio_status npyio__status_of_errno(int err);

#endif /* NPYIO_ERROR_H */
