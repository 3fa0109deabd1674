// cxx_consumer.cpp - libnpyio from C++17, as a C++ program would use it:
// every handle owned by a std::unique_ptr with the library's own release
// function as its deleter (wrappers written here, not shipped), failures
// turned into exceptions carrying the library's message, data in
// std::vector. Compiled with -std=c++17 -Wall -Wextra -Wpedantic -Werror
// against the installed library (tests/consumer/run_cxx.sh).
//
// Checks: a 2-d array saved and loaded back equal, and read in chunks; a
// refused open gives the status and a message naming the file; an archive
// written member by member and read back by key; a map of the saved file;
// every handle released (a leak shows under the sanitizer builds).
#include <npyio.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The deleters: the library's own release functions.
struct Release {
    void operator()(npyio_options *p) const { npyio_options_free(p); }
    void operator()(npyio_dtype *p) const { npyio_dtype_unref(p); }
    void operator()(npyio_header *p) const { npyio_header_free(p); }
    void operator()(npyio_reader *p) const { npyio_reader_close(p); }
    void operator()(npyio_writer *p) const { npyio_writer_abort(p); }
    void operator()(npyio_map *p) const { npyio_map_close(p); }
    void operator()(npyio_npz *p) const { npyio_npz_close(p); }
    void operator()(npyio_npz_writer *p) const { npyio_npz_writer_abort(p); }
    void operator()(void *p) const { npyio_free(p); }
};
template <class T> using Owned = std::unique_ptr<T, Release>;

struct Error : std::runtime_error {
    npyio_status status;
    Error(npyio_status st, const std::string &what)
        : std::runtime_error(what + ": " + npyio_last_error()), status(st) {}
};

void ok(npyio_status st, const char *what)
{
    if (st != NPYIO_OK)
        throw Error(st, what);
}

void expect(bool condition, const std::string &what)
{
    if (!condition)
        throw std::runtime_error("check failed: " + what);
}

// A new handle from a function whose last argument receives it.
template <class T, class F, class... Args> Owned<T> make(F f, Args... args)
{
    T *raw = nullptr;
    ok(f(args..., &raw), "creating a handle");
    return Owned<T>(raw);
}

Owned<npyio_header> header_for(const char *descr,
                               const std::vector<int64_t> &shape)
{
    auto dtype = make<npyio_dtype>(npyio_dtype_parse, descr,
                                   std::strlen(descr),
                                   static_cast<const npyio_options *>(nullptr));
    return make<npyio_header>(npyio_header_new,
                              static_cast<const npyio_dtype *>(dtype.get()),
                              static_cast<int>(shape.size()), shape.data(),
                              0);
}

void save_and_load(const std::string &path, const std::vector<double> &v)
{
    auto h = header_for("'<f8'", {3, 4});
    ok(npyio_save_with_header(path.c_str(), h.get(), v.data(), v.size() * sizeof(double),
                  NPYIO_WRITE_NO_SYNC, nullptr),
       "npyio_save_with_header");

    npyio_header *raw_header = nullptr;
    void *raw_data = nullptr;
    ok(npyio_load_with_header(path.c_str(), NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                  nullptr, &raw_header, &raw_data),
       "npyio_load_with_header");
    Owned<npyio_header> back(raw_header);
    Owned<void> data(raw_data);
    expect(npyio_header_ndim(back.get()) == 2 &&
               npyio_header_shape(back.get())[0] == 3 &&
               npyio_header_shape(back.get())[1] == 4,
           "the loaded shape is (3, 4)");
    expect(std::memcmp(data.get(), v.data(), v.size() * sizeof(double)) == 0,
           "the loaded data equals the saved");

    // In chunks of 20 bytes (two whole elements each; a buffer under one
    // element is refused): the same bytes.
    auto r = make<npyio_reader>(npyio_reader_open_path, path.c_str(),
                                static_cast<const npyio_options *>(nullptr));
    std::vector<unsigned char> chunk(20), all;
    size_t got = 0;
    npyio_status st = npyio_reader_read_chunk(r.get(), chunk.data(), 5,
                                              NPYIO_READ_NATIVE, &got);
    expect(st == NPYIO_E_BUFFER_TOO_SMALL && got == 0,
           "a 5-byte chunk of 8-byte elements is refused");
    while ((st = npyio_reader_read_chunk(r.get(), chunk.data(), chunk.size(),
                                         NPYIO_READ_NATIVE, &got)) ==
           NPYIO_OK)
        all.insert(all.end(), chunk.begin(), chunk.begin() + got);
    expect(st == NPYIO_END, "chunks end with NPYIO_END");
    expect(all.size() == v.size() * sizeof(double) &&
               std::memcmp(all.data(), v.data(), all.size()) == 0,
           "the chunks equal the saved data");

    auto m = make<npyio_map>(npyio_map_open_path, path.c_str(), 0u,
                             static_cast<const npyio_options *>(nullptr));
    expect(std::memcmp(npyio_map_data(m.get()), v.data(),
                       v.size() * sizeof(double)) == 0,
           "the map shows the saved data");
}

void refused(const std::string &dir)
{
    std::string missing = dir + "/no-such-file.npy";
    try {
        make<npyio_reader>(npyio_reader_open_path, missing.c_str(),
                           static_cast<const npyio_options *>(nullptr));
    } catch (const Error &e) {
        expect(e.status == NPYIO_E_NOT_FOUND, "a missing file: not found");
        expect(std::string(e.what()).find(missing) != std::string::npos,
               "the message names the missing file");
        return;
    }
    throw std::runtime_error("a missing file opened");
}

void archive(const std::string &path)
{
    std::vector<int32_t> a{1, 2, 3, 4, 5, 6};
    std::vector<uint8_t> b{9, 8, 7};
    {
        auto w = make<npyio_npz_writer>(
            npyio_npz_writer_create_path, path.c_str(), NPYIO_WRITE_NO_SYNC,
            static_cast<const npyio_options *>(nullptr));
        auto ha = header_for("'<i4'", {2, 3});
        auto hb = header_for("'|u1'", {3});
        ok(npyio_npz_writer_add_with_header(w.get(), "a", ha.get(), a.data(), a.size() * sizeof(int32_t), 0, 0),
           "adding a");
        ok(npyio_npz_writer_add_with_header(w.get(), "b", hb.get(), b.data(), b.size(), 6, 0),
           "adding b");
        // Closing releases the writer whatever happens: the owner lets go.
        ok(npyio_npz_writer_close(w.release()), "closing the archive");
    }
    auto z = make<npyio_npz>(npyio_npz_open_path, path.c_str(),
                             static_cast<const npyio_options *>(nullptr));
    expect(npyio_npz_count(z.get()) == 2, "two members");
    size_t index = 0;
    ok(npyio_npz_find(z.get(), "b", &index, nullptr), "finding b");
    auto r = make<npyio_reader>(npyio_reader_open_member, z.get(), index);
    std::vector<uint8_t> got(3);
    ok(npyio_reader_read(r.get(), got.data(), got.size(), NPYIO_READ_NATIVE),
       "reading b");
    expect(got == b, "member b reads back");
    r.reset(); // readers of members go before their archive
    ok(npyio_npz_find(z.get(), "a", &index, nullptr), "finding a");
    r = make<npyio_reader>(npyio_reader_open_member, z.get(), index);
    std::vector<int32_t> all(6);
    ok(npyio_reader_read(r.get(), all.data(), all.size() * sizeof(int32_t),
                         NPYIO_READ_NATIVE),
       "reading a");
    expect(all == a, "member a reads back");
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: cxx_consumer DIR\n");
        return 2;
    }
    std::string dir = argv[1];
    try {
        std::vector<double> v(12);
        for (size_t i = 0; i < v.size(); i++)
            v[i] = 0.5 * static_cast<double>(i) - 2.0;
        save_and_load(dir + "/cxx.npy", v);
        refused(dir);
        archive(dir + "/cxx.npz");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cxx_consumer: %s\n", e.what());
        return 1;
    }
    std::printf("npyio %s from C++17: cxx consumer OK\n",
                npyio_version_string());
    return 0;
}
