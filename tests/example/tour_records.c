/* Records: build one (np.dtype([('id', '<i4'), ('pos', '<f8', (3,))])),
 * save an array of them, and read its fields back without any struct. */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    npyio_dtype *i4, *f8, *rec;
    npyio_record_builder *b;
    int64_t three = 3, count = 2;

    npyio_dtype_parse("<i4", 3, NULL, &i4);
    npyio_dtype_parse("<f8", 3, NULL, &f8);
    npyio_record_builder_new(0, NULL, &b);
    npyio_record_builder_add(b, "id", NULL, -1, i4, 0, NULL);
    npyio_record_builder_add(b, "pos", NULL, -1, f8, 1, &three);
    npyio_record_builder_finish(b, 0, &rec);

    unsigned char rows[2][28] = {{0}};             /* 4 + 3 * 8 bytes each */
    npyio_header *h;
    npyio_header_new(rec, 1, &count, 0, &h);
    npyio_save_with_header("records.npy", h, rows, sizeof rows, NPYIO_WRITE_NO_SYNC, NULL);

    for (size_t i = 0; i < npyio_dtype_field_count(rec); i++) {
        const npyio_dtype *f = npyio_dtype_field_dtype(rec, i);
        char str[16];
        npyio_dtype_str(f, str, sizeof str, NULL);
        const int64_t *shape = npyio_dtype_field_shape(rec, i);
        printf("%s at byte %lld: %s x %lld\n",
               npyio_dtype_field_name(rec, i, NULL),
               (long long)npyio_dtype_field_offset(rec, i), str,
               shape ? (long long)shape[0] : 1LL);
    }
    npyio_header_free(h);
    npyio_record_builder_free(b);
    npyio_dtype_unref(rec);
    npyio_dtype_unref(f8);
    npyio_dtype_unref(i4);
    return 0;
}
