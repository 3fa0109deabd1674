/* parent.c - climbs out of the tool's folder, as text.c once did. */
#include "../lib.h"
