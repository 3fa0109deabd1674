/*
 * fuzz_cli.c - libFuzzer target for the npyio tool: every command on each
 * input, in this process: what fuzz_cli_info, fuzz_cli_print,
 * fuzz_cli_write and fuzz_cli_pack do, one after the other (see
 * fuzz_cli.h: what is checked, and the cap on what an input may inflate
 * to). For fuzzing, those four are faster apart; this one replays a
 * finding through every command.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cli_files f;

    if (fuzz_cli_start(data, size, "fuzz_cli", &f) != 0)
        return 0;
    fuzz_cli_info(&f);
    fuzz_cli_print(&f);
    check_convert(f.in, f.out);
    check_unpack(f.in, f.dir);
    check_pack(f.in, f.npz, data, size);
    fuzz_cli_end(&f);
    return 0;
}
