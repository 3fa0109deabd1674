// cxx_consumer.cpp - libnpyio from C++17 through the installed npyio.hpp,
// built against the installed package with -std=c++17 -Wall -Wextra
// -Wpedantic -Werror, once with pkg-config's flags and once with
// find_package(npyio) (tests/consumer/run_cxx.sh).
//
//     cxx_consumer OUT [IN]
//
// Writes into OUT and checks on its own: the six tasks as one-liners (a
// 2-D double array saved; any .npy loaded as doubles; an .npz of two
// stored members and one deflated; an archive read member by member,
// opened once; rows appended; a member appended), every deduced type
// (types.npz), and what cnpy gets wrong: a missing folder is
// NPYIO_E_NOT_FOUND, a corrupt member NPYIO_E_CHECKSUM, a big-endian
// file loads as the right doubles, a record file loads untyped (also one
// whose descr list is over 1 KiB). Also the
// owners: move-only, a writer or archive writer dropped before close()
// aborts, close() throws; an array through memory streams. With IN (files NumPy wrote, tests/consumer/cxx_numpy_check.py)
// it reads them and writes what it read into OUT for NumPy to compare.
// Nothing assumes the host's byte order or sizeof(long double).
// Prints "FAIL: ..." per failed check; exits 0 only if all passed.
#include <npyio.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

// The owners are move-only, and moves never throw.
static_assert(!std::is_copy_constructible_v<npyio::reader>, "move-only");
static_assert(!std::is_copy_assignable_v<npyio::npz_writer>, "move-only");
static_assert(std::is_nothrow_move_constructible_v<npyio::writer>, "noexcept");
static_assert(std::is_nothrow_move_assignable_v<npyio::npz>, "noexcept");
static_assert(std::is_base_of_v<std::runtime_error, npyio::error>, "error");

namespace {

int failures = 0;

void expect(bool condition, const std::string &what)
{
    if (!condition) {
        std::printf("FAIL: %s\n", what.c_str());
        failures++;
    }
}

// Run f; it must throw npyio::error with this status.
void expect_error(npyio_status want, const std::function<void()> &f,
                  const std::string &what)
{
    try {
        f();
    } catch (const npyio::error &e) {
        expect(e.status() == want, what + ": status " +
                                       std::to_string(e.status()) + " (" +
                                       e.what() + ")");
        return;
    }
    expect(false, what + ": no npyio::error");
}

std::vector<double> ramp(std::size_t n, double step)
{
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; i++)
        v[i] = step * static_cast<double>(i) - 1.0;
    return v;
}

// The elements of a file loaded untyped, which must be native doubles.
std::vector<double> doubles_of(const npyio::raw_array &r)
{
    expect(r.parse_type() == npyio::dtype::of<double>(),
           "type " + r.type() + " is this host's double");
    std::vector<double> v(r.nbytes() / sizeof(double));
    std::memcpy(v.data(), r.data(), v.size() * sizeof(double));
    return v;
}

// Task 1: a 2-D double array, one line.
void task_save(const std::string &out)
{
    std::vector<double> v = ramp(12, 0.5);
    npyio::save(out + "/save2d.npy", v, {3, 4});
    npyio::raw_array r = npyio::load_raw(out + "/save2d.npy");
    expect(r.shape() == npyio::shape_t{3, 4}, "save2d: shape (3, 4)");
    expect(doubles_of(r) == v, "save2d: the data");
}

// Task 2: any .npy as doubles, one line; NumPy's casting rules.
void task_load(const std::string &out)
{
    std::vector<int32_t> i{-3, 0, 7, 100000};
    npyio::save(out + "/int32.npy", i);
    auto a = npyio::load<double>(out + "/int32.npy");
    expect(a.shape() == npyio::shape_t{4} && a.size() == 4, "load: shape");
    expect(a[0] == -3.0 && a[3] == 100000.0, "load: int32 as double");
    double sum = 0;
    for (double x : a)
        sum += x;
    expect(sum == 100004.0, "load: begin/end");
    expect_error(NPYIO_E_UNSUPPORTED,
                 [&] { npyio::load<int16_t>(out + "/int32.npy"); },
                 "load: int32 to int16 is not 'safe'");
    auto w = npyio::load<int16_t>(out + "/int32.npy", npyio::casting::unsafe);
    expect(w[3] == static_cast<int16_t>(100000 - 65536 * 2), "load: unsafe wraps");
    auto f = npyio::load<float>(out + "/save2d.npy", npyio::casting::same_kind);
    expect(f.size() == 12 && f[1] == -0.5f, "load: f8 to f4 same_kind");
    auto r = npyio::reader::open(out + "/int32.npy");
    std::vector<double> rows(2);
    r.set_type<double>().read_rows(2, 2, rows.data(), rows.size() * sizeof(double));
    expect(rows[0] == 7.0 && rows[1] == 100000.0, "reader: set_type, then rows");
}

// Task 3: an archive of 2 stored arrays and 1 deflated, one line.
void task_savez(const std::string &out)
{
    std::vector<double> a = ramp(12, 0.25);
    std::vector<int64_t> b{1, 2, 3};
    std::vector<float> c(100, 1.5f);
    npyio::savez(out + "/mix.npz",
                 {{"a", a, {3, 4}}, {"b", b}, {"c", c, {10, 10}, npyio::compressed}});
    npyio::npz z(out + "/mix.npz");
    expect(z.size() == 3, "savez: 3 members");
    expect((z.keys() == std::vector<std::string>{"a", "b", "c"}), "savez: keys");
    expect(z["a"].stat(NPYIO_NPZ_STAT_METHOD) == 0 &&
               z["b"].stat(NPYIO_NPZ_STAT_METHOD) == 0 &&
               z["c"].stat(NPYIO_NPZ_STAT_METHOD) == 8,
           "savez: a and b stored, c deflated");
    expect(z.contains("c") && !z.contains("d"), "savez: contains");
    expect_error(NPYIO_E_NOT_FOUND, [&] { z["d"]; }, "savez: no member d");
}

// Task 4: an archive read member by member, opened once.
void task_members(const std::string &out)
{
    std::vector<double> x = ramp(6, 2.0);
    std::vector<uint8_t> y{5, 6};
    npyio::savez(out + "/comp.npz", {{"x", x, {2, 3}, npyio::compressed},
                                     {"y", y, {2}, npyio::compressed}});
    std::size_t seen = 0;
    double total = 0;
    for (auto &&m : npyio::npz(out + "/comp.npz"))
        for (double v : m.load<double>()) {
            total += v;
            seen++;
        }
    expect(seen == 8 && total == 24.0 + 11.0, "members: the sum");
    npyio::npz z(out + "/comp.npz");
    auto raw = z["y"].load_raw();
    expect(raw.type() == "|u1" && raw.nbytes() == 2, "members: y untyped");
    // With npyio::zlib_deflate: np.savez_compressed's bytes (the check
    // script compares them).
    npyio::savez(out + "/zlib.npz", {{"x", x, {2, 3}, npyio::compressed}},
                 npyio::zlib_deflate);
}

// Tasks 5 and 6: rows appended to an .npy; a member to an .npz.
void task_append(const std::string &out)
{
    std::vector<double> rows = ramp(8, 1.0);
    npyio::append(out + "/save2d.npy", rows, {2, 4});
    npyio::raw_array r = npyio::load_raw(out + "/save2d.npy");
    expect(r.shape() == npyio::shape_t{5, 4}, "append: shape (5, 4)");
    expect(doubles_of(r)[12] == rows[0], "append: the rows at the end");

    std::vector<int16_t> d{-1, 1};
    npyio::savez_append(out + "/mix.npz", "d", d, {2}, 6);
    npyio::npz z(out + "/mix.npz");
    expect(z.size() == 4 && z.contains("d"), "savez_append: member d");
    expect(z["d"].stat(NPYIO_NPZ_STAT_METHOD) == 8, "savez_append: deflated");
}

// What cnpy gets wrong, 1: a missing folder is an error, not a crash.
void missing_folder(const std::string &out)
{
    std::string nowhere = out + "/no/such/folder";
    std::vector<double> v(3);
    expect_error(NPYIO_E_NOT_FOUND, [&] { npyio::save(nowhere + "/a.npy", v); },
                 "save into a missing folder");
    expect_error(NPYIO_E_NOT_FOUND, [&] { npyio::load_raw(nowhere + "/a.npy"); },
                 "load from a missing folder");
    expect_error(NPYIO_E_NOT_FOUND, [&] { npyio::npz z(nowhere + "/a.npz"); },
                 "open an archive in a missing folder");
    expect_error(NPYIO_E_NOT_FOUND,
                 [&] { npyio::savez(nowhere + "/a.npz", {{"a", v}}); },
                 "savez into a missing folder");
    try {
        npyio::load_raw(nowhere + "/a.npy");
    } catch (const npyio::error &e) {
        expect(std::string(e.what()).find(nowhere) != std::string::npos,
               "the message names the path");
    }
}

// Flip one byte of a file in place.
void flip_byte(const std::string &path, int64_t offset)
{
    std::FILE *f = std::fopen(path.c_str(), "r+b");
    expect(f != nullptr, "open " + path);
    if (!f)
        return;
    std::fseek(f, static_cast<long>(offset), SEEK_SET);
    int c = std::fgetc(f);
    std::fseek(f, static_cast<long>(offset), SEEK_SET);
    std::fputc(c ^ 0xff, f);
    std::fclose(f);
}

// 2: a member whose bytes changed fails its CRC (cnpy never checks it).
void corrupt_member(const std::string &out)
{
    std::string path = out + "/corrupt.npz";
    std::vector<double> v = ramp(16, 1.0);
    npyio::savez(path, {{"a", v}});
    flip_byte(path, npyio::npz(path)["a"].stat(NPYIO_NPZ_STAT_ARRAY_OFFSET) + 3);
    npyio::npz z(path);
    expect_error(NPYIO_E_CHECKSUM, [&] { z["a"].verify(); }, "corrupt: verify");
    expect_error(NPYIO_E_CHECKSUM, [&] { z["a"].load<double>(); },
                 "corrupt: load<double>");
    expect_error(NPYIO_E_CHECKSUM, [&] { z["a"].load_raw(); }, "corrupt: load_raw");
}

// Doubles as big-endian bytes, whatever this host's order.
std::vector<unsigned char> big_endian(const std::vector<double> &v)
{
    std::vector<unsigned char> out;
    for (double x : v) {
        uint64_t bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        for (int k = 7; k >= 0; k--)
            out.push_back(static_cast<unsigned char>(bits >> (8 * k)));
    }
    return out;
}

// 3: a '>f8' file (written through the lower-level owners) loads as the
// right doubles.
void big_endian_file(const std::string &out)
{
    std::string path = out + "/big.npy";
    std::vector<double> v = ramp(6, 0.75);
    std::vector<unsigned char> bytes = big_endian(v);
    npyio::writer w = npyio::writer::create(
        path, npyio::header(npyio::dtype::parse(">f8"), {2, 3}), NPYIO_WRITE_NO_SYNC);
    w.write(bytes.data(), bytes.size());
    w.close();
    expect(npyio::reader::open(path).header().type() == npyio::dtype::parse(">f8"),
           "big-endian: the file says >f8");
    expect(doubles_of(npyio::load_raw(path)) == v, "big-endian: load_raw");
    auto a = npyio::load<double>(path);
    expect(std::vector<double>(a.begin(), a.end()) == v, "big-endian: load<double>");
}

// 4: a record file loads untyped, and its type parses back.
void record_file(const std::string &out)
{
    npyio::dtype rec = npyio::record_builder()
                           .add("x", npyio::dtype::of<int32_t>())
                           .add("y", npyio::dtype::of<double>())
                           .finish();
    std::vector<unsigned char> bytes(3 * rec.itemsize());
    for (int i = 0; i < 3; i++) {
        int32_t x = i - 1;
        double y = 0.5 * i;
        unsigned char *p = bytes.data() + i * rec.itemsize();
        std::memcpy(p + rec.field_offset(0), &x, sizeof x);
        std::memcpy(p + rec.field_offset(1), &y, sizeof y);
    }
    npyio::save_raw(out + "/rec.npy", rec.descr(), {3}, bytes.data(), bytes.size());
    npyio::raw_array r = npyio::load_raw(out + "/rec.npy");
    expect(r.parse_type() == rec && r.type() == rec.descr(), "record: the type");
    expect(r.parse_type().field_name(1) == "y", "record: field names");
    expect(r.nbytes() == bytes.size() &&
               std::memcmp(r.data(), bytes.data(), bytes.size()) == 0,
           "record: the bytes");
}

// A record whose descr list is longer than load_raw's first type buffer
// (256 bytes): loaded with more room.
void long_record(const std::string &out)
{
    npyio::record_builder b;
    for (int i = 0; i < 40; i++)
        b.add("a_rather_long_field_name_" + std::to_string(i), npyio::dtype::of<uint8_t>());
    npyio::dtype rec = b.finish();
    std::vector<unsigned char> bytes(2 * rec.itemsize(), 7);
    npyio::save_raw(out + "/long_rec.npy", rec.descr(), {2}, bytes.data(), bytes.size());
    npyio::raw_array r = npyio::load_raw(out + "/long_rec.npy");
    expect(rec.descr().size() > 1024 && r.type() == rec.descr(),
           "long record: the whole descr");
}

// The owners: a writer dropped before close() aborts; close() throws and
// releases; readers read in chunks; a map shows the file.
void owners(const std::string &out)
{
    std::string path = out + "/owned.npy";
    std::vector<double> v = ramp(4, 1.0);
    npyio::save(path, v);
    {
        auto w = npyio::writer::create(path, npyio::header::of<double>({4}));
        w.write(v.data(), 2);
    } // aborted: the old file stays
    expect(doubles_of(npyio::load_raw(path)) == v, "writer: dropped = aborted");
    auto w = npyio::writer::create(path, npyio::header::of<double>({4}));
    w.write(v.data(), 1);
    npyio::writer moved = std::move(w);
    expect(!w && moved, "writer: moved");
    expect_error(NPYIO_E_TRUNCATED, [&] { moved.close(); }, "writer: short close");
    expect(!moved, "writer: released by close");

    auto r = npyio::reader::open(path);
    std::vector<double> got(4);
    std::size_t n = 0, total = 0;
    while ((n = r.read_chunk(got.data() + total / sizeof(double), 16)) > 0)
        total += n;
    expect(total == 32 && got == v, "reader: chunks");
    r.close();
    auto m = npyio::map::open(path);
    expect(m.header().count() == 4, "map: header");
}

// Streams: an array written into memory and read back from it; an
// archive writer dropped before close() leaves the old archive.
void streams(const std::string &out)
{
    std::vector<int16_t> v{3, -4, 5};
    npyio::stream grow = npyio::stream::create_memory();
    npyio::writer w = npyio::writer::create(grow, npyio::header::of<int16_t>({3}));
    w.write(v.data(), v.size());
    w.close();
    std::vector<unsigned char> bytes = grow.take_bytes();
    grow.close();
    npyio::stream mem = npyio::stream::open_memory(bytes.data(), bytes.size());
    npyio::reader r = npyio::reader::open(mem);
    std::vector<int16_t> back(3);
    r.set_type<int16_t>().read(back.data(), back.size() * sizeof(int16_t));
    expect(back == v && r.header().shape() == npyio::shape_t{3}, "streams: round trip");

    std::string npy = out + "/stream_append.npy";
    npyio::save(npy, v);
    npyio::stream file =
        npyio::stream::open_path(npy, NPYIO_STREAM_READ | NPYIO_STREAM_WRITE);
    npyio::writer more = npyio::writer::open_append(file, npyio::header::of<int16_t>({2}));
    more.write(v.data(), 2);
    more.close();
    file.close();
    auto grown = npyio::load<int16_t>(npy);
    expect(grown.size() == 5 && grown[4] == -4, "streams: rows appended to a stream");

    std::string path = out + "/kept.npz";
    npyio::savez(path, {{"a", v}});
    {
        npyio::npz_writer z = npyio::npz_writer::open_append(path);
        z.add({"b", v});
    } // aborted: no member b
    expect(npyio::npz(path).keys() == std::vector<std::string>{"a"},
           "npz_writer: dropped = aborted");
    npyio::npz_writer z = npyio::npz_writer::open_append(path);
    z.add({"b", v, {3}, npyio::compressed});
    z.close();
    expect(npyio::npz(path).size() == 2, "npz_writer: closed = committed");
}

// Every deduced type, for NumPy to check (types.npz; two elements each).
void types(const std::string &out)
{
    bool b[2] = {true, false};
    signed char sc[2] = {1, 2};
    unsigned char uc[2] = {1, 2};
    short s[2] = {1, 2};
    unsigned short us[2] = {1, 2};
    int i[2] = {1, 2};
    unsigned u[2] = {1, 2};
    long l[2] = {1, 2};
    unsigned long ul[2] = {1, 2};
    long long ll[2] = {1, 2};
    unsigned long long ull[2] = {1, 2};
    float f[2] = {1, 2};
    double d[2] = {1, 2};
    long double ld[2] = {1, 2};
    std::complex<float> cf[2] = {1, 2};
    std::complex<double> cd[2] = {1, 2};
    std::complex<long double> cld[2] = {1, 2};
    npyio::savez(out + "/types.npz",
                 {{"bool", b, {2}}, {"byte", sc, {2}}, {"ubyte", uc, {2}},
                  {"short", s, {2}}, {"ushort", us, {2}}, {"intc", i, {2}},
                  {"uintc", u, {2}}, {"long", l, {2}}, {"ulong", ul, {2}},
                  {"longlong", ll, {2}}, {"ulonglong", ull, {2}},
                  {"single", f, {2}}, {"double", d, {2}}, {"longdouble", ld, {2}},
                  {"csingle", cf, {2}}, {"cdouble", cd, {2}},
                  {"clongdouble", cld, {2}}});
    expect(npyio::npz(out + "/types.npz").size() == 17, "types: 17 members");
}

void from_numpy(const std::string &in, const std::string &out);

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: cxx_consumer OUT [IN]\n");
        return 2;
    }
    std::string out = argv[1];
    try {
        task_save(out);
        task_load(out);
        task_savez(out);
        task_members(out);
        task_append(out);
        missing_folder(out);
        corrupt_member(out);
        big_endian_file(out);
        record_file(out);
        long_record(out);
        owners(out);
        streams(out);
        types(out);
        if (argc == 3)
            from_numpy(argv[2], out);
    } catch (const std::exception &e) {
        std::printf("FAIL: uncaught: %s\n", e.what());
        failures++;
    }
    if (failures)
        return 1;
    std::printf("npyio %s from C++17: cxx consumer OK\n", npyio_version_string());
    return 0;
}

namespace {

// NumPy's files (cxx_numpy_check.py writes IN, then compares OUT).
void from_numpy(const std::string &in, const std::string &out)
{
    // A record of mixed byte orders, untyped: written back as read.
    npyio::raw_array rec = npyio::load_raw(in + "/rec.npy");
    npyio::save_raw(out + "/np_rec.npy", rec.type(), rec.shape(), rec.data(),
                    rec.nbytes());
    npyio::npz bad(in + "/corrupt.npz");
    expect_error(NPYIO_E_CHECKSUM, [&] { bad["a"].verify(); },
                 "NumPy's archive with a changed byte");
    expect_error(NPYIO_E_CHECKSUM, [&] { bad["a"].load<double>(); },
                 "NumPy's archive with a changed byte: load");
    npyio::save(out + "/np_big.npy", npyio::load<double>(in + "/big.npy"));
    npyio::save(out + "/np_i4.npy", npyio::load<double>(in + "/i4.npy"));
    for (auto &&m : npyio::npz(in + "/comp.npz"))
        npyio::save(out + "/np_comp_" + m.key() + ".npy", m.load<double>());
}

} // namespace
