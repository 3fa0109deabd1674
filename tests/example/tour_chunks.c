/* Larger than memory: a file in chunks of whole elements, in native byte
 * order and C order, and a range of rows. ./tour_chunks FILE.npy */
#include <npyio.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    static unsigned char buf[1 << 16];
    npyio_reader *r;
    size_t got, total = 0;
    npyio_status st;

    if (argc != 2 || npyio_reader_open_path(argv[1], NULL, &r) != NPYIO_OK)
        return 1;
    while ((st = npyio_reader_read_chunk(r, buf, sizeof buf,
                                         NPYIO_READ_NATIVE |
                                             NPYIO_READ_C_ORDER,
                                         &got)) == NPYIO_OK)
        total += got;                              /* use buf[0..got) */
    printf("%zu bytes in chunks (%s)\n", total, npyio_status_string(st));

    /* Rows 1 and 2 (along axis 0), wherever they lie in the file. */
    st = npyio_reader_read_rows(r, 1, 2, buf, sizeof buf, NPYIO_READ_NATIVE);
    printf("rows 1-2: %s\n", npyio_status_string(st));
    npyio_reader_close(r);
    return 0;
}
