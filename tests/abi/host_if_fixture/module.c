/* a module asking the host itself */
#if defined(O_TMPFILE)
#endif
#ifdef NPYIO_PORTABLE
#endif
