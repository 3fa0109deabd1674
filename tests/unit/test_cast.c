/*
 * test_cast.c - the conversion kernels of cast.c: half floats bit by bit
 * (every half back and forth, rounding ties to even, subnormals,
 * overflow, NaN), single rounding where two would differ (int64 to f4,
 * f8 to f2), integer wrapping, float to integer limits and the
 * NPYIO_E_OVERFLOW status with its index and value, bool, complex, byte
 * orders, the casting rule's refusals with their messages, long doubles
 * of other hosts; and a reader reading with a type (whole, chunks, rows,
 * Fortran order) with its state and failure rules. The full table and
 * NumPy's values are checked by interop/cast_check.py.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "scratch.h"
#include "cast.h"
#include "descr.h"
#include "reader.h"
#include "threads.h"

#include <float.h>
#include <math.h>

static npyio_dtype *dtype(const char *type)
{
    npyio_dtype *dt = NULL;

    assert_ok(npyio_dtype_parse(type, strlen(type), NULL, &dt));
    return dt;
}

/* Plan from -> to under a rule; the status and, on failure, the message. */
static npyio_status plan(const char *from, const char *to,
                         npyio__casting casting, npyio__cast_plan *p)
{
    npyio_dtype *a = dtype(from), *b = dtype(to);
    npyio__mem mem;
    npyio_status st;

    npyio__mem_init(&mem, NULL);
    st = npyio__cast_plan_make(a, b, casting, &mem, p);
    npyio_dtype_unref(a);
    npyio_dtype_unref(b);
    return st;
}

/* Convert n elements with a plan that must be allowed. */
static npyio_status cast(const char *from, const char *to,
                         npyio__casting casting, const void *src, void *dst,
                         size_t n)
{
    npyio__cast_plan p;

    assert_ok(plan(from, to, casting, &p));
    return npyio__cast_apply(&p, src, dst, n, 0);
}

static void test_half_round_trip(void **state)
{
    uint32_t h;

    (void)state;
    for (h = 0; h < 0x10000u; h++) {
        double d = npyio__half_to_double((uint16_t)h);

        if (isnan(d))
            continue;
        if (npyio__half_from_double(d) != h)
            fail_msg("half 0x%04x -> %.17g -> 0x%04x", (unsigned)h, d,
                     (unsigned)npyio__half_from_double(d));
    }
    assert_true(isnan(npyio__half_to_double(0x7e00)));
    assert_int_equal(npyio__half_from_double(npyio__half_to_double(0x7e00)),
                     0x7e00);
    assert_int_equal(npyio__half_from_double(npyio__half_to_double(0xfe00)),
                     0xfe00);
    assert_true(npyio__half_to_double(0x0001) == ldexp(1, -24));
    assert_true(npyio__half_to_double(0x7bff) == 65504.0);
    assert_true(signbit(npyio__half_to_double(0x8000)));
}

static void test_half_rounding(void **state)
{
    static const struct { double d; uint16_t h; } cases[] = {
        {0.0, 0x0000}, {-0.0, 0x8000}, {1.0, 0x3c00},
        {65504.0, 0x7bff}, {65519.99, 0x7bff}, {65520.0, 0x7c00},
        {1e300, 0x7c00}, {-1e300, 0xfc00},
        {5.960464477539063e-08, 0x0001},     /* 2^-24, the least */
        {2.9802322387695312e-08, 0x0000},    /* 2^-25: a tie, to even 0 */
        {2.9802322387695316e-08, 0x0001},    /* just above the tie */
        {8.940696716308594e-08, 0x0002},     /* 1.5 units: to even 2 */
        {6.103515625e-05, 0x0400},           /* 2^-14, the least normal */
        {6.100535392761231e-05, 0x0400},     /* 1023.5 units: to 1024 */
        {6.097555160522461e-05, 0x03ff},     /* 1023 units */
        {1e-30, 0x0000}, {-1e-30, 0x8000}, {4.9e-324, 0x0000},
        {1.00048828125, 0x3c00},             /* 1 + 2^-11: tie, even */
        {1.00146484375, 0x3c02},             /* 1 + 3 * 2^-11: tie, up */
        {2049.0, 0x6800}, {2051.0, 0x6802},
        {65536.0, 0x7c00}, {-65504.0, 0xfbff},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (npyio__half_from_double(cases[i].d) != cases[i].h)
            fail_msg("%.17g: 0x%04x, expected 0x%04x", cases[i].d,
                     (unsigned)npyio__half_from_double(cases[i].d),
                     (unsigned)cases[i].h);
    assert_int_equal(npyio__half_from_double(INFINITY), 0x7c00);
    assert_int_equal(npyio__half_from_double(-INFINITY), 0xfc00);
    assert_int_equal(npyio__half_from_double(NAN) & 0x7c00, 0x7c00);
    assert_true((npyio__half_from_double(NAN) & 0x3ff) != 0);
}

/* Conversions that would round twice through a wider intermediate. */
static void test_single_rounding(void **state)
{
    /* 2^62 + 2^38 + 1: through f8 it is 2^62 + 2^38, a tie that goes to
     * 2^62; once, it is above the tie: 2^62 + 2^39. */
    int64_t i = ((int64_t)1 << 62) + ((int64_t)1 << 38) + 1;
    uint64_t u = ((uint64_t)1 << 63) + ((uint64_t)1 << 39) + 1;
    float f = 0;
    /* 1 + 2^-11 + 2^-40: through f4 a tie (to 1.0); once, 1 + 2^-10. */
    double d = 1.0 + ldexp(1, -11) + ldexp(1, -40);
    uint16_t h = 0;

    (void)state;
    assert_ok(cast("i8", "f4", NPYIO__CAST_SAME_KIND, &i, &f, 1));
    /* The conversion is the CPU's (cvtsi2ss rounds once); valgrind
     * emulates it through a double, rounding twice: there only the
     * memory is checked (tests/valgrind/memcheck.py sets the variable). */
    if (getenv("NPYIO_UNDER_VALGRIND") == NULL)
        assert_true(f == ldexpf(1, 62) + ldexpf(1, 39));
    assert_ok(cast("u8", "f4", NPYIO__CAST_SAME_KIND, &u, &f, 1));
    if (getenv("NPYIO_UNDER_VALGRIND") == NULL)
        assert_true(f == ldexpf(1, 63) + ldexpf(1, 40));
    assert_ok(cast("f8", "f2", NPYIO__CAST_SAME_KIND, &d, &h, 1));
    assert_int_equal(h, 0x3c01);
    assert_ok(cast("c16", "f2", NPYIO__CAST_UNSAFE,
                   (double[2]){d, 5.0}, &h, 1));
    assert_int_equal(h, 0x3c01);
}

static void test_integers_wrap(void **state)
{
    int64_t i8[4] = {300, -1, INT64_MIN, 255};
    uint64_t u8[2] = {UINT64_MAX, (uint64_t)1 << 63};
    uint8_t u1[4];
    int8_t i1[2];
    uint32_t u4[4];
    int16_t i2 = -2;
    uint16_t be[1];
    unsigned char *b = (unsigned char *)be;

    (void)state;
    assert_ok(cast("i8", "u1", NPYIO__CAST_UNSAFE, i8, u1, 4));
    assert_int_equal(u1[0], 44);
    assert_int_equal(u1[1], 255);
    assert_int_equal(u1[2], 0);
    assert_int_equal(u1[3], 255);
    assert_ok(cast("i8", "u4", NPYIO__CAST_UNSAFE, i8, u4, 4));
    assert_int_equal(u4[1], 0xffffffffu);
    assert_ok(cast("u8", "i1", NPYIO__CAST_SAME_KIND, u8, i1, 2));
    assert_int_equal(i1[0], -1);
    assert_int_equal(i1[1], 0);
    /* Sign extension, to the other byte order. */
    assert_ok(cast("i2", ">u2", NPYIO__CAST_UNSAFE, &i2, be, 1));
    assert_int_equal(b[0], 0xff);
    assert_int_equal(b[1], 0xfe);
}

/* Float to integer: truncation where the target holds the result, else
 * NPYIO_E_OVERFLOW with the element's index and value. */
static void test_float_to_int_limits(void **state)
{
    static const struct {
        const char *to;
        double v;
        int ok;
        int64_t want;
    } cases[] = {
        {"i4", 2147483647.9, 1, 2147483647}, {"i4", 2147483648.0, 0, 0},
        {"i4", -2147483648.9, 1, INT32_MIN}, {"i4", -2147483649.0, 0, 0},
        {"u1", -0.9, 1, 0}, {"u1", -1.0, 0, 0}, {"u1", 255.5, 1, 255},
        {"u1", 256.0, 0, 0}, {"i1", -128.7, 1, -128}, {"i1", 127.99, 1, 127},
        {"i8", 9223372036854774784.0, 1, INT64_MAX - 1023},
        {"i8", 9223372036854775808.0, 0, 0},
        {"i8", -9223372036854775808.0, 1, INT64_MIN},
        {"u8", 18446744073709549568.0, 1, -2048},
        {"u8", 18446744073709551616.0, 0, 0},
        {"i2", INFINITY, 0, 0}, {"i2", -INFINITY, 0, 0}, {"u2", NAN, 0, 0},
        {"i4", -0.0, 1, 0},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double src[3] = {1.0, 2.0, cases[i].v};
        unsigned char dst[24];
        npyio__cast_plan p;
        npyio_status st;
        int64_t got = 0;
        size_t size;

        assert_ok(plan("f8", cases[i].to, NPYIO__CAST_UNSAFE, &p));
        size = p.to.size;
        st = npyio__cast_apply(&p, src, dst, 3, 40);
        if (!cases[i].ok) {
            if (st != NPYIO_E_OVERFLOW)
                fail_msg("%.17g to %s: %s", cases[i].v, cases[i].to,
                         npyio_status_string(st));
            assert_error_contains("element 42: ");
            assert_error_contains(cases[i].to);
            continue;
        }
        assert_ok(st);
        memcpy(&got, dst + 2 * size, size); /* little or big: below */
        if (size < 8) {
            union { int8_t i1; int16_t i2; int32_t i4; uint8_t u1;
                    uint16_t u2; uint32_t u4; } v;

            memcpy(&v, dst + 2 * size, size);
            if (cases[i].to[0] == 'u')
                got = size == 1 ? (int64_t)v.u1
                      : size == 2 ? (int64_t)v.u2 : (int64_t)v.u4;
            else
                got = size == 1 ? (int64_t)v.i1
                      : size == 2 ? (int64_t)v.i2 : (int64_t)v.i4;
        }
        if (got != cases[i].want)
            fail_msg("%.17g to %s: %lld, expected %lld", cases[i].v,
                     cases[i].to, (long long)got, (long long)cases[i].want);
    }
    /* The value is in the message. */
    {
        double v[2] = {0.0, 1e10};
        int32_t out[2];

        assert_status(cast("f8", "i4", NPYIO__CAST_UNSAFE, v, out, 2),
                      NPYIO_E_OVERFLOW);
        assert_error_contains("element 1: 10000000000 does not fit in");
        v[1] = NAN;
        assert_status(cast("f8", "i4", NPYIO__CAST_UNSAFE, v, out, 2),
                      NPYIO_E_OVERFLOW);
        assert_error_contains("nan");
        assert_int_equal(out[0], 0); /* the ones before were converted */
    }
}

static void test_bool_and_complex(void **state)
{
    double f[4] = {NAN, -0.0, 0.5, -INFINITY};
    double c[4] = {0.0, 1.0, 3.5, -2.0};
    unsigned char b[4];
    float r[2];
    double back[4];
    unsigned char one[2] = {1, 0};

    (void)state;
    assert_ok(cast("f8", "b1", NPYIO__CAST_UNSAFE, f, b, 4));
    assert_memory_equal(b, "\x01\x00\x01\x01", 4);
    assert_ok(cast("c16", "b1", NPYIO__CAST_UNSAFE, c, b, 2));
    assert_memory_equal(b, "\x01\x01", 2);
    assert_ok(cast("c16", "f4", NPYIO__CAST_UNSAFE, c, r, 2));
    assert_true(r[0] == 0.0f && r[1] == 3.5f);
    assert_ok(cast("b1", "c16", NPYIO__CAST_SAFE, one, back, 2));
    assert_true(back[0] == 1.0 && back[1] == 0.0 && back[2] == 0.0);
    assert_ok(cast("f2", "c16", NPYIO__CAST_SAFE,
                   (uint16_t[1]){0x3c00}, back, 1));
    assert_true(back[0] == 1.0 && back[1] == 0.0);
}

/* Any byte order on both sides. */
static void test_byte_orders(void **state)
{
    unsigned char be_i4[4] = {0xff, 0xff, 0xff, 0xfe}; /* -2 */
    unsigned char be_c8[8] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}; /* 1-2j */
    unsigned char out[16], want[16];
    double d;

    (void)state;
    assert_ok(cast(">i4", "f8", NPYIO__CAST_SAFE, be_i4, &d, 1));
    assert_true(d == -2.0);
    assert_ok(cast(">c8", ">c16", NPYIO__CAST_SAFE, be_c8, out, 1));
    memcpy(want, "\x3f\xf0\0\0\0\0\0\0\xc0\0\0\0\0\0\0\0", 16);
    assert_memory_equal(out, want, 16);
    assert_ok(cast(">c8", "<c8", NPYIO__CAST_SAFE, be_c8, out, 1));
    assert_memory_equal(out, "\0\0\x80\x3f\0\0\0\xc0", 8);
    assert_ok(cast(">i4", "<i4", NPYIO__CAST_SAFE, be_i4, out, 1));
    assert_memory_equal(out, "\xfe\xff\xff\xff", 4);
}

static void test_rule_refusals(void **state)
{
    npyio__cast_plan p;

    (void)state;
    assert_status(plan("<f8", "<i4", NPYIO__CAST_SAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("cannot cast '<f8' to '<i4' under the 'safe' "
                          "rule; NPYIO_READ_CAST_UNSAFE allows it (NumPy's "
                          "astype casts unsafely by default)");
    assert_status(plan("<i8", ">i4", NPYIO__CAST_SAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    /* the weakest flag that allows it is named */
    assert_error_contains("'safe' rule; NPYIO_READ_CAST_SAME_KIND allows it");
    assert_ok(plan("<i8", ">i4", NPYIO__CAST_SAME_KIND, &p));
    assert_status(plan("<c16", "<f8", NPYIO__CAST_SAME_KIND, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("under the 'same_kind' rule; "
                          "NPYIO_READ_CAST_UNSAFE allows it");
    assert_status(plan("<i2", "<u8", NPYIO__CAST_SAME_KIND, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_ok(plan("<i2", "<u8", NPYIO__CAST_UNSAFE, &p));
    assert_ok(plan("|u1", "<f2", NPYIO__CAST_SAFE, &p));
    assert_status(plan("<u2", "<f2", NPYIO__CAST_SAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_status(plan("|S3", "<f8", NPYIO__CAST_UNSAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("'|S3' is a bytes type (S)");
    assert_status(plan("<f8", "<M8[ns]", NPYIO__CAST_UNSAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("datetime64");
    assert_status(plan("[('a', '<i4')]", "<f8", NPYIO__CAST_UNSAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("a record type");
    assert_status(plan("<U2", "<i4", NPYIO__CAST_UNSAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_status(plan("|O", "<i4", NPYIO__CAST_UNSAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_int_equal(npyio__cast_rule(NPYIO_READ_CAST_SAME_KIND |
                                      NPYIO_READ_CAST_UNSAFE),
                     NPYIO__CAST_UNSAFE);
}

/* Long doubles: this host's size converts; another host's is refused. */
static void test_long_double(void **state)
{
    const char *other = sizeof(long double) == 16 ? "<f12" : "<f16";
    const char *other_c = sizeof(long double) == 16 ? "<c24" : "<c32";
    double d[2] = {0.1, -3.0}, back[2];
    long double ld[2];
    npyio__cast_plan p;

    (void)state;
    assert_ok(cast("f8", "g", NPYIO__CAST_SAFE, d, ld, 2));
    /* d[0], not the constant 0.1: with x87's excess precision (32-bit
     * x86) the constant is evaluated as a long double. */
    assert_true(ld[0] == (long double)d[0] && ld[1] == -3.0L);
    assert_ok(cast("g", "f8", NPYIO__CAST_SAME_KIND, ld, back, 2));
    assert_memory_equal(back, d, sizeof d);
    assert_status(plan(other, "<f8", NPYIO__CAST_UNSAFE, &p),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("long double");
    assert_status(plan("<f8", other_c, NPYIO__CAST_UNSAFE, &p),
                  NPYIO_E_UNSUPPORTED);
}

/* A reader with a type: every way of reading, and its rules. */
static void test_reader(void **state)
{
    static const int64_t shape[2] = {5, 3};
    double v[15];
    int32_t want_c[15], got[15];
    char path[256];
    npyio_reader *r = NULL;
    size_t n = 0, i, total;
    void *all = NULL;

    (void)state;
    for (i = 0; i < 15; i++)
        v[i] = (double)i * 1.5 - 7.0;
    path_in_dir(path, sizeof path, "f.npy");
    /* Fortran order: v is column-major (5, 3) */
    {
        npyio_header *h = make_header(">f8", 2, shape, 1);
        unsigned char be[120];
        npyio_writer *w = NULL;

        for (i = 0; i < 15; i++) {
            uint64_t bits;
            int k;

            memcpy(&bits, &v[i], 8);
            for (k = 0; k < 8; k++)
                be[8 * i + (size_t)k] = (unsigned char)(bits >> (56 - 8 * k));
        }
        assert_ok(npyio_writer_create_path(path, h, NPYIO_WRITE_NO_SYNC, NULL,
                                         &w));
        assert_ok(npyio_writer_write(w, be, sizeof be));
        assert_ok(npyio_writer_close(w));
        npyio_header_free(h);
    }
    for (i = 0; i < 15; i++) /* C order index (row, col) = col * 5 + row */
        want_c[i] = (int32_t)v[(i % 3) * 5 + i / 3];
    /* whole, C order */
    assert_ok(npyio_reader_open_path(path, NULL, &r));
    assert_status(npyio_reader_set_type(r, "i4", 0), NPYIO_E_UNSUPPORTED);
    assert_error_contains(npyio__host_order() == '<'
                              ? "cannot cast '>f8' to '<i4' under the 'safe'"
                              : "cannot cast '>f8' to '>i4' under the "
                                "'safe'");
    assert_ok(npyio_reader_set_type(r, "=i4", NPYIO_READ_CAST_UNSAFE));
    assert_status(npyio_reader_read(r, got, 59, NPYIO_READ_C_ORDER),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_ok(npyio_reader_read(r, got, sizeof got, NPYIO_READ_C_ORDER));
    assert_memory_equal(got, want_c, sizeof got);
    assert_status(npyio_reader_set_type(r, NULL, 0), NPYIO_E_STATE);
    assert_ok(npyio_reader_close(r));
    /* chunks of 2 elements, C order */
    assert_ok(npyio_reader_open_path(path, NULL, &r));
    assert_ok(npyio_reader_set_type(r, "i4", NPYIO_READ_CAST_UNSAFE));
    memset(got, 0, sizeof got);
    total = 0;
    while (npyio_reader_read_chunk(r, (char *)got + total, 8,
                                   NPYIO_READ_C_ORDER, &n) == NPYIO_OK)
        total += n;
    assert_int_equal(total, sizeof got);
    assert_memory_equal(got, want_c, sizeof got);
    /* rows 1..3 in C order, and in Fortran order */
    assert_ok(npyio_reader_read_rows(r, 1, 3, got, 36, NPYIO_READ_C_ORDER));
    assert_memory_equal(got, want_c + 3, 36);
    assert_ok(npyio_reader_read_rows(r, 1, 3, got, 36, 0));
    for (i = 0; i < 9; i++)
        assert_int_equal(got[i], (int32_t)v[(i / 3) * 5 + 1 + i % 3]);
    assert_ok(npyio_reader_close(r));
    /* alloc, file order, to f4 */
    assert_ok(npyio_reader_open_path(path, NULL, &r));
    assert_ok(npyio_reader_set_type(r, "<f4", NPYIO_READ_CAST_SAME_KIND));
    assert_ok(npyio_reader_read_alloc(r, 0, &all, &n));
    assert_int_equal(n, 60);
    {
        unsigned char le[4];
        float f = (float)v[4];
        uint32_t bits;

        memcpy(&bits, &f, 4);
        for (i = 0; i < 4; i++)
            le[i] = (unsigned char)(bits >> (8 * i));
        assert_memory_equal((unsigned char *)all + 16, le, 4);
    }
    npyio_free(all);
    assert_ok(npyio_reader_close(r));
    /* a value that does not fit fails the reader, naming it */
    assert_ok(npyio_reader_open_path(path, NULL, &r));
    assert_ok(npyio_reader_set_type(r, "u1", NPYIO_READ_CAST_UNSAFE));
    assert_status(npyio_reader_read(r, got, sizeof got, 0),
                  NPYIO_E_OVERFLOW);
    assert_error_contains("element 0: -7 does not fit in '|u1'");
    assert_status(npyio_reader_read_rows(r, 0, 1, got, sizeof got, 0),
                  NPYIO_E_STATE);
    assert_ok(npyio_reader_close(r));
    /* npyio_load_as */
    {
        int ndim = 0;
        int64_t sh[2];

        assert_ok(npyio_load_as(path, "i8", NPYIO_READ_CAST_UNSAFE, NULL,
                                &all, &n, &ndim, sh, 2));
        assert_int_equal(n, 120);
        assert_int_equal(ndim, 2);
        assert_int_equal(((int64_t *)all)[3], want_c[3]);
        npyio_free(all);
        /* NULL: as stored, in native byte order and C order */
        assert_ok(npyio_load_as(path, NULL, 0, NULL, &all, &n, &ndim, sh,
                                2));
        assert_int_equal(n, 120);
        assert_true(((double *)all)[4] == v[(4 % 3) * 5 + 4 / 3]);
        npyio_free(all);
        assert_status(npyio_load_as(path, "i8", NPYIO_READ_CAST_UNSAFE,
                                    NULL, &all, &n, &ndim, sh, 1),
                      NPYIO_E_BUFFER_TOO_SMALL);
        assert_null(all);
        assert_status(npyio_load_as(path, "i8", 0, NULL, &all, &n, &ndim,
                                    sh, 2),
                      NPYIO_E_UNSUPPORTED);
        assert_error_contains("npyio_load_as: ");
    }
}

/* Reads as f4 of the (ROWS, COLS) Fortran file at path in C order, each
 * way: whole (on `threads` threads), chunks of `cap` bytes (0: none),
 * rows [5, 255); the reader's block set to `block` (SIZE_MAX: the
 * default). */
enum { ROWS = 301, COLS = 7, CELLS = ROWS * COLS };

static void read_as_f4(const char *path, size_t block, unsigned threads,
                       size_t cap, float *got)
{
    npyio_options *o = NULL;
    npyio_reader *r = NULL;
    size_t total = 0, n = 0;
    npyio_status st;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads));
    assert_ok(npyio_reader_open_path(path, o, &r));
    npyio_options_free(o);
    if (block != SIZE_MAX)
        npyio__reader_set_block_bytes(r, block);
    assert_ok(npyio_reader_set_type(r, "=f4", NPYIO_READ_CAST_SAME_KIND));
    if (cap == 0) {
        assert_ok(npyio_reader_read(r, got, CELLS * 4, NPYIO_READ_C_ORDER));
        assert_ok(npyio_reader_read_rows(r, 5, 250, got + CELLS,
                                         250 * COLS * 4, NPYIO_READ_C_ORDER));
    } else {
        while ((st = npyio_reader_read_chunk(r, (char *)got + total,
                                             total + cap <= CELLS * 4
                                                 ? cap
                                                 : CELLS * 4 - total,
                                             NPYIO_READ_C_ORDER, &n)) ==
               NPYIO_OK)
            total += n;
        assert_status(st, NPYIO_END);
        assert_int_equal(total, CELLS * 4);
    }
    assert_ok(npyio_reader_close(r));
}

/* Fortran data converted in C order goes through the reader's block:
 * whole reads (on 1 and 3 threads, a block for each part), chunks of
 * one element, of nine and of three rows and two elements, and rows,
 * with the default block (every row fits), none (piece by piece) and
 * one of two rows and a byte (refilled): every element as converted
 * one by one. */
static void test_reordered_conversions(void **state)
{
    static const int64_t shape[2] = {ROWS, COLS};
    static double file[CELLS];
    static float want[CELLS], got[CELLS + 250 * COLS];
    const size_t blocks[3] = {SIZE_MAX, 0, 2 * COLS * 8 + 1};
    const size_t caps[3] = {4, 36, 4 * (3 * COLS + 2)};
    size_t saved = npyio__part_bytes_min, i, b, c;
    npyio_header *h = make_header(npyio__host_order() == '<' ? "<f8" : ">f8",
                                  2, shape, 1);
    npyio_writer *w = NULL;
    char path[256];
    unsigned threads;

    (void)state;
    for (i = 0; i < CELLS; i++) /* file order: column after column */
        file[i] = (double)i - 1000.5;
    for (i = 0; i < CELLS; i++)
        want[i] = (float)file[(i % COLS) * ROWS + i / COLS];
    path_in_dir(path, sizeof path, "reorder.npy");
    assert_ok(npyio_writer_create_path(path, h, NPYIO_WRITE_NO_SYNC, NULL,
                                       &w));
    assert_ok(npyio_writer_write(w, file, sizeof file));
    assert_ok(npyio_writer_close(w));
    npyio_header_free(h);
    npyio__part_bytes_min = 1; /* parts of this small array */
    for (b = 0; b < 3; b++) {
        for (threads = 1; threads <= 3; threads += 2) {
            memset(got, 0, sizeof got);
            read_as_f4(path, blocks[b], threads, 0, got);
            assert_memory_equal(got, want, sizeof want);
            assert_memory_equal(got + CELLS, want + 5 * COLS,
                                250 * COLS * 4);
        }
        for (c = 0; c < 3; c++) {
            memset(got, 0, sizeof got);
            read_as_f4(path, blocks[b], 1, caps[c], got);
            assert_memory_equal(got, want, sizeof want);
        }
    }
    npyio__part_bytes_min = saved;
}

static int setup(void **state)
{
    (void)state;
    return scratch_make("npyio-cast");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_round_trip),
        cmocka_unit_test(test_half_rounding),
        cmocka_unit_test(test_single_rounding),
        cmocka_unit_test(test_integers_wrap),
        cmocka_unit_test(test_float_to_int_limits),
        cmocka_unit_test(test_bool_and_complex),
        cmocka_unit_test(test_byte_orders),
        cmocka_unit_test(test_rule_refusals),
        cmocka_unit_test(test_long_double),
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_reordered_conversions),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
