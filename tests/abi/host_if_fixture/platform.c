/* a capability chosen here: allowed */
#if defined(__linux__)
#endif
