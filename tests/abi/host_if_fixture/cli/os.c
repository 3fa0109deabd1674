/* the tool choosing a capability: allowed */
#ifdef MADV_HUGEPAGE
#endif
