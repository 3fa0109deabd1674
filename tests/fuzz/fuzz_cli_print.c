/*
 * fuzz_cli_print.c - libFuzzer target for the npyio tool: print and dump
 * on each input, and on an archive's first four members, in this process
 * (see fuzz_cli.h: what is checked, and the cap on what an input may
 * inflate to).
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cli_files f;

    if (fuzz_cli_start(data, size, "fuzz_cli_print", &f) != 0)
        return 0;
    fuzz_cli_print(&f);
    fuzz_cli_end(&f);
    return 0;
}
