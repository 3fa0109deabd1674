/*
 * too_long.c - a fixture for check_file_length.sh (ctest
 * abi_file_length_fails, run with --max 30): 31 lines, which fails.
 * Never compiled.
 */

























/* line 31: the last */
