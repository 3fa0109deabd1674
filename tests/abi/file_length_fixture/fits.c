/*
 * fits.c - a fixture for check_file_length.sh (ctest
 * abi_file_length_fails, run with --max 30): 30 lines, which passes.
 * Never compiled.
 */
int filler_5;
int filler_6;
int filler_7;
int filler_8;
int filler_9;
int filler_10;
int filler_11;
int filler_12;
int filler_13;
int filler_14;
int filler_15;
int filler_16;
int filler_17;
int filler_18;
int filler_19;
int filler_20;
int filler_21;
int filler_22;
int filler_23;
int filler_24;
int filler_25;
int filler_26;
int filler_27;
int filler_28;
/* line 30: the last */
