/*
 * long.c - a fixture for check_function_length.sh (ctest
 * abi_function_length_fails): fits_exactly has a 60-line body, which
 * passes, and one_too_long a 61-line one, which fails. Never compiled.
 */

static int fits_exactly(int x)
{
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    return x;
}

static int one_too_long(int x)
{
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    x += 1;
    return x;
}
