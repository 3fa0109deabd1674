/* good.c - includes the check allows: system headers, the public header,
 * the tool's own headers (also named from src/). */
#include <stdio.h>

#include "npyio.h"
#include "own.h"
#include "cli/own.h"
