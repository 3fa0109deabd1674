/* fine: a compiler, not a host */
#if defined(__GNUC__)
#endif
