/*
 * man_read.c - the man-page generator's reader: the public header's
 * sections, declarations and documentation comments, as gen_man.c
 * (which says what is read and why) writes them into pages.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_man.h"

struct section *sections;
size_t nsections;
char **top; /* the header's opening comment */
size_t ntop;

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gen_man: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL)
        die("out of memory");
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

static void push_line(char ***lines, size_t *n, char *line)
{
    *lines = xrealloc(*lines, (*n + 1) * sizeof **lines);
    (*lines)[(*n)++] = line;
}

/* The file's lines, without their newlines. */
char **read_lines(const char *path, size_t *count)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die("%s: cannot open", path);
    char **lines = NULL, *line = NULL;
    size_t n = 0, len = 0, cap = 0;
    int c;
    while ((c = getc(f)) != EOF) {
        if (c == '\n') {
            push_line(&lines, &n, xstrndup(line ? line : "", len));
            len = 0;
            continue;
        }
        if (len + 1 >= cap) {
            cap = cap ? 2 * cap : 128;
            line = xrealloc(line, cap);
        }
        line[len++] = (char)c;
    }
    if (ferror(f))
        die("%s: cannot read", path);
    if (len > 0)
        push_line(&lines, &n, xstrndup(line, len));
    fclose(f);
    free(line);
    *count = n;
    return lines;
}

const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int is_ident(int c) { return isalnum(c) || c == '_'; }

int is_blank(const char *s) { return *skip_space(s) == '\0'; }

size_t indent_of(const char *s) { return (size_t)(skip_space(s) - s); }

/* Trailing spaces removed, in place. */
static char *rstrip(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* ---- reading the header -------------------------------------------------- */

static int is_rule(const char *line)
{
    return starts_with(line, "/* ----") && strstr(line, "*/") != NULL;
}

/* Lines[*i] opens a comment (`opener`): collect its text, without the
 * comment markers and the leading " * ", up to its end; blank lines at
 * either end dropped. */
static void read_comment(char **lines, size_t nlines, size_t *i,
                         const char *opener, char ***out, size_t *nout)
{
    int first = 1;
    for (;;) {
        const char *s = first ? skip_space(lines[*i]) + strlen(opener)
                              : lines[*i];
        char *text = xstrdup(s), *end = strstr(text, "*/");
        int last = end != NULL;
        if (last)
            *end = '\0';
        rstrip(text);
        const char *t = skip_space(text);
        if (!first) {
            if (*t == '*')
                t++;
            if (*t == ' ')
                t++;
        }
        /* A tag after text on one line ("... live on. @since 1.0") starts
         * a line of its own. */
        const char *tag = strstr(t, " @");
        while (tag != NULL && !starts_with(tag, " @since") &&
               !starts_with(tag, " @return") && !starts_with(tag, " @param"))
            tag = strstr(tag + 1, " @");
        char *before = tag ? rstrip(xstrndup(t, (size_t)(tag - t))) : NULL;
        if (before != NULL && *before != '\0') {
            push_line(out, nout, before);
            before = NULL;
            t = tag + 1;
        }
        free(before);
        if (!((first || last) && *t == '\0'))
            push_line(out, nout, xstrdup(t));
        free(text);
        (*i)++;
        if (last)
            break;
        if (*i >= nlines)
            die("unterminated comment");
        first = 0;
    }
    while (*nout > 0 && is_blank((*out)[*nout - 1]))
        free((*out)[--*nout]);
    size_t lead = 0;
    while (lead < *nout && is_blank((*out)[lead]))
        lead++;
    if (lead > 0) {
        for (size_t k = 0; k < lead; k++)
            free((*out)[k]);
        memmove(*out, *out + lead, (*nout - lead) * sizeof **out);
        *nout -= lead;
    }
}

static struct item *add_item(struct section *sec, enum kind kind)
{
    if (sec->nitems == sec->cap) {
        sec->cap = sec->cap ? 2 * sec->cap : 16;
        sec->items = xrealloc(sec->items, sec->cap * sizeof *sec->items);
    }
    struct item *it = &sec->items[sec->nitems++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    return it;
}

void append_text(char **dst, const char *line)
{
    size_t old = *dst ? strlen(*dst) : 0, n = strlen(line);
    *dst = xrealloc(*dst, old + n + 2);
    if (old)
        (*dst)[old++] = '\n';
    memcpy(*dst + old, line, n + 1);
}

/* The identifier that ends just before `end` (spaces skipped). */
static char *ident_before(const char *text, const char *end)
{
    while (end > text && end[-1] == ' ')
        end--;
    const char *start = end;
    while (start > text && is_ident((unsigned char)start[-1]))
        start--;
    return start == end ? NULL : xstrndup(start, (size_t)(end - start));
}

/* "NPYIO_API type name(params);" over as many lines as it takes; shown
 * without NPYIO_API, its continuation lines moving left with the opening
 * parenthesis they are aligned under. */
static void read_function(struct item *it, char **lines, size_t nlines,
                          size_t *i)
{
    const char *first = lines[*i];
    for (;;) {
        const char *line = lines[*i];
        if (line == first)
            append_text(&it->decl, line + strlen("NPYIO_API "));
        else
            append_text(&it->decl, indent_of(line) > 10 ? line + 10 : line);
        (*i)++;
        if (strchr(line, ';') != NULL)
            break;
        if (*i >= nlines)
            die("unterminated declaration: %s", first);
    }
    const char *paren = strchr(it->decl, '(');
    it->name = paren ? ident_before(it->decl, paren) : NULL;
    if (it->name == NULL)
        die("no function name in: %s", first);
}

/* "typedef ...;", up to its ';' outside braces. */
static void read_typedef(struct item *it, char **lines, size_t nlines,
                         size_t *i)
{
    int depth = 0;
    for (;;) {
        const char *line = lines[(*i)++];
        append_text(&it->decl, line);
        for (const char *p = line; *p; p++)
            depth += (*p == '{') - (*p == '}');
        if (depth == 0 && strchr(line, ';') != NULL)
            break;
        if (*i >= nlines)
            die("unterminated typedef");
    }
    it->name = ident_before(it->decl, strrchr(it->decl, ';'));
    if (it->name == NULL)
        die("no type name in: %s", it->decl);
}

/* "#define NAME(params)" of a macro starting at lines[i], its parameters
 * joined when they go on over continuation lines. */
static char *macro_params(char **lines, size_t nlines, size_t i)
{
    char *decl = NULL;
    for (size_t k = i;; k++) {
        const char *line = k == i ? lines[k] : skip_space(lines[k]);
        const char *close = strchr(line, ')');
        size_t n = close ? (size_t)(close + 1 - line) : strlen(line);
        char *part = xstrndup(line, n);
        if (close == NULL && n > 0 && part[n - 1] == '\\')
            part[n - 1] = '\0';
        rstrip(part);
        if (decl == NULL) {
            decl = part;
        } else {
            size_t old = strlen(decl);
            decl = xrealloc(decl, old + strlen(part) + 2);
            decl[old] = ' ';
            strcpy(decl + old + 1, part);
            free(part);
        }
        if (close != NULL)
            return decl;
        if (k + 1 >= nlines)
            die("unterminated macro parameters: %s", lines[i]);
    }
}

/* "#define NPYIO_NAME value" (a constant) or "#define NPYIO_NAME(...)"
 * (a macro), with its continuation lines. */
static struct item *read_define(struct section *sec, char **lines,
                                size_t nlines, size_t *i)
{
    const char *p = skip_space(skip_space(lines[*i] + 1) + strlen("define"));
    const char *name = p;
    while (is_ident((unsigned char)*p))
        p++;
    struct item *it;
    if (*p == '(') {
        it = add_item(sec, MACRO);
        it->decl = macro_params(lines, nlines, *i);
    } else {
        it = add_item(sec, CONST);
        const char *v = skip_space(p);
        const char *c = strstr(v, "/*");
        it->value = rstrip(xstrndup(v, c ? (size_t)(c - v) : strlen(v)));
    }
    it->name = xstrndup(name, (size_t)(p - name));
    while (*i < nlines) {
        const char *line = lines[(*i)++];
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\\')
            break;
    }
    return it;
}

/* Lines[*i] starts a declaration: a function (NPYIO_API ...;), a typedef
 * or a #define. Record it with its comment. */
static void read_declaration(struct section *sec, char **lines, size_t nlines,
                             size_t *i, char **doc, size_t ndoc)
{
    struct item *it;
    if (starts_with(lines[*i], "NPYIO_API ")) {
        it = add_item(sec, FUNC);
        read_function(it, lines, nlines, i);
    } else if (starts_with(lines[*i], "typedef")) {
        it = add_item(sec, TYPE);
        read_typedef(it, lines, nlines, i);
    } else {
        it = read_define(sec, lines, nlines, i);
    }
    it->doc = doc;
    it->ndoc = ndoc;
}

static void add_note(struct section *sec, char **doc, size_t ndoc)
{
    struct item *it = add_item(sec, NOTE);
    it->doc = doc;
    it->ndoc = ndoc;
}

/* A doc comment at lines[*i], and what it documents: the declaration
 * that follows, or nothing (a note). A comment before a constant that has
 * a comment of its own after it is the group's note. */
static void read_doc_comment(struct section *sec, char **lines, size_t nlines,
                             size_t *i)
{
    char **doc = NULL;
    size_t ndoc = 0;
    read_comment(lines, nlines, i, "/**", &doc, &ndoc);
    while (*i < nlines && is_blank(lines[*i]))
        (*i)++;
    if (sec == NULL)
        die("a doc comment before the first section");
    const char *next = *i < nlines ? lines[*i] : "";
    if (starts_with(next, "#define NPYIO_") && strstr(next, "/**<") != NULL)
        add_note(sec, doc, ndoc);
    else if (starts_with(next, "NPYIO_API ") || starts_with(next, "typedef") ||
             starts_with(next, "#define NPYIO_"))
        read_declaration(sec, lines, nlines, i, doc, ndoc);
    else
        add_note(sec, doc, ndoc);
}

/* A banner at lines[*i] (a rule of dashes, the title, a rule) starts a
 * section. */
static struct section *read_banner(char **lines, size_t nlines, size_t *i)
{
    if (!is_rule(lines[*i]) || *i + 2 >= nlines || !is_rule(lines[*i + 2]))
        return NULL;
    const char *title = skip_space(lines[*i + 1] + 2);
    const char *end = strstr(title, "*/");
    if (!starts_with(lines[*i + 1], "/*") || end == NULL)
        die("line %zu: a banner without a title", *i + 2);
    sections = xrealloc(sections, (nsections + 1) * sizeof *sections);
    struct section *sec = &sections[nsections++];
    memset(sec, 0, sizeof *sec);
    sec->title = rstrip(xstrndup(title, (size_t)(end - title)));
    *i += 3;
    return sec;
}

/* A constant with its comment after it, on its line. */
static void read_trailing_doc(struct section *sec, char **lines,
                              size_t nlines, size_t *i)
{
    const char *d = skip_space(strstr(lines[*i], "/**<") + 4);
    const char *e = strstr(d, "*/");
    if (e == NULL)
        die("line %zu: a /**< comment on several lines", *i + 1);
    char **doc = NULL;
    size_t ndoc = 0;
    push_line(&doc, &ndoc, rstrip(xstrndup(d, (size_t)(e - d))));
    read_declaration(sec, lines, nlines, i, doc, ndoc);
}

void read_header(const char *path)
{
    size_t nlines, i = 0;
    char **lines = read_lines(path, &nlines);
    struct section *sec = NULL, *next;
    while (i < nlines) {
        const char *line = lines[i], *t = skip_space(line);
        int define = starts_with(line, "#define NPYIO_");
        if ((next = read_banner(lines, nlines, &i)) != NULL) {
            sec = next;
        } else if (starts_with(t, "/**") && !starts_with(t, "/**<")) {
            read_doc_comment(sec, lines, nlines, &i);
        } else if (starts_with(t, "/*")) {
            char **doc = NULL;
            size_t ndoc = 0;
            read_comment(lines, nlines, &i, "/*", &doc, &ndoc);
            if (sec == NULL && top == NULL) {
                top = doc;
                ntop = ndoc;
            } else if (sec != NULL) {
                add_note(sec, doc, ndoc);
            } else { /* a comment between the top one and the sections */
                for (size_t k = 0; k < ndoc; k++)
                    free(doc[k]);
                free(doc);
            }
        } else if (sec == NULL) {
            i++;
        } else if (starts_with(line, "NPYIO_API ") ||
                   starts_with(line, "typedef")) {
            read_declaration(sec, lines, nlines, &i, NULL, 0);
        } else if (define && strstr(line, "/**<") != NULL) {
            read_trailing_doc(sec, lines, nlines, &i);
        } else if (define && i > 0 && starts_with(lines[i - 1], "#define NPYIO_") &&
                   sec->nitems > 0 && sec->items[sec->nitems - 1].kind == CONST) {
            /* The next constant of a group whose first one is documented. */
            read_declaration(sec, lines, nlines, &i, NULL, 0);
        } else if (define && i > 0 && strstr(lines[i - 1], "*/") != NULL &&
                   sec->nitems > 0 && sec->items[sec->nitems - 1].kind == NOTE) {
            /* A group of constants that a plain comment introduces (the
             * version numbers): the comment is the group's note. */
            read_declaration(sec, lines, nlines, &i, NULL, 0);
        } else {
            i++;
        }
    }
    for (size_t k = 0; k < nlines; k++)
        free(lines[k]);
    free(lines);
    if (top == NULL || nsections == 0)
        die("%s: no opening comment or no sections", path);
}
