/* Your allocator: every block libnpyio allocates for a handle made with
 * these options comes from it. Large blocks are asked 2 MiB aligned (huge
 * pages). npyio_free() releases any block, whichever allocator made it. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <npyio.h>
#include <stdio.h>
#include <stdlib.h>

static size_t live;                      /* bytes held by the library */

static void *my_alloc(void *user, size_t size, size_t alignment)
{
    void *p = NULL;

    (void)user;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *)
                                                      : alignment,
                       size ? size : 1) != 0)
        return NULL;                     /* the call fails: NPYIO_E_NOMEM */
    live += size;
    return p;
}

static void my_free(void *user, void *ptr, size_t size)
{
    (void)user;
    live -= size;
    free(ptr);
}

int main(void)
{
    static const npyio_allocator mine = {sizeof(npyio_allocator), my_alloc,
                                         NULL /* realloc: optional */,
                                         my_free};
    npyio_options *opts;
    npyio_header *h;
    void *data;
    double x[3] = {1, 2, 3};
    int64_t n = 3;

    npyio_save("x.npy", "f8", 1, &n, x, sizeof x, NPYIO_WRITE_NO_SYNC,
                     NULL);
    npyio_options_new(&opts);
    npyio_options_set_allocator(opts, &mine, NULL);
    npyio_load_with_header("x.npy", 0, opts, &h, &data);
    printf("held while loaded: %zu bytes\n", live);
    npyio_free(data);
    npyio_header_free(h);
    npyio_options_free(opts);
    printf("held after: %zu bytes\n", live);
    return live != 0;
}
