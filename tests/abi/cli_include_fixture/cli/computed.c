/* computed.c - an include the check cannot follow. */
#define LIB_HEADER "lib.h"
#include LIB_HEADER
