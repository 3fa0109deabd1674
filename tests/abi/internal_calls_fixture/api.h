/* The public header of the fixture of check_internal_calls.sh, written as
 * include/npyio.h writes its declarations. */
#ifndef FIXTURE_API_H
#define FIXTURE_API_H

#define NPYIO_API
typedef int npyio_status;

NPYIO_API npyio_status npyio_fixture_open(int *out);
NPYIO_API void npyio_fixture_free(int *handle);

#endif
