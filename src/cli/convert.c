#include "cli.h"
int cli_convert(const cli_args *a)
{
    (void)a;
    return EXIT_INVALID;
}
