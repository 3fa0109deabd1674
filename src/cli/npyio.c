/*
 * npyio.c - the `npyio` command: inspect, print, dump, validate and
 * convert .npy files from a terminal or a pipeline. Built only on the
 * public API (include/npyio.h).
 *
 * This file is the dispatcher: the command table with each command's
 * help, the command line, and main. Each command is a file of its own
 * (info.c, validate.c, dump.c, print.c, convert.c, pack.c, unpack.c,
 * wrap.c),
 * the reading commands share common.c, archive.c and input.c. Exit
 * codes: 0 success, 1 invalid, unsupported or unreadable input, 2 usage
 * errors.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define DEFAULT_HEADER_LIMIT (1 << 20)
#define DEFAULT_PRINT_MAX 1000 /* NumPy's print threshold */

/* Options a command may take, besides --max-header-size and --help. */
#define OPT_JSON 1u
#define OPT_MAX 2u
#define OPT_ORDER 4u
#define OPT_BYTEORDER 8u
#define OPT_NO_SYNC 16u
#define OPT_UNTRUSTED 32u
#define OPT_COMPRESS 64u
#define OPT_THREADS 128u
#define OPT_NO_ALIGN 256u
#define OPT_APPEND 512u
#define OPT_FORCE 1024u
#define OPT_DTYPE 2048u
#define OPT_SHORT 4096u
#define OPT_SHAPE 8192u
#define OPT_CASTING 16384u
#define OPT_ZLIB 32768u

typedef struct command {
    const char *name;
    const char *summary; /* one line for the overview */
    const char *help;    /* the command's own --help */
    unsigned options;
    int min_files, max_files; /* max -1: any number */
    int (*run)(const cli_args *a);
} command;

static const command *find_command(const char *name);

/* --threads of dump and convert (src/cli/pipeline.h). */
#define THREADS_HELP                                                         \
    "  --threads N           use N threads (1-64, 0: one per core; default\n" \
    "                        1): an .npy file (not a pipe) is cut into parts\n" \
    "                        of 4 MiB read and converted on N threads and\n"   \
    "                        written in order, in 2N buffers (about 8N MiB);\n" \
    "                        reordering, pipes and archive members stay on\n" \
    "                        one thread; the output is the same byte for\n"   \
    "                        byte\n"

static const char common_help[] =
    "  --max-header-size N   accept headers up to N bytes (default 1 MiB)\n"
    "  -h, --help            this text\n";

static void print_overview(FILE *out);

static int usage(const command *cmd, const char *problem)
{
    if (problem != NULL)
        fprintf(stderr, "npyio: %s\n", problem);
    if (cmd != NULL)
        fprintf(stderr, "%s\nTry 'npyio %s --help'.\n", cmd->summary,
                cmd->name);
    else
        print_overview(stderr);
    return EXIT_USAGE;
}

/* ---- the command table -------------------------------------------------- */

#define MEMBER_HELP                                                           \
    "  MEMBER                for an .npz archive FILE, the array to use,\n"    \
    "                        found as np.load finds it: the member of that\n"  \
    "                        name, else the one named MEMBER.npy (among\n"     \
    "                        members of one name, the last; a note names\n"    \
    "                        the member read when others share its name or\n"  \
    "                        key). An archive without MEMBER is an error\n"    \
    "                        naming its first 10 keys; an .npy FILE has no\n"  \
    "                        members.\n"

#define UNTRUSTED_HELP                                                        \
    "  --untrusted           the library's limits for files from strangers:\n" \
    "                        headers up to 10000 bytes, 32 dimensions, 4096\n" \
    "                        members, 256 MiB a member, 1 GiB in all (see\n"  \
    "                        npyio_options_set_untrusted), and an archive\n"  \
    "                        on a pipe copied up to 1 GiB + 512 MiB + 64 KiB;\n"\
    "                        without it, every archive NumPy writes is read\n"

#define SYNC_HELP                                                             \
    "  --no-sync             do not wait for the output to reach the disk\n"   \
    "                        (faster; the replacement stays atomic, but a\n"   \
    "                        power loss soon after may lose the new file)\n"

static const command commands[] = {
    {"info", "usage: npyio info [--json | --short [--no-header]] FILE...",
     "Print the header facts of each file: format version, header length,\n"
     "data offset, descr (NumPy's text), shape, Fortran order, itemsize,\n"
     "element count and data bytes. A file whose data is shorter than its\n"
     "header promises is an error: the text shows its header's facts, then\n"
     "the error; --json and --short print no line for a file that fails.\n"
     "For an .npz archive, one block per member in archive order: its name,\n"
     "compression, offsets, sizes and CRC, and for an .npy member its header\n"
     "facts.\n"
     "\n"
     "  --json                one JSON object per file per line, with the keys\n"
     "                        path (FILE as given; - for standard input)\n"
     "                        version header_len data_offset descr shape\n"
     "                        fortran_order itemsize count nbytes; a file\n"
     "                        that fails has no line, only a message. For an\n"
     "                        archive: path and members, a list of objects\n"
     "                        with name (NumPy's key), file, compression\n"
     "                        (stored, deflate, bzip2, lzma, ... or \"method\n"
     "                        N\"), array (true for .npy members, false for\n"
     "                        others, null when npyio cannot tell: with reason\n"
     "                        when it cannot decompress or declines to read\n"
     "                        the member), and for .npy members the nine\n"
     "                        keys above (data_offset from the member's\n"
     "                        start), member_offset (the member's first byte\n"
     "                        in the archive), compressed_size, crc32 and\n"
     "                        aligned (the array data's offset in the\n"
     "                        archive is a multiple of 64). Every member is\n"
     "                        listed: one that cannot be read (a bad header,\n"
     "                        damage) has error instead, and exit is 1\n"
     "  --short               one line per .npy file and per archive member,\n"
     "                        as unzip -l lists a ZIP: fields separated by\n"
     "                        tabs: name (the file as given; a member's key),\n"
     "                        dtype (descr), shape, order (C or F),\n"
     "                        compression (stored, deflate, ...; none for an\n"
     "                        .npy file), size and compressed_size in bytes\n"
     "                        (an .npy file: its header plus data, twice).\n"
     "                        A line of these column names comes first: after\n"
     "                        an archive's line (its name and a colon), and\n"
     "                        before .npy files' lines. A member that is no\n"
     "                        .npy file has - for dtype, shape and order, one\n"
     "                        npyio cannot decompress or read ?; a member\n"
     "                        that cannot be read has its error on standard\n"
     "                        error (exit 1)\n"
     "  --no-header           with --short: no column names (the lines of\n"
     "                        npyio 1.0, for scripts)\n"
     UNTRUSTED_HELP,
     OPT_JSON | OPT_SHORT | OPT_UNTRUSTED, 1, -1, cli_info},
    {"print", "usage: npyio print [--max N] FILE [MEMBER]",
     "Print the values as NumPy's repr() does: records as tuples, and only\n"
     "the first and last three along each axis, with ..., beyond N elements.\n"
     "The text is for people; scripts should use info --json or dump.\n"
     "\n"
     MEMBER_HELP
     "\n"
     "  --max N               summarise arrays of more than N elements\n"
     "                        (default 1000, NumPy's threshold)\n"
     UNTRUSTED_HELP,
     OPT_MAX | OPT_UNTRUSTED, 1, 2, cli_print_command},
    {"dump", "usage: npyio dump [--threads N] FILE [MEMBER]",
     "Write the data to standard output: exactly the header's data bytes, in\n"
     "C order and this host's byte order (every record field, through nested\n"
     "records and subarrays). Padding bytes pass through unchanged. Arrays of\n"
     "Python objects are refused. A member's CRC-32 is checked when its end\n"
     "is reached: a mismatch is an error after the bytes went out.\n"
     "A deflated member of up to 257 MiB (an array of 256 MiB and its header)\n"
     "stored as dumped (native, C order) is inflated whole in one call\n"
     "(libdeflate), its CRC-32 checked before any byte goes out: memory holds\n"
     "the member and its compressed bytes. Larger members, and those\n"
     "converted, are inflated in bounded chunks (zlib); with --threads N,\n"
     "a member with a block index inflates its blocks ahead on the N\n"
     "threads (memory: up to 6N blocks of 4 MiB, at most 128 MiB).\n"
     "\n"
     MEMBER_HELP
     THREADS_HELP
     UNTRUSTED_HELP,
     OPT_UNTRUSTED | OPT_THREADS, 1, 2, cli_dump},
    {"validate", "usage: npyio validate FILE...",
     "Check each file entirely, header and data length, as the reader does;\n"
     "exit 0 only if every file is valid. Old forms NumPy still loads are\n"
     "valid. The data of an object array must be one whole pickle (protocols\n"
     "0 to 5): its opcodes are walked, never run, up to STOP (bytes after it\n"
     "are ignored, as pickle.load ignores them); an unknown opcode, an\n"
     "argument cut short or a missing STOP is named with its byte.\n"
     "\n"
     "An .npz archive is valid when its directory is (every local header\n"
     "equal to its entry, no members overlapping), every .npy member is\n"
     "valid as a file and matches its CRC-32, and every other member matches\n"
     "its CRC-32. A member npyio cannot decompress (bzip2, lzma, encrypted)\n"
     "makes the archive invalid, named as such.\n"
     "\n"
     UNTRUSTED_HELP,
     OPT_UNTRUSTED, 1, -1, cli_validate},
    {"convert", "usage: npyio convert [--order C|F] [--byteorder ORDER] "
                "[--dtype TYPE [--casting safe|same_kind|unsafe]] "
                "[--threads N] [--no-sync] IN OUT",
     "Rewrite the .npy file IN as OUT, byte for byte as np.save writes the\n"
     "converted array. An existing OUT is replaced only when all went well.\n"
     "An .npz archive IN is refused: take its arrays out with unpack.\n"
     "A progress bar is shown on standard error when it is a terminal.\n"
     "\n"
     "  --order C|F           memory order of OUT (default C); Fortran order\n"
     "                        is recorded only where it matters, as np.save does\n"
     "  --byteorder ORDER     native (default), little or big: the byte order\n"
     "                        of every field of OUT\n"
     "  --dtype TYPE          convert the elements to the numeric type TYPE\n"
     "                        (b1 i1..i8 u1..u8 f2 f4 f8 c8 c16, this host's\n"
     "                        long double), as astype(TYPE) does; OUT's byte\n"
     "                        order is still --byteorder's\n"
     "  --casting RULE        safe (default), same_kind or unsafe: which\n"
     "                        conversions --dtype allows (np.can_cast)\n"
     THREADS_HELP
     SYNC_HELP
     UNTRUSTED_HELP,
     OPT_ORDER | OPT_BYTEORDER | OPT_NO_SYNC | OPT_UNTRUSTED | OPT_DTYPE |
         OPT_CASTING | OPT_THREADS,
     2, 2,
     cli_convert},
    {"pack", "usage: npyio pack [--compress[=LEVEL]] [--zlib] [--threads N] "
             "[--no-align] [--append] [--no-sync] OUT.npz NAME=FILE.npy...",
     "Write the .npy files as the archive OUT.npz, which np.load opens with\n"
     "the keys NAME: each member is its file byte for byte (member NAME.npy).\n"
     "FILE alone takes its base name without .npy as NAME; NAME stops at the\n"
     "first =. FILE may be - (standard input) once. Keys are checked as the\n"
     "library checks them (UTF-8, no backslash, not absolute, no ..) and may\n"
     "not repeat. An existing OUT is replaced only when every file was packed.\n"
     "A progress bar is shown on standard error when it is a terminal.\n"
     "\n"
     "  --compress[=LEVEL]    deflate the members at zlib LEVEL 1-9 (default\n"
     "                        6, np.savez_compressed's); 0 or no --compress\n"
     "                        stores them, as np.savez does. A file of up to\n"
     "                        257 MiB is read whole and deflated in one\n"
     "                        libdeflate call (memory: the file and its\n"
     "                        output) on 1 or 2 threads; bigger files, standard\n"
     "                        input and 3 or more threads use zlib\n"
     "  --zlib                deflate with zlib only, as 1.0 did: on one\n"
     "                        thread np.savez_compressed's bytes exactly\n"
     "  --threads N           deflate with N threads (1-64, 0: one per core;\n"
     "                        default 1); with 3 or more, or 2 with --zlib,\n"
     "                        in blocks with an index readers use\n"
     "  --no-align            do not pad stored members so that their array\n"
     "                        data starts at a multiple of 64 bytes (the\n"
     "                        default, which lets readers map them aligned)\n"
     "  --append              add the members to the existing archive OUT\n"
     "                        (crash-safe: a copy renamed over it at the end;\n"
     "                        the old archive is read with the limits below)\n"
     SYNC_HELP
     UNTRUSTED_HELP,
     OPT_COMPRESS | OPT_ZLIB | OPT_THREADS | OPT_NO_ALIGN | OPT_APPEND |
         OPT_NO_SYNC | OPT_UNTRUSTED,
     2, -1, cli_pack},
    {"unpack", "usage: npyio unpack [--force] [--threads N] [--no-sync] "
               "FILE.npz DIR",
     "Write every .npy member of the archive to DIR/<member file name>, byte\n"
     "for byte, after checking its header, size and CRC-32; folders of DIR\n"
     "are made as names need (a/b.npy), and DIR itself if it is missing.\n"
     "Members that are not .npy files are skipped, each with a line on\n"
     "standard error. Before anything is written, the whole archive is\n"
     "refused if a name would land outside DIR (.., absolute, a backslash, a\n"
     "NUL byte, an empty or . component), if two names collide, or if a\n"
     "folder on the way is a symbolic link or not a folder. Each file is\n"
     "written to a temporary in its folder and then named, never following\n"
     "a link below DIR nor (without --force) replacing a file made\n"
     "meanwhile: never half a file, and no temporary left by a failure.\n"
     "A progress bar is shown on standard error when it is a terminal.\n"
     "\n"
     "  --force               replace existing files (without it, an existing\n"
     "                        file is an error before anything is written)\n"
     "  --threads N           the library's thread limit for the archive\n"
     "                        (1-64, 0: one per core; default 1); members are\n"
     "                        copied on one thread in this version\n"
     SYNC_HELP
     UNTRUSTED_HELP,
     OPT_FORCE | OPT_NO_SYNC | OPT_UNTRUSTED | OPT_THREADS, 2, 2,
     cli_unpack},
    {"wrap", CLI_WRAP_USAGE,
     "Make the raw elements in RAW (what dump writes, ndarray.tofile, a\n"
     "program's fwrite) the .npy file OUT, byte for byte as np.save writes\n"
     "np.fromfile(RAW, TYPE).reshape(SHAPE, order=ORDER). The bytes are not\n"
     "changed: RAW must hold exactly the array's bytes, in TYPE's byte order\n"
     "and the order --order names. RAW may be - (standard input), OUT - for\n"
     "standard output. An existing OUT is replaced only when all went well.\n"
     "\n"
     "  --dtype TYPE          the element type, as np.dtype takes it (f8, >i4,\n"
     "                        U10, M8[ns]) or as a .npy header writes it (a\n"
     "                        record: \"[('x', '<i4'), ('y', '<f8')]\");\n"
     "                        Python objects and subarray types are refused\n"
     "  --shape D0,D1,...     the sizes of the axes, '' for a 0-d array\n"
     "  --order C|F           the order of the elements in RAW (default C);\n"
     "                        OUT is a Fortran-order file where the two\n"
     "                        orders differ, as np.save writes it\n"
     SYNC_HELP
     "  --untrusted           OUT's header must pass the library's limits for\n"
     "                        files from strangers (32 dimensions, 10000\n"
     "                        header bytes, depth 16)\n",
     OPT_DTYPE | OPT_SHAPE | OPT_ORDER | OPT_NO_SYNC | OPT_UNTRUSTED, 2, 2,
     cli_wrap},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name)
{
    size_t i;

    for (i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void print_overview(FILE *out)
{
    size_t i;

    fputs("usage: npyio [--version] [-h|--help] COMMAND [OPTIONS] ARGS\n\n"
          "commands:\n", out);
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %s\n", commands[i].summary + strlen("usage: npyio "));
    fputs("\noptions of every command:\n", out);
    fputs(common_help, out);
    fputs("FILE may be - for standard input. 'npyio COMMAND --help' says more.\n",
          out);
}

static void print_command_help(const command *cmd)
{
    printf("%s\n\n%s\noptions of every command:\n%s", cmd->summary, cmd->help,
           common_help);
}

/* ---- the command line --------------------------------------------------- */

/* An option's value: "--name=value" or "--name value"; NULL if argv[*i]
 * is another option. "--name" as the last word has the value "", which
 * the option then refuses with its own usage line (it is not unknown). */
static const char *option_value(int argc, char **argv, int *i,
                                const char *name)
{
    size_t n = strlen(name);

    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    return *i + 1 < argc ? argv[++*i] : "";
}

static int parse_count(const char *text, int64_t *out)
{
    char *end;
    long long n;

    errno = 0;
    n = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || n < 0)
        return -1;
    *out = (int64_t)n;
    return 0;
}

/* A flag (an option without a value) of the command, set in a; 0 if arg
 * is no such flag. */
static int parse_flag(const command *cmd, const char *arg, cli_args *a)
{
    if ((cmd->options & OPT_JSON) && strcmp(arg, "--json") == 0)
        a->json = 1;
    else if ((cmd->options & OPT_SHORT) && strcmp(arg, "--short") == 0)
        a->short_list = 1;
    else if ((cmd->options & OPT_SHORT) && strcmp(arg, "--no-header") == 0)
        a->no_header = 1;
    else if ((cmd->options & OPT_NO_SYNC) && strcmp(arg, "--no-sync") == 0)
        a->no_sync = 1;
    else if ((cmd->options & OPT_UNTRUSTED) &&
             strcmp(arg, "--untrusted") == 0)
        a->untrusted = 1;
    else if ((cmd->options & OPT_NO_ALIGN) && strcmp(arg, "--no-align") == 0)
        a->no_align = 1;
    else if ((cmd->options & OPT_ZLIB) && strcmp(arg, "--zlib") == 0)
        a->zlib = 1;
    else if ((cmd->options & OPT_APPEND) && strcmp(arg, "--append") == 0)
        a->append = 1;
    else if ((cmd->options & OPT_FORCE) && strcmp(arg, "--force") == 0)
        a->force = 1;
    else if ((cmd->options & OPT_COMPRESS) && strcmp(arg, "--compress") == 0)
        a->level = 6; /* the value is optional: never the next word */
    else
        return 0;
    return 1;
}

/* --byteorder's value as a dtype byte order, or 0. */
static char byteorder_of(const char *v)
{
    if (strcmp(v, "native") == 0)
        return '=';
    if (strcmp(v, "little") == 0)
        return '<';
    if (strcmp(v, "big") == 0)
        return '>';
    return 0;
}

/* --dtype, --casting and --shape: 0 if taken, EXIT_USAGE if wrong, -1 if
 * the argument is neither. */
static int parse_dtype_option(const command *cmd, int argc, char **argv,
                              int *i, cli_args *a)
{
    const char *v;

    if ((cmd->options & OPT_DTYPE) &&
        (v = option_value(argc, argv, i, "--dtype")) != NULL) {
        a->dtype = v;
        return 0;
    }
    if ((cmd->options & OPT_SHAPE) &&
        (v = option_value(argc, argv, i, "--shape")) != NULL) {
        a->shape = v; /* read by wrap: '' is a 0-d shape */
        return 0;
    }
    if (!(cmd->options & OPT_CASTING) ||
        (v = option_value(argc, argv, i, "--casting")) == NULL)
        return -1;
    if (strcmp(v, "safe") == 0)
        a->cast_flags = 0;
    else if (strcmp(v, "same_kind") == 0)
        a->cast_flags = NPYIO_READ_CAST_SAME_KIND;
    else if (strcmp(v, "unsafe") == 0)
        a->cast_flags = NPYIO_READ_CAST_UNSAFE;
    else
        return usage(cmd, "--casting takes safe, same_kind or unsafe");
    return 0;
}

/* One option; returns 0, 1 for --help, or EXIT_USAGE. The flags and the
 * options with values have names apart, so which is tried first does not
 * matter. */
static int parse_option(const command *cmd, int argc, char **argv, int *i,
                        cli_args *a)
{
    const char *v;
    int64_t n;
    char order;

    if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0)
        return 1;
    if (parse_flag(cmd, argv[*i], a))
        return 0;
    if ((n = parse_dtype_option(cmd, argc, argv, i, a)) >= 0)
        return (int)n;
    if ((v = option_value(argc, argv, i, "--max-header-size")) != NULL) {
        if (parse_count(v, &n) != 0)
            return usage(cmd, "--max-header-size takes a byte count");
        a->header_limit = n;
    } else if ((cmd->options & OPT_COMPRESS) &&
               strncmp(argv[*i], "--compress=", 11) == 0) {
        if (parse_count(argv[*i] + 11, &n) != 0 || n > 9)
            return usage(cmd, "--compress takes a level from 0 to 9");
        a->level = (int)n;
    } else if ((cmd->options & OPT_THREADS) &&
               (v = option_value(argc, argv, i, "--threads")) != NULL) {
        if (parse_count(v, &n) != 0 || n > 64)
            return usage(cmd, "--threads takes a number from 0 (one per "
                              "core) to 64");
        a->threads = n;
    } else if ((cmd->options & OPT_MAX) &&
               (v = option_value(argc, argv, i, "--max")) != NULL) {
        if (parse_count(v, &a->max) != 0)
            return usage(cmd, "--max takes a number of elements");
    } else if ((cmd->options & OPT_ORDER) &&
               (v = option_value(argc, argv, i, "--order")) != NULL) {
        if (strcmp(v, "C") != 0 && strcmp(v, "F") != 0)
            return usage(cmd, "--order takes C or F");
        a->order = v[0];
    } else if ((cmd->options & OPT_BYTEORDER) &&
               (v = option_value(argc, argv, i, "--byteorder")) != NULL) {
        if ((order = byteorder_of(v)) == 0)
            return usage(cmd, "--byteorder takes native, little or big");
        a->byteorder = order;
    } else {
        fprintf(stderr, "npyio %s: unknown option ", cmd->name);
        cli_put_name(stderr, argv[*i]);
        fputc('\n', stderr);
        return usage(cmd, NULL);
    }
    return 0;
}

/* --threads N as NPYIO_LIMIT_THREADS: 0 is one per core (at most 64). */
static int set_threads(cli_args *a)
{
    int64_t n = a->threads;

    if (n == 0) {
        long cores = cli_os_cores();

        n = cores > 64 ? 64 : cores;
        a->threads = n;
    }
    return npyio_options_set_limit(a->options, NPYIO_LIMIT_THREADS, n) ==
                   NPYIO_OK
               ? 0
               : -1;
}

static int parse_args(const command *cmd, int argc, char **argv, cli_args *a)
{
    int i, options_done = 0;

    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    a->max = DEFAULT_PRINT_MAX;
    a->order = 'C';
    a->byteorder = '=';
    a->header_limit = -1;
    a->threads = -1;
    if (a->files == NULL || npyio_options_new(&a->options) != NPYIO_OK ||
        npyio_options_set_limit(a->options, NPYIO_LIMIT_HEADER_SIZE,
                                DEFAULT_HEADER_LIMIT) != NPYIO_OK) {
        fputs("npyio: out of memory\n", stderr);
        return EXIT_INVALID;
    }
    for (i = 0; i < argc; i++) {
        int rc;

        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = 1;
        } else if (!options_done && argv[i][0] == '-' && argv[i][1] != '\0') {
            rc = parse_option(cmd, argc, argv, &i, a);
            if (rc == 1) {
                print_command_help(cmd);
                return -1; /* done: exit 0 */
            }
            if (rc != 0)
                return rc;
        } else {
            a->files[a->nfiles++] = argv[i];
        }
    }
    /* The untrusted preset, then an explicit header limit and thread
     * count over it. */
    if (a->untrusted && npyio_options_set_untrusted(a->options) != NPYIO_OK)
        return cli_error(NULL, "out of memory");
    if (a->threads >= 0 && set_threads(a) != 0)
        return cli_error(NULL, "out of memory");
    if (a->header_limit >= 0 &&
        npyio_options_set_limit(a->options, NPYIO_LIMIT_HEADER_SIZE,
                                a->header_limit) != NPYIO_OK)
        return usage(cmd, "--max-header-size takes a byte count");
    if (a->nfiles < cmd->min_files)
        return usage(cmd, cmd->min_files == 1 ? "no FILE given"
                                              : "too few arguments");
    if (cmd->max_files >= 0 && a->nfiles > cmd->max_files)
        return usage(cmd, "too many arguments");
    if (a->zlib && a->level == 0)
        return usage(cmd, "--zlib chooses how members are deflated: give "
                          "--compress too");
    return 0;
}

/* Output that did not reach standard output (a full disk, a closed
 * pipe) is a failure, whichever command wrote it; a command that failed
 * already said why. */
static int stdout_written(int rc)
{
    int flushed = fflush(stdout) == 0, err = errno;

    if ((flushed && !ferror(stdout)) || rc != 0)
        return rc;
    fprintf(stderr, "npyio: writing: %s\n",
            flushed ? "a write to standard output failed" : strerror(err));
    return EXIT_INVALID;
}

int main(int argc, char **argv)
{
    const command *cmd;
    cli_args a;
    int rc;

    cli_os_start(&argc, &argv);
    if (argc < 2)
        return usage(NULL, NULL);
    if (strcmp(argv[1], "--version") == 0) {
        printf("npyio %s\n", npyio_version_string());
        return stdout_written(0);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_overview(stdout);
        return stdout_written(0);
    }
    cmd = find_command(argv[1]);
    if (cmd == NULL) {
        fputs("npyio: unknown command ", stderr);
        cli_put_name(stderr, argv[1]);
        fputc('\n', stderr);
        return usage(NULL, NULL);
    }
    memset(&a, 0, sizeof a);
    a.command = cmd->name;
    rc = parse_args(cmd, argc - 2, argv + 2, &a);
    if (rc == 0)
        rc = cmd->run(&a);
    else if (rc < 0)
        rc = 0;
    npyio_options_free(a.options);
    free(a.files);
    return stdout_written(rc);
}
