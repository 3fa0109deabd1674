/*
 * check.h - the harness of the tool's tests that run without cmocka
 * (test_pickle.c, test_spool.c): CHECK(cond, format, ...) counts a pass,
 * or counts a failure and prints "FAIL file:line: " and the message;
 * check_summary() prints "N passed, M failed" and gives the exit status
 * (0 only when nothing failed). Include once per program.
 */
#ifndef NPYIO_CLI_CHECK_H
#define NPYIO_CLI_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            passed++;                                                        \
        } else {                                                             \
            failed++;                                                        \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                             \
            putchar('\n');                                                   \
        }                                                                    \
    } while (0)

/* The closing line and main's return value. */
static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

#endif /* NPYIO_CLI_CHECK_H */
