/*
 * fuzz_header.c - libFuzzer target for the header parser (and through it
 * the literal parser and descr parsing). Any input must give a status and
 * never crash, leak or read out of bounds; a header that parses must emit,
 * and the emitted bytes must parse back to a header that emits the same
 * bytes again (emission is a fixed point).
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"

static void round_trip(const npyio_header *h)
{
    size_t len = 0, len2 = 0;
    unsigned char *first, *second;
    npyio_header *again = NULL;

    if (npyio_header_emit(h, 0, NULL, 0, &len) != NPYIO_E_BUFFER_TOO_SMALL)
        return; /* some dtypes have no descr: nothing to compare */
    first = malloc(len);
    check(first != NULL);
    check(npyio_header_emit(h, 0, first, len, &len) == NPYIO_OK);
    check(npyio_header_parse(first, len, NULL, &again, NULL) == NPYIO_OK ||
          npyio_header_length(h) > 10000); /* beyond the default limit */
    if (again != NULL) {
        check(npyio_header_count(again) == npyio_header_count(h));
        check(npyio_header_nbytes(again) == npyio_header_nbytes(h));
        check(npyio_dtype_is_equal(npyio_header_dtype(again),
                                npyio_header_dtype(h)));
        second = malloc(len);
        check(second != NULL);
        check(npyio_header_emit(again, 0, second, len, &len2) == NPYIO_OK);
        check(len2 == len && memcmp(first, second, len) == 0);
        free(second);
        npyio_header_free(again);
    }
    free(first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static npyio_options *tight;
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    size_t consumed = 0;
    npyio_status st;

    if (tight == NULL) { /* small limits reach the limit paths */
        npyio_options_new(&tight);
        npyio_options_set_limit(tight, NPYIO_LIMIT_DEPTH, 4);
        npyio_options_set_limit(tight, NPYIO_LIMIT_NDIM, 3);
        npyio_options_set_limit(tight, NPYIO_LIMIT_HEADER_SIZE, 200);
    }
    st = npyio_header_parse(data, size, NULL, &h, &consumed);
    check((st == NPYIO_OK) == (h != NULL));
    check(st != NPYIO_OK || (consumed <= size && (int64_t)consumed ==
                             npyio_header_data_offset(h)));
    check(st != NPYIO_E_TRUNCATED || consumed > size);
    check(npyio_last_error() != NULL);
    if (h != NULL) {
        round_trip(h);
        npyio_header_free(h);
    }
    st = npyio_header_parse(data, size, tight, &h, NULL);
    npyio_header_free(h);
    /* The same bytes as a descr (type string or literal). */
    if (npyio_dtype_parse((const char *)data, size, tight, &dt) ==
        NPYIO_OK) {
        char text[256];
        size_t len;

        check(npyio_dtype_str(dt, text, sizeof text, &len) == NPYIO_OK);
        npyio_dtype_unref(dt);
    }
    return 0;
}
