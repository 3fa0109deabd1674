/*
 * fuzz_cli_write.c - libFuzzer target for the npyio tool: convert (to
 * big-endian Fortran order; the output must load to the input's array)
 * and unpack (each file written must be the bytes of a member of its
 * name) on each input, in this process (see fuzz_cli.h, with the cap on
 * what an input may inflate to).
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cli_files f;

    if (fuzz_cli_start(data, size, "fuzz_cli_write", &f) != 0)
        return 0;
    check_convert(f.in, f.out);
    check_unpack(f.in, f.dir);
    fuzz_cli_end(&f);
    return 0;
}
