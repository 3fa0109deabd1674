/*
 * header_pedantic.cpp - npyio.hpp, the C++17 layer, must compile on its
 * own with every warning an error (-std=c++17 -Wall -Wextra -Wpedantic
 * -Werror, checked by ctest), its templates instantiated for every type
 * it deduces, so that any C++17 program can include it.
 */
#include "npyio.hpp"

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

int npyio_hpp_compiles();

namespace {

// Compiled, never run: each task's one-liner and each owner's calls.
[[maybe_unused]] void instantiate()
{
    std::vector<double> v(12);
    std::array<int32_t, 3> a{};
    npyio::save("a.npy", v, {3, 4});
    npyio::save("a.npy", a);
    npyio::save("a.npy", npyio::span<const double>(v.data(), v.size()));
    npyio::append("a.npy", v, {3, 4});
    npyio::savez("z.npz", {{"a", v, {3, 4}}, {"b", a}, {"c", v, {12}, 6}});
    npyio::savez_append("z.npz", "d", v, {12}, npyio::compressed);
    npyio::raw_array r = npyio::load_raw("a.npy");
    npyio::npz z("z.npz");
    for (auto &&m : z)
        (void)m.key();
    npyio::reader rd = z["a"].reader();
    npyio::array<double> d = npyio::load<double>("a.npy");
    npyio::save("c.npy", d);
    (void)z["a"].load<std::complex<long double>>(npyio::casting::same_kind);
    (void)z["a"].load_raw();
    rd.set_type<float>(npyio::casting::unsafe);
    npyio::writer w = npyio::writer::create("b.npy", npyio::header::of<float>({2}));
    w.close();
    npyio::npz_writer zw = npyio::npz_writer::create("y.npz");
    zw.add({"a", v});
    zw.close();
    npyio::map mp = npyio::map::open("a.npy");
    npyio::stream s = npyio::stream::create_memory();
    npyio::stream t = npyio::stream::create_memory();
    npyio::writer::open_append(s, npyio::header::of<float>({1})).close();
    npyio::writer::open_in_place(s).close();
    npyio::npz_writer::open_append(s, t).close();
    npyio::options o;
    npyio::record_builder b;
    b.add("x", npyio::dtype::of<int16_t>());
}

} // namespace

int npyio_hpp_compiles()
{
    // Every type the layer deduces, in this host's sizes.
    bool ok = npyio::type_of<bool>() != nullptr;
    for (const char *t :
         {npyio::type_of<signed char>(), npyio::type_of<unsigned char>(),
          npyio::type_of<short>(), npyio::type_of<unsigned short>(),
          npyio::type_of<int>(), npyio::type_of<unsigned>(),
          npyio::type_of<long>(), npyio::type_of<unsigned long>(),
          npyio::type_of<long long>(), npyio::type_of<unsigned long long>(),
          npyio::type_of<int8_t>(), npyio::type_of<uint64_t>(),
          npyio::type_of<float>(), npyio::type_of<double>(),
          npyio::type_of<long double>(),
          npyio::type_of<std::complex<float>>(),
          npyio::type_of<std::complex<double>>(),
          npyio::type_of<std::complex<long double>>()})
        ok = ok && t != nullptr;
    return ok ? 1 : 0;
}

#ifdef NPYIO_HPP_REFUSE
// The negative tests: a type with no NumPy equivalent (char, whose
// signedness differs between hosts; a struct) stops the compiler.
const char *npyio_hpp_refused = npyio::type_of<NPYIO_HPP_REFUSE>();
#endif
