/* Growing files: append rows to an existing file (crash-safe: NumPy loads
 * the old or the new shape), and fill rows of a file in place, as
 * several processes may do at once. */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    int32_t first[2][3] = {{1, 2, 3}, {4, 5, 6}}, more[3] = {7, 8, 9};
    int64_t shape[2] = {2, 3}, one[2] = {1, 3};
    npyio_dtype *i4;
    npyio_header *rows;
    npyio_writer *w;

    npyio_save("log.npy", "i4", 2, shape, first, sizeof first,
                     NPYIO_WRITE_NO_SYNC, NULL);
    npyio_dtype_parse("i4", 2, NULL, &i4);
    npyio_header_new(i4, 2, one, 0, &rows);        /* what is appended */
    if (npyio_writer_open_append_path("log.npy", rows, 0, NULL, &w) != NPYIO_OK)
        return 1;                                  /* NPYIO_E_LOCKED if busy */
    npyio_writer_write(w, more, sizeof more);
    npyio_writer_close(w);         /* rows synced, then the shape rewritten */

    if (npyio_writer_open_in_place_path("log.npy", 0, NULL, &w) != NPYIO_OK)
        return 1;
    npyio_writer_write_rows(w, 0, 1, more, sizeof more);   /* row 0 */
    npyio_status st = npyio_writer_close(w);
    printf("log.npy: %s\n", npyio_status_string(st));      /* shape (3, 3) */
    npyio_header_free(rows);
    npyio_dtype_unref(i4);
    return st != NPYIO_OK;
}
