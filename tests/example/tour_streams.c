/* Streams: readers and writers work on descriptors, FILE*, memory, or
 * your own callbacks. Here an array goes into growable memory and is
 * read back from it. */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    float values[4] = {1, 2, 3, 4};
    int64_t n = 4;
    npyio_dtype *f4;
    npyio_header *h;
    npyio_stream *s;
    npyio_writer *w;

    npyio_dtype_parse("f4", 2, NULL, &f4);
    npyio_header_new(f4, 1, &n, 0, &h);
    npyio_stream_create_memory(NULL, &s);
    npyio_writer_create_stream(s, h, 0, NULL, &w);
    npyio_writer_write(w, values, sizeof values);
    npyio_writer_close(w);

    void *bytes;
    size_t len;
    npyio_stream_take_bytes(s, &bytes, &len);      /* a whole .npy file */
    npyio_stream_close(s);

    npyio_reader *r;
    float back[4];
    npyio_stream_open_memory(bytes, len, NULL, &s);
    npyio_reader_open_stream(s, NULL, &r);
    npyio_status st = npyio_reader_read(r, back, sizeof back, 0);
    printf("%zu bytes, %s, back[3] = %g\n", len, npyio_status_string(st),
           back[3]);
    npyio_reader_close(r);
    npyio_stream_close(s);
    npyio_free(bytes);
    npyio_header_free(h);
    npyio_dtype_unref(f4);
    return st != NPYIO_OK;
}
