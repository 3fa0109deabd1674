/*
 * fits.c - a fixture for check_file_length.sh (ctest
 * abi_file_length_fails, run with --max 30): 30 lines, which passes.
 * Never compiled.
 */
























/* line 30: the last */
