/* Headers, readers and writers: the array's description as an object,
 * data read into your own buffer, written in pieces. ./tour_headers FILE */
#include <npyio.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    npyio_header *h;
    void *data;

    /* The header handed back describes the bytes handed back. */
    if (argc != 2 || npyio_load_with_header(argv[1], NPYIO_READ_NATIVE |
                                NPYIO_READ_C_ORDER, NULL, &h, &data) != 0)
        return 1;
    size_t n = (size_t)npyio_header_nbytes(h);
    npyio_save_with_header("copy.npy", h, data, n, 0, NULL);  /* temp file, fsync, rename */

    npyio_reader *r;                              /* into your own buffer */
    void *mine = malloc(n ? n : 1);
    npyio_reader_open_path(argv[1], NULL, &r);
    npyio_reader_read(r, mine, n, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER);
    npyio_reader_close(r);

    npyio_writer *w;                              /* in pieces */
    npyio_writer_create_path("pieces.npy", h, NPYIO_WRITE_NO_SYNC, NULL, &w);
    npyio_writer_write(w, data, n / 2);
    npyio_writer_write(w, (char *)data + n / 2, n - n / 2);
    npyio_status st = npyio_writer_close(w);      /* checks the byte count */
    printf("%s\n", npyio_status_string(st));
    free(mine);
    npyio_free(data);
    npyio_header_free(h);
    return st != NPYIO_OK;
}
