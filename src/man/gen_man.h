/*
 * gen_man.h - what the man-page generator's two parts share: the header
 * as read (sections of items, the opening comment) by man_read.c, and the
 * string helpers both use. gen_man.c writes the pages.
 */
#ifndef NPYIO_GEN_MAN_H
#define NPYIO_GEN_MAN_H

#include <stddef.h>

/* One page per header section that declares functions. */
struct family {
    const char *section; /* the header's banner title */
    const char *page;    /* the page's name */
    const char *summary; /* the NAME line's description */
    const char *examples[4]; /* files of EXAMPLE_DIR shown under EXAMPLES */
};

enum kind { NOTE, FUNC, MACRO, CONST, TYPE };

struct item {
    enum kind kind;
    char *name;   /* FUNC, MACRO, CONST, TYPE */
    char *decl;   /* FUNC, MACRO, TYPE: as the header writes it */
    char *value;  /* CONST */
    char **doc;   /* comment lines, prefix removed */
    size_t ndoc;
};

struct section {
    char *title;
    struct item *items;
    size_t nitems, cap;
    const struct family *family;
};

/* Filled by read_header(): the header's sections in order, and its
 * opening comment. */
extern struct section *sections;
extern size_t nsections;
extern char **top;
extern size_t ntop;

/* gnu_printf where the build says so (mingw-w64: C99 printf). */
#ifndef NPYIO_PRINTF_ARCHETYPE
#define NPYIO_PRINTF_ARCHETYPE printf
#endif
void die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(NPYIO_PRINTF_ARCHETYPE, 1, 2), noreturn))
#endif
    ;
void *xrealloc(void *p, size_t n);
char *xstrndup(const char *s, size_t n);
char *xstrdup(const char *s);
char **read_lines(const char *path, size_t *count);
const char *skip_space(const char *s);
int starts_with(const char *s, const char *prefix);
int is_ident(int c);
int is_blank(const char *s);
size_t indent_of(const char *s);
void append_text(char **dst, const char *line);
void read_header(const char *path);

#endif
