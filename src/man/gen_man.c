/*
 * gen_man HEADER EXAMPLE_DIR OUT_DIR [PAGE.3.in...]
 *
 * Writes the library's manual pages (section 3) from the public header's
 * own documentation:
 *  - OUT_DIR/npyio.3, the overview: the header's opening comment (what the
 *    interface promises, its conventions, the naming rule), the handles,
 *    the error model, thread safety, the limits and the per-call flags;
 *  - OUT_DIR/<family>.3 for every section of the header that declares
 *    functions (see `families` below): the section's prototypes as the
 *    header writes them (SYNOPSIS), its comments, types, constants and
 *    functions (DESCRIPTION: @param as tagged paragraphs), each function's
 *    @return (RETURN VALUES), the example programs of EXAMPLE_DIR that show
 *    the family, verbatim (EXAMPLES: tests build and run them, and check
 *    that the page shows them unchanged), and SEE ALSO;
 *  - OUT_DIR/<name>.3 for every NPYIO_API function and every function-like
 *    NPYIO_ macro, a link page holding `.so man3/<family>.3`; and one for
 *    every constant (statuses, limits, flags, kinds, stat fields, ...),
 *    leading to the page that documents it: its family's, or npyio.3 for
 *    the sections only the overview shows (the per-call flags);
 *  - OUT_DIR/PAGE.3 for every PAGE.3.in given, a page written by hand
 *    (npyio.hpp.3.in: the C++ layer): its lines as they are, after the
 *    title line, each `.\" EXAMPLE FILE` line replaced by the program FILE
 *    of EXAMPLE_DIR, verbatim, as the families' EXAMPLES show theirs.
 * A header section that declares functions but is missing from `families`
 * is an error, as are constants in a section no page shows and an overview
 * anchor the header no longer has: the build fails rather than ship a page
 * that misses part of the header.
 * Built and run at build time like gen_cdef (through the emulator when
 * cross-building); not installed.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"
#include "gen_man.h"

static const struct family families[] = {
    {"Version", "npyio_version", "version of the running library",
     {"man_version.c"}},
    {"Status codes and error messages", "npyio_status",
     "status codes and error messages", {"tour_errors.c"}},
    {"Tasks: one call each", "npyio_tasks",
     "save, load, append and archive arrays in one call",
     {"tour_first.c", "tour_load.c", "tour_tasks.c"}},
    {"Memory", "npyio_memory", "release memory the library handed over",
     {"tour_load.c"}},
    {"Options: resource limits and allocator", "npyio_options",
     "resource limits and allocator", {"tour_errors.c", "tour_allocator.c"}},
    {"Data types", "npyio_dtype", "element types (NumPy dtypes)",
     {"tour_bytes.c"}},
    {"Records and subarrays", "npyio_records",
     "record (structured) and subarray types", {"tour_records.c"}},
    {"Headers", "npyio_header", "descriptions of arrays and .npy headers",
     {"tour_headers.c", "tour_bytes.c"}},
    {"Streams", "npyio_stream",
     "sources and sinks of bytes: files, descriptors, memory, callbacks",
     {"tour_streams.c"}},
    {"Reading arrays", "npyio_reader",
     "read .npy arrays: whole, in chunks, by rows, converted",
     {"tour_chunks.c", "tour_headers.c"}},
    {"Writing arrays", "npyio_writer",
     "write .npy arrays: new files, appended rows, rows in place",
     {"tour_headers.c", "tour_grow.c"}},
    {"Memory mapping", "npyio_map", "map .npy files into memory",
     {"tour_maps.c"}},
    {".npz archives: reading", "npyio_npz", "read .npz archives",
     {"tour_npz.c"}},
    {".npz archives: writing", "npyio_npz_writer",
     "write .npz archives and add members to them",
     {"tour_npz.c", "tour_tasks.c"}},
};
#define NFAMILIES (sizeof families / sizeof families[0])

static const char *example_dir;
static const char *out_dir;
/* The pages written by hand (PAGE.3.in). */
struct extra {
    char *name;          /* PAGE */
    const char *source;  /* PAGE.3.in, without its folder */
    char **lines;
    size_t nlines;
};
static struct extra *extras;
static int nextra;
static int failed;

/* ---- writing groff ------------------------------------------------------- */

/* Text for groff: backslashes and minus signs escaped (code stays code when
 * copied from the page). With `markup`, `quoted` spans and the names of
 * calls (npyio_xxx()) in bold. */
static void put_esc(FILE *f, const char *s, int markup)
{
    int in_quote = 0;
    for (const char *p = s; *p; p++) {
        if (markup && *p == '`') {
            fputs(in_quote ? "\\fR" : "\\fB", f);
            in_quote = !in_quote;
            continue;
        }
        if (markup && !in_quote && starts_with(p, "npyio_") &&
            (p == s || !is_ident((unsigned char)p[-1]))) {
            const char *e = p;
            while (is_ident((unsigned char)*e))
                e++;
            if (starts_with(e, "()")) {
                fputs("\\fB", f);
                fwrite(p, 1, (size_t)(e - p), f);
                fputs("\\fR()", f);
                p = e + 1;
                continue;
            }
        }
        if (*p == '\\')
            fputs("\\e", f);
        else if (*p == '-')
            fputs("\\-", f);
        else
            fputc(*p, f);
    }
    if (in_quote)
        fputs("\\fR", f);
}

/* One input line of text; a control character at its start made text. */
static void put_text(FILE *f, const char *s, int markup)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    put_esc(f, s, markup);
    fputc('\n', f);
}

static int is_bullet(const char *line)
{
    const char *t = skip_space(line);
    return t[0] == '-' && t[1] == ' ';
}

static int is_tag(const char *line) { return skip_space(line)[0] == '@'; }

/* "word   text" whose text goes on indented below it (a table of
 * callbacks, say). */
static int is_item(char **doc, size_t ndoc, size_t i)
{
    const char *sp = strchr(doc[i], ' ');
    return indent_of(doc[i]) == 0 && i + 1 < ndoc && sp != NULL &&
           sp - doc[i] <= 12 && !is_blank(doc[i + 1]) &&
           !is_bullet(doc[i + 1]) && !is_tag(doc[i + 1]) &&
           indent_of(doc[i + 1]) >= 4;
}

/* The body of a comment (up to its first @ tag) as groff: paragraphs of
 * filled text, "- " bullets, "word   text" items, and indented blocks kept
 * line for line. `nested`: the body of a tagged paragraph, whose indent
 * it keeps (its first paragraph continues the tag's). */
static void put_body(FILE *f, char **doc, size_t ndoc, int nested)
{
    const char *para = nested ? ".IP\n" : ".PP\n";
    size_t i = 0;
    int need_para = !nested;
    while (i < ndoc && !is_tag(doc[i])) {
        const char *line = doc[i];
        if (is_blank(line)) {
            i++;
            need_para = 1;
            continue;
        }
        size_t ind = indent_of(line);
        if (is_bullet(line)) {
            fputs(nested ? ".IP\n\\(bu " : ".IP \\(bu 2\n", f);
            put_text(f, skip_space(line) + 2, 1);
            i++;
            while (i < ndoc && !is_blank(doc[i]) && !is_bullet(doc[i]) &&
                   !is_tag(doc[i]) && indent_of(doc[i]) > ind)
                put_text(f, skip_space(doc[i++]), 1);
            need_para = 1;
        } else if (is_item(doc, ndoc, i)) {
            const char *sp = strchr(line, ' ');
            fputs(nested ? ".IP\n\\fB" : ".TP\n\\fB", f);
            char *word = xstrndup(line, (size_t)(sp - line));
            put_esc(f, word, 0);
            free(word);
            fputs(nested ? "\\fR " : "\\fR\n", f);
            put_text(f, skip_space(sp), 1);
            i++;
            while (i < ndoc && !is_blank(doc[i]) && !is_tag(doc[i]) &&
                   indent_of(doc[i]) >= 4)
                put_text(f, skip_space(doc[i++]), 1);
            need_para = 1;
        } else if (ind > 0) {
            size_t start = i, common = ind;
            while (i < ndoc && !is_blank(doc[i]) && !is_tag(doc[i]) &&
                   !is_bullet(doc[i]) && indent_of(doc[i]) > 0) {
                if (indent_of(doc[i]) < common)
                    common = indent_of(doc[i]);
                i++;
            }
            fputs(nested ? ".IP\n.nf\n" : ".PP\n.RS 4\n.nf\n", f);
            for (size_t k = start; k < i; k++)
                put_text(f, doc[k] + common, 0);
            fputs(nested ? ".fi\n" : ".fi\n.RE\n", f);
            need_para = 1;
        } else {
            if (need_para)
                fputs(para, f);
            need_para = 0;
            put_text(f, line, 1);
            i++;
        }
    }
}

/* The @tags of a comment: "@param[in] name text...", "@return text",
 * "@since 1.0", each with its indented continuation lines. */
struct tag {
    char kind; /* 'p', 'r', 's' */
    char *name;
    char *text; /* lines separated by '\n' */
};

#define MAX_TAGS 32

static size_t read_tags(const struct item *it, struct tag *tags)
{
    char **doc = it->doc;
    size_t ndoc = it->ndoc, n = 0, i = 0;
    while (i < ndoc && !is_tag(doc[i]))
        i++;
    while (i < ndoc) {
        const char *t = skip_space(doc[i]);
        if (n == MAX_TAGS)
            die("%s: too many @tags", it->name);
        struct tag *tag = &tags[n++];
        memset(tag, 0, sizeof *tag);
        if (starts_with(t, "@param")) {
            tag->kind = 'p';
            t += strlen("@param");
            if (*t == '[') {
                t = strchr(t, ']');
                if (t == NULL)
                    die("%s: bad @param: %s", it->name, doc[i]);
                t++;
            }
            t = skip_space(t);
            const char *e = t;
            for (;;) {
                while (is_ident((unsigned char)*e))
                    e++;
                if (e[0] == ',' && e[1] == ' ' && is_ident((unsigned char)e[2]))
                    e += 2;
                else
                    break;
            }
            if (e == t)
                die("%s: @param without a name: %s", it->name, doc[i]);
            tag->name = xstrndup(t, (size_t)(e - t));
            t = skip_space(e);
        } else if (starts_with(t, "@return")) {
            tag->kind = 'r';
            t = skip_space(t + strlen("@return"));
        } else if (starts_with(t, "@since")) {
            tag->kind = 's';
            t = skip_space(t + strlen("@since"));
        } else {
            die("%s: unknown tag: %s", it->name, doc[i]);
        }
        if (*t)
            append_text(&tag->text, t);
        i++;
        /* Up to the next tag: the tag's lines, and paragraphs after a
         * blank line (kept as an empty line). */
        int blank = 0;
        for (; i < ndoc && !is_tag(doc[i]); i++) {
            if (is_blank(doc[i])) {
                blank = 1;
                continue;
            }
            if (blank && tag->text != NULL)
                append_text(&tag->text, "");
            blank = 0;
            append_text(&tag->text, skip_space(doc[i]));
        }
    }
    return n;
}

static void free_tags(struct tag *tags, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        free(tags[k].name);
        free(tags[k].text);
    }
}

/* Lines separated by '\n', each put as text (filled, or verbatim in
 * no-fill mode). */
static void put_lines(FILE *f, const char *text, int markup)
{
    if (text == NULL)
        return;
    const char *p = text;
    for (;;) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        if (*line == '\0' && markup)
            fputs(".IP\n", f); /* a paragraph of a tagged paragraph */
        else
            put_text(f, line, markup);
        free(line);
        if (nl == NULL)
            break;
        p = nl + 1;
    }
}

/* A constant as a tagged paragraph: its name, its value, its comment. */
static void put_const(FILE *f, const struct item *it)
{
    fputs(".TP\n.BR ", f);
    put_esc(f, it->name, 0);
    fputs(" \" (", f);
    /* "(-1)" is written (-1), not ((-1)) */
    size_t n = strlen(it->value);
    char *value = it->value[0] == '(' && it->value[n - 1] == ')'
                      ? xstrndup(it->value + 1, n - 2)
                      : xstrdup(it->value);
    for (const char *q = value; *q; q++) {
        if (*q == '"') {
            fputs("\\(dq", f); /* within a macro's quoted argument */
        } else {
            char one[2] = {*q, '\0'};
            put_esc(f, one, 0);
        }
    }
    free(value);
    fputs(")\"\n", f);
    put_body(f, it->doc, it->ndoc, 1);
}

/* A function, macro, type or note: a subsection with its comment, its
 * parameters as tagged paragraphs, and since when it exists. */
static void put_item(FILE *f, const struct item *it)
{
    if (it->kind == CONST) {
        put_const(f, it);
        return;
    }
    if (it->kind == NOTE) {
        put_body(f, it->doc, it->ndoc, 0);
        return;
    }
    fprintf(f, ".SS %s%s\n", it->name,
            it->kind == FUNC || it->kind == MACRO ? "()" : "");
    put_body(f, it->doc, it->ndoc, 0);
    struct tag tags[MAX_TAGS];
    size_t ntags = read_tags(it, tags);
    const char *since = NULL;
    for (size_t k = 0; k < ntags; k++) {
        if (tags[k].kind == 'p') {
            fputs(".TP\n.I ", f);
            put_text(f, tags[k].name, 0);
            put_lines(f, tags[k].text, 1);
        } else if (tags[k].kind == 's') {
            since = tags[k].text;
        }
    }
    if (since != NULL) {
        fputs(".PP\nSince libnpyio ", f);
        put_esc(f, since, 0);
        fputs(".\n", f);
    }
    free_tags(tags, ntags);
}

static const struct family *family_of(const char *title)
{
    for (size_t k = 0; k < NFAMILIES; k++)
        if (strcmp(families[k].section, title) == 0 ||
            strcmp(families[k].page, title) == 0)
            return &families[k];
    return NULL;
}

static const struct section *section_of(const char *title)
{
    for (size_t k = 0; k < nsections; k++)
        if (strcmp(sections[k].title, title) == 0)
            return &sections[k];
    die("the header has no section \"%s\"", title);
    return NULL;
}

static const struct item *item_of(const struct section *sec, const char *name)
{
    for (size_t k = 0; k < sec->nitems; k++)
        if (sec->items[k].name && strcmp(sec->items[k].name, name) == 0)
            return &sec->items[k];
    die("section \"%s\" has no %s", sec->title, name);
    return NULL;
}

static FILE *open_page(const char *name, char **path)
{
    size_t n = strlen(out_dir) + strlen(name) + 8;
    *path = xrealloc(NULL, n);
    snprintf(*path, n, "%s/%s.3", out_dir, name);
    FILE *f = fopen(*path, "w");
    if (f == NULL)
        die("%s: cannot write", *path);
    return f;
}

static void close_page(FILE *f, char *path)
{
    if (ferror(f) || fclose(f) != 0) {
        fprintf(stderr, "gen_man: %s: write failed\n", path);
        failed = 1;
    }
    free(path);
}

static void put_th(FILE *f, const char *name, const char *source)
{
    fprintf(f, ".\\\" Generated from %s by src/man/gen_man.c: do not edit.\n",
            source);
    fprintf(f, ".TH %s 3 \"\" \"libnpyio %s\" \"libnpyio Manual\"\n", name,
            NPYIO_VERSION_STRING);
    /* Names of calls are not hyphenated, nor text stretched to both
     * margins. */
    fputs(".nh\n.ad l\n", f);
}

static void put_synopsis_head(FILE *f)
{
    fputs(".SH SYNOPSIS\n.nf\n.B #include <npyio.h>\n.fi\n.PP\n"
          "Link with\n.BR \\-lnpyio ;\n"
          ".B pkg\\-config \\-\\-cflags \\-\\-libs npyio\n"
          "gives the flags.\n", f);
}

static void put_see_also(FILE *f, const char *self)
{
    fputs(".SH SEE ALSO\n", f);
    if (strcmp(self, "npyio") != 0)
        fputs(".BR npyio (3),\n", f);
    for (size_t k = 0; k < NFAMILIES; k++)
        if (strcmp(families[k].page, self) != 0)
            fprintf(f, ".BR %s (3),\n", families[k].page);
    for (int k = 0; k < nextra; k++)
        if (strcmp(extras[k].name, self) != 0)
            fprintf(f, ".BR %s (3),\n", extras[k].name);
    fputs(".BR npyio (1)\n", f);
}

/* An example program, verbatim, between .EX and .EE. */
static void put_example(FILE *f, const char *file)
{
    size_t n = strlen(example_dir) + strlen(file) + 2, nlines;
    char *path = xrealloc(NULL, n);
    snprintf(path, n, "%s/%s", example_dir, file);
    char **lines = read_lines(path, &nlines);
    fprintf(f, ".SS %s\n", file);
    fputs(".PP\nA whole program, which the tests of the source tree build "
          "and run\n", f);
    fprintf(f, "(\\fItests/example/%s\\fR):\n", file);
    fputs(".PP\n.EX\n", f);
    for (size_t k = 0; k < nlines; k++) {
        put_text(f, lines[k], 0);
        free(lines[k]);
    }
    fputs(".EE\n", f);
    free(lines);
    free(path);
}

/* RETURN VALUES: each function's @return. */
static void put_return_values(FILE *f, const struct section *sec)
{
    fputs(".SH RETURN VALUES\n", f);
    int voids = 0;
    for (size_t k = 0; k < sec->nitems; k++) {
        const struct item *it = &sec->items[k];
        if (it->kind != FUNC)
            continue;
        struct tag tags[MAX_TAGS];
        size_t ntags = read_tags(it, tags);
        int found = 0;
        for (size_t t = 0; t < ntags; t++) {
            if (tags[t].kind != 'r')
                continue;
            fprintf(f, ".TP\n.BR %s ()\n", it->name);
            put_lines(f, tags[t].text, 1);
            found = 1;
        }
        free_tags(tags, ntags);
        voids += !found;
    }
    if (voids)
        fputs(".PP\nThe functions not listed return no value.\n", f);
}

static int is_public_const(const struct item *it)
{
    return it->kind == CONST && starts_with(it->name, "NPYIO_") &&
           !starts_with(it->name, "NPYIO__");
}

/* A link page per function and macro (`calls`) and per constant:
 * `.so man3/PAGE.3`. */
static void write_links(const struct section *sec, const char *page,
                        int calls)
{
    char *path;
    for (size_t k = 0; k < sec->nitems; k++) {
        const struct item *it = &sec->items[k];
        if (!is_public_const(it) &&
            !(calls && (it->kind == FUNC || it->kind == MACRO)))
            continue;
        if (family_of(it->name) != NULL)
            die("%s names both a declaration and a family page", it->name);
        FILE *l = open_page(it->name, &path);
        fprintf(l, ".so man3/%s.3\n", page);
        close_page(l, path);
    }
}

static void write_family(const struct section *sec, const struct family *fam)
{
    char *path;
    FILE *f = open_page(fam->page, &path);
    put_th(f, fam->page, "npyio.h");
    fputs(".SH NAME\n", f);
    fprintf(f, "%s", fam->page);
    for (size_t k = 0; k < sec->nitems; k++)
        if (sec->items[k].kind == FUNC || sec->items[k].kind == MACRO)
            fprintf(f, ", %s", sec->items[k].name);
    fputs(" \\- ", f);
    put_text(f, fam->summary, 0);

    put_synopsis_head(f);
    for (size_t k = 0; k < sec->nitems; k++) {
        const struct item *it = &sec->items[k];
        if (it->kind == TYPE || it->kind == FUNC || it->kind == MACRO) {
            fputs(".PP\n.nf\n", f);
            put_lines(f, it->decl, 0);
            fputs(".fi\n", f);
        }
    }

    fputs(".SH DESCRIPTION\n", f);
    /* A run of constants under a heading, the note before it included. */
    for (size_t k = 0; k < sec->nitems; k++) {
        const struct item *it = &sec->items[k];
        enum kind before = k > 0 ? sec->items[k - 1].kind : NOTE;
        if ((it->kind == NOTE && k + 1 < sec->nitems &&
             sec->items[k + 1].kind == CONST) ||
            (it->kind == CONST && k == 0) ||
            (it->kind == CONST && before != CONST && before != NOTE))
            fputs(".SS Constants\n", f);
        put_item(f, it);
    }

    put_return_values(f, sec);
    fputs(".SH EXAMPLES\n", f);
    for (size_t k = 0; k < 4 && fam->examples[k] != NULL; k++)
        put_example(f, fam->examples[k]);
    put_see_also(f, fam->page);
    close_page(f, path);

    write_links(sec, fam->page, 1);
}

/* ---- the overview, npyio(3) ---------------------------------------------- */

/* The part of the opening comment that starts with `anchor`: up to the
 * next part's first line (parts start with the anchors below). */
static const char *const anchors[] = {
    "This header is the manual", "Conventions that hold",
    "Names follow one rule", "Contents, in order", "Every declaration says",
};
#define NANCHORS (sizeof anchors / sizeof anchors[0])

static size_t part_of(const char *anchor, size_t *end)
{
    size_t start = ntop;
    for (size_t i = 0; i < ntop && start == ntop; i++)
        if (starts_with(top[i], anchor))
            start = i;
    if (start == ntop)
        die("the header's opening comment has no \"%s\"", anchor);
    *end = ntop;
    for (size_t i = start + 1; i < ntop && *end == ntop; i++)
        for (size_t a = 0; a < NANCHORS; a++)
            if (starts_with(top[i], anchors[a]))
                *end = i;
    return start;
}

static void put_part(FILE *f, const char *anchor)
{
    size_t end, start = part_of(anchor, &end);
    put_body(f, top + start, end - start, 0);
}

/* A page written by hand, in npyio.3's list: its NAME line's summary. */
static void put_extra_summary(FILE *f, const struct extra *x)
{
    const char *summary = NULL;
    for (size_t k = 0; k + 1 < x->nlines && summary == NULL; k++)
        if (strcmp(x->lines[k], ".SH NAME") == 0)
            summary = strstr(x->lines[k + 1], "\\- ");
    if (summary == NULL)
        die("%s: no NAME line \"PAGE \\- summary\"", x->source);
    fprintf(f, ".TP\n.BR %s (3)\n%s\n", x->name, summary + 3);
}

/* DESCRIPTION: what the interface promises, and the families. */
static void put_overview_description(FILE *f)
{
    fputs(".SH DESCRIPTION\n", f);
    put_part(f, "This header is the manual");
    fputs(".PP\nThe calls are documented by family, one page each, in the "
          "header's order:\n", f);
    for (size_t k = 0; k < NFAMILIES; k++) {
        fprintf(f, ".TP\n.BR %s (3)\n", families[k].page);
        put_text(f, families[k].summary, 0);
    }
    fputs(".PP\n", f);
    put_text(f, "Every exported function has a page of its own name "
                "(man 3 npyio_save) that shows its family's page, and so has "
                "every constant (man 3 NPYIO_E_CHECKSUM, man 3 "
                "NPYIO_LIMIT_THREADS): the page that documents it (this one for "
                "the per-call flags).", 1);
    for (int k = 0; k < nextra; k++)
        put_extra_summary(f, &extras[k]);
}

/* ERRORS: the statuses and the messages. */
static void put_errors(FILE *f)
{
    fputs(".SH ERRORS\n", f);
    const struct section *status =
        section_of("Status codes and error messages");
    put_item(f, item_of(status, "npyio_status"));
    fputs(".SS Statuses\n", f);
    for (size_t k = 0; k < status->nitems; k++)
        if (status->items[k].kind == CONST)
            put_const(f, &status->items[k]);
    fputs(".SS Messages\n.PP\n", f);
    put_text(f, "npyio_status_string() names a status; npyio_last_error() "
                "gives the message of the calling thread's last failed call:",
             1);
    put_body(f, item_of(status, "npyio_last_error")->doc,
             item_of(status, "npyio_last_error")->ndoc, 0);
}

/* CONVENTIONS, NAMING, HANDLES, ERRORS, and THREAD SAFETY from the
 * convention that says it. */
static void put_conventions(FILE *f)
{
    size_t end, start = part_of("Conventions that hold", &end);
    size_t ts = end, ts_end = end;
    for (size_t i = start; i < end; i++)
        if (is_bullet(top[i]) &&
            starts_with(skip_space(top[i]) + 2, "Thread safety:")) {
            ts = i;
            ts_end = i + 1;
            while (ts_end < end && !is_blank(top[ts_end]) &&
                   !is_bullet(top[ts_end]))
                ts_end++;
        }
    if (ts == end)
        die("the header's conventions say nothing of thread safety");
    fputs(".SH CONVENTIONS\n", f);
    put_body(f, top + start, ts - start, 0);
    put_body(f, top + ts_end, end - ts_end, 0);

    fputs(".SH NAMING\n", f);
    put_part(f, "Names follow one rule");

    fputs(".SH HANDLES\n", f);
    const struct section *handles = section_of("Handles and their lifetimes");
    for (size_t k = 0; k < handles->nitems; k++)
        put_item(f, &handles->items[k]);

    put_errors(f);

    fputs(".SH THREAD SAFETY\n.PP\n", f);
    for (size_t i = ts; i < ts_end; i++)
        put_text(f, i == ts ? skip_space(top[i]) + 2 : skip_space(top[i]), 1);
    fputs(".PP\nEach handle under HANDLES says whether threads may share "
          "it; the limit\n.B NPYIO_LIMIT_THREADS\n(under LIMITS) says how "
          "many threads one call may use.\n", f);
}

/* LIMITS (with the untrusted set) and FLAGS. */
static void put_limits_and_flags(FILE *f)
{
    fputs(".SH LIMITS\n", f);
    const struct section *options =
        section_of("Options: resource limits and allocator");
    put_body(f, item_of(options, "npyio_limit")->doc,
             item_of(options, "npyio_limit")->ndoc, 0);
    for (size_t k = 0; k < options->nitems; k++)
        if (options->items[k].kind == CONST &&
            starts_with(options->items[k].name, "NPYIO_LIMIT_"))
            put_const(f, &options->items[k]);
    fputs(".SS Untrusted input\n", f);
    put_body(f, item_of(options, "npyio_options_set_untrusted")->doc,
             item_of(options, "npyio_options_set_untrusted")->ndoc, 0);

    fputs(".SH FLAGS\n", f);
    const struct section *flags = section_of("Per-call flags");
    for (size_t k = 0; k < flags->nitems; k++)
        put_item(f, &flags->items[k]);
}

static void write_overview(void)
{
    char *path;
    FILE *f = open_page("npyio", &path);
    put_th(f, "npyio", "npyio.h");
    fputs(".SH NAME\nnpyio \\- read and write NumPy .npy and .npz files "
          "(overview of libnpyio)\n", f);
    put_synopsis_head(f);
    put_overview_description(f);
    put_conventions(f);
    put_limits_and_flags(f);
    fputs(".SH VERSIONS\n", f);
    put_part(f, "Every declaration says");
    fputs(".SH EXAMPLES\n", f);
    put_example(f, "tour_first.c");
    put_see_also(f, "npyio");
    close_page(f, path);
}

/* The sections npyio.3 shows whole (put_conventions, put_limits_and_flags):
 * their constants' link pages lead there. */
static int shown_by_overview(const char *title)
{
    return strcmp(title, "Handles and their lifetimes") == 0 ||
           strcmp(title, "Per-call flags") == 0;
}

/* A page per family, and the link pages of every section. */
static void write_sections(void)
{
    int used[NFAMILIES] = {0};
    for (size_t k = 0; k < nsections; k++) {
        const struct section *sec = &sections[k];
        const struct family *fam = family_of(sec->title);
        int calls = 0, consts = 0;
        for (size_t j = 0; j < sec->nitems; j++) {
            calls += sec->items[j].kind == FUNC;
            consts += is_public_const(&sec->items[j]);
        }
        if (fam == NULL && calls > 0)
            die("section \"%s\" declares functions but has no page: add it "
                "to the families of src/man/gen_man.c", sec->title);
        if (fam == NULL && shown_by_overview(sec->title))
            write_links(sec, "npyio", 0);
        else if (fam == NULL && consts > 0)
            die("section \"%s\" defines constants but no page shows them: "
                "add it to the families of src/man/gen_man.c", sec->title);
        if (fam == NULL)
            continue;
        used[fam - families]++;
        write_family(sec, fam);
    }
    for (size_t k = 0; k < NFAMILIES; k++)
        if (used[k] != 1)
            die("the header has %d sections \"%s\"", used[k],
                families[k].section);
}

/* A page written by hand, read: PAGE of ".../PAGE.3.in", and its lines. */
static void read_extra(const char *template_path, struct extra *x)
{
    const char *base = strrchr(template_path, '/');
    base = base != NULL ? base + 1 : template_path;
    size_t n = strlen(base), suffix = strlen(".3.in");
    if (n <= suffix || strcmp(base + n - suffix, ".3.in") != 0)
        die("%s: a page written by hand must be named PAGE.3.in",
            template_path);
    x->name = xstrndup(base, n - suffix);
    x->source = base;
    x->lines = read_lines(template_path, &x->nlines);
}

/* It written: its lines after the title line, its `.\" EXAMPLE FILE`
 * lines replaced by the programs. */
static void write_extra(const struct extra *x)
{
    static const char directive[] = ".\\\" EXAMPLE ";
    char *path;
    FILE *f = open_page(x->name, &path);
    put_th(f, x->name, x->source);
    for (size_t k = 0; k < x->nlines; k++) {
        if (starts_with(x->lines[k], directive))
            put_example(f, skip_space(x->lines[k] + strlen(directive)));
        else
            fprintf(f, "%s\n", x->lines[k]);
    }
    close_page(f, path);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fputs("usage: gen_man HEADER EXAMPLE_DIR OUT_DIR [PAGE.3.in...]\n",
              stderr);
        return 2;
    }
    example_dir = argv[2];
    out_dir = argv[3];
    nextra = argc - 4;
    extras = xrealloc(NULL, (size_t)nextra * sizeof *extras);
    for (int k = 0; k < nextra; k++)
        read_extra(argv[4 + k], &extras[k]);
    read_header(argv[1]);
    write_sections();
    write_overview();
    for (int k = 0; k < nextra; k++)
        write_extra(&extras[k]);
    return failed;
}
