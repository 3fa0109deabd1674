/* Headers as bytes, exactly as np.save writes them, and byte orders:
 * native data written as a big-endian file. */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    npyio_dtype *f8, *be;
    npyio_header *h;
    int64_t dims[2] = {2, 2};
    unsigned char buf[256];
    size_t n;

    npyio_dtype_parse("float64", 7, NULL, &f8);    /* or "<f8", "d" */
    npyio_dtype_new_byteorder(f8, '>', &be);           /* newbyteorder('>') */
    npyio_header_new(be, 2, dims, 0, &h);
    npyio_header_emit(h, 0, buf, sizeof buf, &n);       /* np.save's bytes */
    printf("%.*s", (int)(n - 10), (const char *)buf + 10);

    double data[4] = {1.5, 2.5, 3.5, 4.5};
    npyio_dtype_swap(be, data, sizeof data);            /* native -> '>' */
    npyio_save_with_header("be.npy", h, data, sizeof data, NPYIO_WRITE_NO_SYNC, NULL);

    npyio_header *parsed;
    size_t used;
    npyio_header_parse(buf, n, NULL, &parsed, &used);   /* and back */
    printf("parsed %zu bytes: %d dimensions\n", used,
           npyio_header_ndim(parsed));
    npyio_header_free(parsed);
    npyio_header_free(h);
    npyio_dtype_unref(be);
    npyio_dtype_unref(f8);
    return 0;
}
