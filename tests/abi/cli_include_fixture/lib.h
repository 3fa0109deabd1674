/* lib.h - a library-internal header of the fixture's src/. */
int fixture_lib(void);
