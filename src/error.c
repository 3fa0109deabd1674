/*
 * error.c - status codes and the thread-local message of the last failure.
 *
 * The message lives in a fixed buffer per thread (C11 _Thread_local), so
 * recording an error never allocates and cannot itself fail; this is the
 * only per-thread state of the library.
 */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[NPYIO__MESSAGE_CAP];

const char *npyio_status_string(npyio_status status)
{
    switch (status) {
    case NPYIO_OK: return "success";
    case NPYIO_END: return "end of data";
    case NPYIO_E_INVALID_ARG: return "invalid argument";
    case NPYIO_E_NOMEM: return "out of memory";
    case NPYIO_E_IO: return "I/O error";
    case NPYIO_E_FORMAT: return "bad format";
    case NPYIO_E_UNSUPPORTED: return "unsupported feature";
    case NPYIO_E_LIMIT: return "limit exceeded";
    case NPYIO_E_TRUNCATED: return "truncated data";
    case NPYIO_E_NOT_FOUND: return "not found";
    case NPYIO_E_CHECKSUM: return "checksum mismatch";
    case NPYIO_E_STATE: return "wrong state";
    case NPYIO_E_OVERFLOW: return "value too large";
    case NPYIO_E_BUFFER_TOO_SMALL: return "buffer too small";
    case NPYIO_E_LOCKED: return "file locked by another writer";
    default: return "unknown status";
    }
}

const char *npyio_last_error(void)
{
    return last_message;
}

void npyio__message_save(npyio__saved_message *saved)
{
    memcpy(saved->text, last_message, sizeof last_message);
}

void npyio__message_restore(const npyio__saved_message *saved)
{
    memcpy(last_message, saved->text, sizeof last_message);
}

/*
 * A message cut to fit the buffer may end inside a UTF-8 sequence (names
 * from headers are UTF-8); drop the incomplete tail so the message stays
 * valid UTF-8 for bindings that decode it strictly.
 */
static void trim_partial_utf8(char *text, size_t len)
{
    size_t start = len;
    size_t need;
    unsigned char lead;

    /* Find the start of the last sequence: at most 3 continuation bytes. */
    while (start > 0 && len - start < 4 &&
           ((unsigned char)text[start - 1] & 0xC0u) == 0x80u)
        start--;
    if (start == 0)
        return;
    lead = (unsigned char)text[start - 1];
    if (lead < 0xC0u)
        return; /* ASCII (or stray continuation bytes: leave them) */
    need = lead >= 0xF0u ? 4 : lead >= 0xE0u ? 3 : 2;
    if (len - (start - 1) < need)
        text[start - 1] = '\0';
}

npyio_status npyio__fail(npyio_status status, const char *fmt, ...)
{
    va_list args;
    int written;

    char text[NPYIO__MESSAGE_CAP];

    va_start(args, fmt);
    /* Formatted aside first: an argument may be the current message
     * (adding context to a lower layer's error). vsnprintf truncates and
     * terminates; a formatting failure leaves an empty message. */
    written = vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    if (written < 0)
        text[0] = '\0';
    else if ((size_t)written >= sizeof text)
        trim_partial_utf8(text, sizeof text - 1);
    memcpy(last_message, text, sizeof text);
    return status;
}

const char *npyio__show(const void *text, size_t len, char *buf, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = text;
    size_t i, used = 0;

    for (i = 0; i < len; i++) {
        size_t need = s[i] >= 0x20 && s[i] < 0x7F && s[i] != '\\' ? 1 : 4;

        if (used + need + 4 > cap) { /* room for "..." and the NUL */
            memcpy(buf + used, "...", 3);
            used += 3;
            break;
        }
        if (need == 1) {
            buf[used++] = (char)s[i];
        } else {
            buf[used++] = '\\';
            buf[used++] = 'x';
            buf[used++] = hex[s[i] >> 4];
            buf[used++] = hex[s[i] & 15];
        }
    }
    buf[used] = '\0';
    return buf;
}

/* "<name>: <message>", unless the message starts so already (a body
 * given `where` names its caller's call, or the context, itself). */
static npyio_status prefix_once(npyio_status status, const char *name)
{
    size_t n = strlen(name);

    if (strncmp(last_message, name, n) == 0 && last_message[n] == ':' &&
        last_message[n + 1] == ' ')
        return status;
    /* npyio__fail formats aside, so the current message may be an
     * argument. */
    return npyio__fail(status, "%s: %s", name, last_message);
}

npyio_status npyio__with_context(npyio_status status, const char *context)
{
    return status == NPYIO_OK ? status : prefix_once(status, context);
}

npyio_status npyio__as_called(npyio_status status, const char *function)
{
    return status >= NPYIO_OK ? status : prefix_once(status, function);
}

/* Every public flag by name, so that a refusal names the flag it refuses
 * and those the call takes. */
static const struct {
    uint32_t bit;
    const char *name;
} flag_names[] = {
    {NPYIO_READ_NATIVE, "NPYIO_READ_NATIVE"},
    {NPYIO_READ_C_ORDER, "NPYIO_READ_C_ORDER"},
    {NPYIO_READ_CAST_SAME_KIND, "NPYIO_READ_CAST_SAME_KIND"},
    {NPYIO_READ_CAST_UNSAFE, "NPYIO_READ_CAST_UNSAFE"},
    {NPYIO_WRITE_NO_SYNC, "NPYIO_WRITE_NO_SYNC"},
    {NPYIO_WRITE_UNKNOWN_ROWS, "NPYIO_WRITE_UNKNOWN_ROWS"},
    {NPYIO_WRITE_WAIT_FOR_LOCK, "NPYIO_WRITE_WAIT_FOR_LOCK"},
    {NPYIO_WRITE_REPLACE, "NPYIO_WRITE_REPLACE"},
    {NPYIO_MAP_WRITE, "NPYIO_MAP_WRITE"},
    {NPYIO_MAP_SPARSE, "NPYIO_MAP_SPARSE"},
    {NPYIO_NPZ_WRITE_NO_ALIGN, "NPYIO_NPZ_WRITE_NO_ALIGN"},
    {NPYIO_NPZ_WRITE_ZLIB, "NPYIO_NPZ_WRITE_ZLIB"},
    {NPYIO_RECORD_ALIGNED, "NPYIO_RECORD_ALIGNED"},
    {NPYIO_STREAM_READ, "NPYIO_STREAM_READ"},
    {NPYIO_STREAM_WRITE, "NPYIO_STREAM_WRITE"},
};

/* The flag's name and value ("NPYIO_MAP_WRITE (0x100)"), or its value
 * alone for a bit no flag has. */
static void name_flag(uint32_t bit, char *out, size_t cap)
{
    size_t i;

    for (i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flag_names[i].bit == bit) {
            snprintf(out, cap, "%s (0x%x)", flag_names[i].name,
                     (unsigned)bit);
            return;
        }
    snprintf(out, cap, "0x%x", (unsigned)bit);
}

/* The names of the flags in `set`, joined by " | ", or "none". */
static void name_flags(uint32_t set, char *out, size_t cap)
{
    size_t used = 0;
    uint32_t bit;

    snprintf(out, cap, "none");
    for (bit = 1; bit != 0 && used < cap; bit <<= 1) {
        char one[64];

        if ((set & bit) == 0)
            continue;
        name_flag(bit, one, sizeof one);
        used += (size_t)snprintf(out + used, cap - used, "%s%s",
                                 used > 0 ? " | " : "", one);
    }
}

npyio_status npyio__check_flags(uint32_t flags, uint32_t accepted,
                                const char *where)
{
    uint32_t extra = flags & ~accepted;
    char refused[64], takes[512];

    if (extra == 0)
        return NPYIO_OK;
    name_flag(extra & (~extra + 1u), refused, sizeof refused); /* lowest */
    name_flags(accepted, takes, sizeof takes);
    return npyio__fail(NPYIO_E_INVALID_ARG, "%s: flag %s is not one this "
                       "function takes (it takes %s)", where, refused, takes);
}

npyio_status npyio__fail_rows(const char *where, int64_t first,
                              int64_t count, int64_t total,
                              const char *whose)
{
    if ((count >= 0 && first <= INT64_MAX - count) ||
        (count < 0 && first >= INT64_MIN - count))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: rows [%lld, %lld) are "
                           "not within %s %lld rows", where, (long long)first,
                           (long long)(first + count), whose,
                           (long long)total);
    return npyio__fail(NPYIO_E_INVALID_ARG, "%s: rows [%lld, %lld + %lld) "
                       "are not within %s %lld rows", where, (long long)first,
                       (long long)first, (long long)count, whose,
                       (long long)total);
}

npyio_status npyio__check_opener(const void *out, const char *path,
                                 const char *where)
{
    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    return npyio__check_path(path, where);
}

npyio_status npyio__check_path(const char *path, const char *where)
{
    if (path == NULL || path[0] == '\0')
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: path is %s", where,
                           path == NULL ? "NULL" : "empty");
    return NPYIO_OK;
}

npyio_status npyio__sticky_fail(npyio__sticky *s, npyio_status st)
{
    if (st != NPYIO_OK && s->failed == NPYIO_OK) {
        s->failed = st;
        snprintf(s->first_error, sizeof s->first_error, "%s",
                 npyio_last_error());
    }
    return st;
}

npyio_status npyio__sticky_repeat(const npyio__sticky *s, const char *where,
                                  const char *handle)
{
    return npyio__fail(NPYIO_E_STATE, "%s: the %s failed earlier (%s: %s)",
                       where, handle, npyio_status_string(s->failed),
                       s->first_error);
}

/* Length of the UTF-8 sequence at s[0..avail) if it is one that Python's
 * strict decoder accepts (no overlong forms, surrogates or values beyond
 * U+10FFFF), else 0. */
size_t npyio__utf8_sequence(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t n, i;
    unsigned char lo = 0x80, hi = 0xBF;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0; /* overlong */
    else if (c == 0xED)
        hi = 0x9F; /* surrogates */
    else if (c == 0xF0)
        lo = 0x90; /* overlong */
    else if (c == 0xF4)
        hi = 0x8F; /* beyond U+10FFFF */
    if (avail < n || s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

size_t npyio__utf8_invalid_at(const unsigned char *s, size_t len)
{
    size_t i = 0, step;

    while (i < len) {
        if (s[i] == 0)
            return i;
        step = npyio__utf8_sequence(s + i, len - i);
        if (step == 0)
            return i;
        i += step;
    }
    return len;
}

/* ---- the OS modules' shared answers (error.h) ------------------------------- */

int npyio__faulted(const npyio__faults *faults, const char *call,
                   size_t *count)
{
    int f;

    if (faults == NULL || faults->fn == NULL)
        return 0;
    f = faults->fn(faults->ctx, call);
    if (f == NPYIO__FAULT_SHORT) {
        if (count != NULL && *count > 1)
            *count = 1;
        return 0;
    }
    if (f != 0)
        errno = f;
    return f;
}

npyio_status npyio__status_of_errno(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR: /* a file where the path needs a directory */
        return NPYIO_E_NOT_FOUND;
    case ENOMEM:
        return NPYIO_E_NOMEM;
    default:
        return NPYIO_E_IO;
    }
}
