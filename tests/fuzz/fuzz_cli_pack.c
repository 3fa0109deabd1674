/*
 * fuzz_cli_pack.c - libFuzzer target for the npyio tool: pack on each
 * input, in this process; the archive's member must be the input's bytes
 * (see fuzz_cli.h, with the cap on what an input may inflate to). Apart
 * from the others because pack costs the most per run.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cli_files f;

    if (fuzz_cli_start(data, size, "fuzz_cli_pack", &f) != 0)
        return 0;
    check_pack(f.in, f.npz, data, size);
    fuzz_cli_end(&f);
    return 0;
}
