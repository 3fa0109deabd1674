/* own.h - a header of the fixture tool's own. */
int fixture_own(void);
