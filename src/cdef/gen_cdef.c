/*
 * gen_cdef DECLS OUT
 *
 * Writes npyio.cdef: what a binding generator that cannot run the C
 * preprocessor needs from npyio.h (Python's cffi in ABI mode, for one).
 *  - every integer constant of the header as `#define NAME <decimal>`, its
 *    value taken from the compiler (cdef_constants.h lists the names), so
 *    that character constants and parenthesised negatives need no reading;
 *  - then the declarations: DECLS is the header run through the C
 *    preprocessor without its #include lines (comments, conditionals and
 *    macros gone), from which this removes GCC's __attribute__((...)).
 * Built and run at build time (through the emulator when cross-building);
 * not installed. OUT is written whole or not at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"

struct constant {
    const char *name;
    long long value;
};

#define NPYIO_CDEF_CONSTANT(name) {#name, (long long)(name)},
static const struct constant constants[] = {
#include "cdef_constants.h"
};
#undef NPYIO_CDEF_CONSTANT

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return NULL;
    }
    size_t cap = 1 << 16, used = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        used += fread(buf + used, 1, cap - used, f);
        if (used < cap)
            break;
        char *grown = realloc(buf, 2 * cap + 1);
        if (grown == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (buf == NULL || failed) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return NULL;
    }
    buf[used] = '\0';
    *len = used;
    return buf;
}

/* Removes every `__attribute__ ((...))` (balanced parentheses) in place. */
static void strip_attributes(char *text)
{
    static const char keyword[] = "__attribute__";
    char *at;
    while ((at = strstr(text, keyword)) != NULL) {
        char *p = at + sizeof keyword - 1;
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        int depth = 0;
        do {
            if (*p == '(')
                depth++;
            else if (*p == ')')
                depth--;
            else if (*p == '\0')
                break;
            p++;
        } while (depth > 0);
        while (*p == ' ')
            p++;
        memmove(at, p, strlen(p) + 1);
    }
}

/* Writes the lines of text without trailing blanks, leading blank lines or
 * runs of more than one blank line. */
static void write_squeezed(FILE *out, const char *text)
{
    int blank_run = 1;
    while (*text != '\0') {
        const char *end = strchr(text, '\n');
        size_t len = end != NULL ? (size_t)(end - text) : strlen(text);
        size_t trimmed = len;
        while (trimmed > 0 && (text[trimmed - 1] == ' ' ||
                               text[trimmed - 1] == '\t' ||
                               text[trimmed - 1] == '\r'))
            trimmed--;
        if (trimmed == 0) {
            if (!blank_run)
                fputc('\n', out);
            blank_run = 1;
        } else {
            fprintf(out, "%.*s\n", (int)trimmed, text);
            blank_run = 0;
        }
        text += end != NULL ? len + 1 : len;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_cdef DECLS OUT\n");
        return 2;
    }
    size_t len;
    char *decls = read_all(argv[1], &len);
    if (decls == NULL)
        return 1;
    strip_attributes(decls);

    size_t tmp_len = strlen(argv[2]) + sizeof ".tmp";
    char *tmp = malloc(tmp_len);
    FILE *out = NULL;
    if (tmp != NULL) {
        snprintf(tmp, tmp_len, "%s.tmp", argv[2]);
        out = fopen(tmp, "w");
    }
    if (out == NULL) {
        perror(argv[2]);
        free(tmp);
        free(decls);
        return 1;
    }
    fprintf(out,
            "/* libnpyio %s: the declarations of npyio.h for binding\n"
            " * generators that cannot run the C preprocessor (cffi's cdef()),\n"
            " * with every constant as a decimal #define. Generated; do not\n"
            " * edit. Find it with: pkg-config --variable=cdef npyio */\n\n",
            NPYIO_VERSION_STRING);
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        fprintf(out, "#define %s %lld\n", constants[i].name,
                constants[i].value);
    fputc('\n', out);
    write_squeezed(out, decls);
    free(decls);
    int failed = ferror(out);
    failed |= fclose(out) != 0;
    /* C leaves rename() onto an existing file to the system: Windows'
     * runtime refuses it (EEXIST), and the old file is then removed and
     * the rename tried again. */
    if (!failed && rename(tmp, argv[2]) != 0)
        failed = errno != EEXIST || remove(argv[2]) != 0 ||
                 rename(tmp, argv[2]) != 0;
    if (failed) {
        perror(argv[2]);
        remove(tmp);
        free(tmp);
        return 1;
    }
    free(tmp);
    return 0;
}
