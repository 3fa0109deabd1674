/* internal.c - a library-internal header by name, found through an
 * include path that has src/ on it. */
#include "lib.h"
#  include <lib.h>
