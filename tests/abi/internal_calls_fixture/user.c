/* A module of the fixture that calls the other's public function that
 * returns a status (reported) and the one that returns none (allowed). */
#include "api.h"

int fixture_user(void);

int fixture_user(void)
{
    int h = 0;
    npyio_status st = npyio_fixture_open(&h);

    npyio_fixture_free(&h);
    return st;
}
