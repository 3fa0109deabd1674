/* Which libnpyio is running, and whether it is at least the one this
 * program was compiled against (a newer libnpyio.so.1 may be installed). */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    printf("compiled against %s, running %s\n", NPYIO_VERSION_STRING,
           npyio_version_string());
    if (npyio_version_number() < NPYIO_VERSION_NUMBER) {
        fprintf(stderr, "libnpyio %s is older than this program needs\n",
                npyio_version_string());
        return 1;
    }
    return 0;
}
