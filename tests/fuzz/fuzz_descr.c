/*
 * fuzz_descr.c - libFuzzer target for dtype descriptions: the input is a
 * descr as a header holds it, or a type string. A dtype that parses must
 * come back equal (npyio_dtype_is_equal) from each way out of it:
 *   - its descr text (what np.save would write), parsed again, which also
 *     gives the same text again;
 *   - for scalars, its dtype.str, parsed again;
 *   - rebuilt from what the getters say (fields with names, titles,
 *     offsets, element types and shapes; subarrays; the itemsize) through
 *     the record builder and npyio_dtype_new_subarray().
 * Never a crash, leak or hang; nesting bounded by the untrusted limits.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"

static npyio_options *tight(void)
{
    return fuzz_options(0, 0);
}

/* The text a describer gives, in a new buffer (NULL if it refuses). */
static char *text_of(npyio_status (*describe)(const npyio_dtype *, char *,
                                              size_t, size_t *),
                     const npyio_dtype *dt, size_t *len)
{
    char *text;

    if (describe(dt, NULL, 0, len) != NPYIO_E_BUFFER_TOO_SMALL)
        return NULL;
    text = malloc(*len + 1);
    check(text != NULL);
    check(describe(dt, text, *len + 1, len) == NPYIO_OK);
    return text;
}

static void same_through_text(const npyio_dtype *dt)
{
    size_t len = 0, again_len = 0;
    char *text = text_of(npyio_dtype_descr, dt, &len), *again;
    npyio_dtype *back = NULL;

    if (text == NULL)
        return; /* records no file can hold (overlapping fields, ...) */
    check(npyio_dtype_parse(text, len, NULL, &back) == NPYIO_OK);
    check(npyio_dtype_is_equal(dt, back));
    again = text_of(npyio_dtype_descr, back, &again_len);
    check(again != NULL && again_len == len && memcmp(again, text, len) == 0);
    free(again);
    free(text);
    npyio_dtype_unref(back);
    if (npyio_dtype_kind(dt) == NPYIO_KIND_RECORD ||
        npyio_dtype_subarray_ndim(dt) > 0)
        return; /* dtype.str of these is '|V<n>' */
    text = text_of(npyio_dtype_str, dt, &len);
    check(text != NULL);
    check(npyio_dtype_parse(text, len, NULL, &back) == NPYIO_OK);
    check(npyio_dtype_is_equal(dt, back));
    free(text);
    npyio_dtype_unref(back);
}

/* A dtype built again from its getters; NULL where the builder cannot
 * say it (names holding NUL characters, which NumPy allows). */
static npyio_dtype *rebuild(const npyio_dtype *dt)
{
    npyio_record_builder *b = NULL;
    npyio_dtype *out = NULL;
    size_t i, n;
    int ok = 1;

    if (npyio_dtype_subarray_ndim(dt) > 0) {
        npyio_dtype *base = rebuild(npyio_dtype_subarray_base(dt));

        if (base != NULL)
            check(npyio_dtype_new_subarray(base, npyio_dtype_subarray_ndim(dt),
                                       npyio_dtype_subarray_shape(dt),
                                       &out) == NPYIO_OK);
        npyio_dtype_unref(base);
        return out;
    }
    if (npyio_dtype_kind(dt) != NPYIO_KIND_RECORD)
        return npyio_dtype_ref((npyio_dtype *)dt);
    check(npyio_record_builder_new(0, NULL, &b) == NPYIO_OK);
    n = npyio_dtype_field_count(dt);
    for (i = 0; i < n && ok; i++) {
        size_t name_len = 0, title_len = 0;
        const char *name = npyio_dtype_field_name(dt, i, &name_len),
                   *title = npyio_dtype_field_title(dt, i, &title_len);
        npyio_dtype *field = rebuild(npyio_dtype_field_dtype(dt, i));

        ok = field != NULL && strlen(name) == name_len &&
             (title == NULL || strlen(title) == title_len);
        if (ok)
            check(npyio_record_builder_add(
                      b, name, title, npyio_dtype_field_offset(dt, i), field,
                      npyio_dtype_field_ndim(dt, i),
                      npyio_dtype_field_shape(dt, i)) == NPYIO_OK);
        npyio_dtype_unref(field);
    }
    if (ok)
        check(npyio_record_builder_finish(b, npyio_dtype_itemsize(dt),
                                          &out) == NPYIO_OK);
    npyio_record_builder_free(b);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npyio_dtype *dt = NULL, *again;

    if (npyio_dtype_parse((const char *)data, size, tight(), &dt) !=
        NPYIO_OK)
        return 0;
    same_through_text(dt);
    again = rebuild(dt);
    check(again == NULL || npyio_dtype_is_equal(dt, again));
    npyio_dtype_unref(again);
    npyio_dtype_unref(dt);
    return 0;
}
