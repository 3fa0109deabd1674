/*
 * npyio.hpp - libnpyio from C++17: a header-only layer over npyio.h.
 *
 * Copyright (c) 2026 The libnpyio developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Nothing here is compiled into the library: every function is inline and
 * calls the C API of npyio.h (which stays the manual for what each call
 * does), so a program needs only -lnpyio. What this layer adds:
 *
 *  - npyio::error (a std::runtime_error) thrown by every wrapper whose C
 *    call fails, carrying the status (status()) and the thread's
 *    npyio_last_error() message (what()).
 *  - Move-only owners of every handle, each ended by its own call:
 *      options, dtype, record_builder, header   free / unref
 *      stream, reader, map, npz                 close (close() throws,
 *                                               the destructor does not)
 *      writer, npz_writer                       close() commits and throws;
 *                                               the destructor aborts
 *  - Types deduced at compile time: bool, the standard and fixed-width
 *    integer types, float, double, long double and std::complex of the
 *    three, in this host's byte order (as npyio.h's NPYIO_TYPE_OF).
 *    Anything else is a static_assert.
 *  - The tasks, one line each:
 *      npyio::save("a.npy", v, {3, 4});                 // 2-D doubles
 *      auto a = npyio::load<double>("any.npy");         // converted
 *      npyio::savez("z.npz", {{"a", a, {3, 4}}, {"b", b}, {"c", c, {9}, 6}});
 *      for (auto &&m : npyio::npz("c.npz")) m.load<float>();
 *      npyio::append("a.npy", rows, {2, 4});
 *      npyio::savez_append("z.npz", "d", d, {2}, 6);
 *    Data comes from a pointer and a shape, any contiguous container
 *    (data() and size(); 1-D unless a shape is given) or npyio::span. An
 *    archive entry's level (0 stored, 1-9 deflated) follows its shape.
 *    Other types (records, strings, datetimes) go untyped: save_raw() and
 *    load_raw() take bytes, a type string and a shape.
 *  - npyio::npz, an archive as a map of lazy members: z.size(), z.keys(),
 *    z.contains("a"), z["a"].load<double>(), for (auto &&m : z).
 *  - The lower-level owners for chunks, rows and streams: reader, writer,
 *    stream, map, npz_writer (.get() gives the C handle to any npyio.h
 *    call).
 *
 * Conversions on load follow NumPy's casting rules (npyio_load_as()):
 * 'safe' by default, npyio::casting::same_kind or ::unsafe on request.
 * Data comes in this host's byte order and C order whatever the file's.
 */
#ifndef NPYIO_HPP
#define NPYIO_HPP

#if defined(__cplusplus) && __cplusplus < 201703L && !defined(_MSVC_LANG)
#error "npyio.hpp needs C++17 (C++11 programs: npyio.h)"
#endif

#include "npyio.h"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace npyio {

/* ---- errors ------------------------------------------------------------ */

/** A failed call: its status (NPYIO_E_*) and the library's message. */
class error : public std::runtime_error {
public:
    explicit error(npyio_status status)
        : std::runtime_error(message(status)), status_(status) {}
    npyio_status status() const noexcept { return status_; }

private:
    // The thread's message of the call that just failed, or the status's
    // class when a wrapper refuses before calling the library.
    static std::string message(npyio_status status)
    {
        const char *text = npyio_last_error();
        return *text ? text : npyio_status_string(status);
    }
    npyio_status status_;
};

/** Throw npyio::error for an error status; OK and NPYIO_END pass. */
inline npyio_status check(npyio_status status)
{
    if (status < 0)
        throw error(status);
    return status;
}

/** The dimensions of an array: int64_t, as in files. */
using shape_t = std::vector<int64_t>;

/** How loads may convert (np.can_cast's rules). */
enum class casting { safe, same_kind, unsafe };

namespace detail {

// The NPYIO_READ_CAST_* flag of a rule.
constexpr uint32_t cast_flags(casting rule)
{
    return rule == casting::safe        ? 0u
           : rule == casting::same_kind ? NPYIO_READ_CAST_SAME_KIND
                                        : NPYIO_READ_CAST_UNSAFE;
}

// The element count of a shape (1 for a scalar).
inline std::size_t count(const shape_t &shape)
{
    std::size_t n = 1;
    for (int64_t d : shape)
        n *= static_cast<std::size_t>(d);
    return n;
}

// Memory the library handed over, released with npyio_free().
struct free_deleter {
    void operator()(void *p) const noexcept { npyio_free(p); }
};
using block = std::unique_ptr<void, free_deleter>;

template <class T> struct always_false : std::false_type {};

} // namespace detail

/* ---- element types ----------------------------------------------------- */

namespace detail {

// Integers by size; 1-byte ones have no byte order ('|'), as in NumPy.
constexpr const char *int_type(std::size_t size, bool is_signed)
{
    return size == 1   ? (is_signed ? "|i1" : "|u1")
           : size == 2 ? (is_signed ? "=i2" : "=u2")
           : size == 4 ? (is_signed ? "=i4" : "=u4")
                       : (is_signed ? "=i8" : "=u8");
}

// Floats and complex by size: long double is f8, f12 or f16 by host.
constexpr const char *float_type(std::size_t size)
{
    return size == 4 ? "=f4" : size == 8 ? "=f8" : size == 12 ? "=f12" : "=f16";
}
constexpr const char *complex_type(std::size_t size)
{
    return size == 8 ? "=c8" : size == 16 ? "=c16" : size == 24 ? "=c24" : "=c32";
}

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::is_floating_point<T> {};

// char, wchar_t, char16_t and char32_t are characters, not numbers (and
// char's signedness differs between hosts): refused, as by NPYIO_TYPE_OF.
template <class T>
constexpr bool is_character =
    std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
    std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>;

} // namespace detail

/** The NumPy type string of T in this host's byte order ("=f8", "|b1"). */
template <class T> constexpr const char *type_of()
{
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, bool>) {
        return "|b1";
    } else if constexpr (std::is_integral_v<U> && !detail::is_character<U>) {
        static_assert(sizeof(U) <= 8, "npyio: integers up to 64 bits");
        return detail::int_type(sizeof(U), std::is_signed_v<U>);
    } else if constexpr (std::is_floating_point_v<U>) {
        return detail::float_type(sizeof(U));
    } else if constexpr (detail::is_complex<U>::value) {
        return detail::complex_type(sizeof(U));
    } else {
        static_assert(detail::always_false<U>::value,
                      "npyio: no NumPy type for this C++ type (bool, "
                      "integers, float, double, long double, std::complex)");
        return nullptr;
    }
}

/* ---- handles ------------------------------------------------------------ */

namespace detail {

// A move-only owner of one C handle; End::drop(p) ends it and never
// throws (closes ignore their status; writers abort).
template <class T, class End> class handle {
public:
    handle() noexcept = default;
    explicit handle(T *p) noexcept : p_(p) {}
    handle(handle &&other) noexcept : p_(other.release()) {}
    handle &operator=(handle &&other) noexcept
    {
        reset(other.release());
        return *this;
    }
    handle(const handle &) = delete;
    handle &operator=(const handle &) = delete;
    ~handle() { End::drop(p_); }

    T *get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    /** Give up ownership: the caller ends the handle. */
    T *release() noexcept { return std::exchange(p_, nullptr); }
    void reset(T *p = nullptr) noexcept { End::drop(std::exchange(p_, p)); }

protected:
    // For close(): end the handle, reporting the status by exception.
    template <class Close> void close_with(Close close)
    {
        check(close(release()));
    }

private:
    T *p_ = nullptr;
};

// Each handle's end (npyio.h's lifetime table): F(p), its status (a
// close's) dropped.
template <auto F> struct end {
    template <class T> static void drop(T *p) noexcept { (void)F(p); }
};
using end_options = end<npyio_options_free>;
using end_dtype = end<npyio_dtype_unref>;
using end_builder = end<npyio_record_builder_free>;
using end_header = end<npyio_header_free>;
using end_stream = end<npyio_stream_close>;
using end_reader = end<npyio_reader_close>;
using end_writer = end<npyio_writer_abort>;
using end_map = end<npyio_map_close>;
using end_npz = end<npyio_npz_close>;
using end_npz_writer = end<npyio_npz_writer_abort>;

// Make a handle through an opener whose last argument receives it.
template <class H, class T, class F, class... Args> H open(F f, Args... args)
{
    T *raw = nullptr;
    check(f(args..., &raw));
    return H(raw);
}

} // namespace detail

/** Limits and allocator (npyio_options). Default-constructed: the defaults. */
class options : public detail::handle<npyio_options, detail::end_options> {
public:
    options() : handle(detail::open<handle, npyio_options>(npyio_options_new)) {}
    /** The limits for untrusted input (npyio_options_set_untrusted()). */
    options &untrusted()
    {
        check(npyio_options_set_untrusted(get()));
        return *this;
    }
    options &set_limit(npyio_limit which, int64_t value)
    {
        check(npyio_options_set_limit(get(), which, value));
        return *this;
    }
    int64_t limit(npyio_limit which) const
    {
        int64_t value = 0;
        check(npyio_options_get_limit(get(), which, &value));
        return value;
    }
};

namespace detail {
// The C pointer of optional options.
inline const npyio_options *raw(const options *o) { return o ? o->get() : nullptr; }
} // namespace detail

/** An element type (npyio_dtype), owning one reference. */
class dtype : public detail::handle<npyio_dtype, detail::end_dtype> {
public:
    using handle::handle;
    /** Parse a type string or descr ("<f8", "[('x', '<i4')]"). */
    static dtype parse(const std::string &text, const options *o = nullptr)
    {
        return detail::open<dtype, npyio_dtype>(npyio_dtype_parse, text.c_str(),
                                                text.size(), detail::raw(o));
    }
    /** The dtype of T in this host's byte order. */
    template <class T> static dtype of() { return parse(type_of<T>()); }
    /** A new reference to a borrowed dtype (a header's). */
    static dtype borrow(const npyio_dtype *d) { return dtype(npyio_dtype_ref(d)); }

    npyio_kind kind() const { return npyio_dtype_kind(get()); }
    std::size_t itemsize() const { return npyio_dtype_itemsize(get()); }
    bool is_native() const { return npyio_dtype_is_native(get()) != 0; }
    bool operator==(const dtype &o) const { return npyio_dtype_is_equal(get(), o.get()) != 0; }
    bool operator!=(const dtype &o) const { return !(*this == o); }
    std::size_t field_count() const { return npyio_dtype_field_count(get()); }
    std::string field_name(std::size_t i) const
    {
        const char *name = npyio_dtype_field_name(get(), i, nullptr);
        if (!name)
            throw std::out_of_range("npyio::dtype::field_name: no such field");
        return name;
    }
    int64_t field_offset(std::size_t i) const { return npyio_dtype_field_offset(get(), i); }
    /** NumPy's dtype.str ("<f8") and the header's descr ("'<f8'"). */
    std::string str() const { return text(npyio_dtype_str); }
    std::string descr() const { return text(npyio_dtype_descr); }

private:
    // The two-call buffer protocol: ask the length, then fill.
    template <class F> std::string text(F f) const
    {
        std::size_t len = 0;
        npyio_status st = f(get(), nullptr, 0, &len);
        if (st != NPYIO_E_BUFFER_TOO_SMALL)
            check(st);
        std::string s(len + 1, '\0');
        check(f(get(), &s[0], s.size(), &len));
        s.resize(len);
        return s;
    }
};

/** Builds a record dtype field by field (npyio_record_builder). */
class record_builder : public detail::handle<npyio_record_builder, detail::end_builder> {
public:
    explicit record_builder(uint32_t flags = 0, const options *o = nullptr)
        : handle(detail::open<handle, npyio_record_builder>(
              npyio_record_builder_new, flags, detail::raw(o))) {}
    /** Add a field; offset -1: after the previous one. */
    record_builder &add(const std::string &name, const dtype &type,
                        int64_t offset = -1, const shape_t &shape = {})
    {
        check(npyio_record_builder_add(get(), name.c_str(), nullptr, offset,
                                       type.get(), static_cast<int>(shape.size()),
                                       shape.empty() ? nullptr : shape.data()));
        return *this;
    }
    dtype finish(std::size_t itemsize = 0) const
    {
        return detail::open<dtype, npyio_dtype>(npyio_record_builder_finish,
                                                get(), itemsize);
    }
};

/** A borrowed header (a reader's, a map's): its getters. */
class header_view {
public:
    explicit header_view(const npyio_header *h) noexcept : h_(h) {}
    const npyio_header *get() const noexcept { return h_; }
    /** The dtype, borrowed from the header. */
    const npyio_dtype *raw_dtype() const { return npyio_header_dtype(h_); }
    /** A dtype of one's own (a new reference). */
    dtype type() const { return dtype::borrow(raw_dtype()); }
    int ndim() const { return npyio_header_ndim(h_); }
    shape_t shape() const
    {
        const int64_t *s = npyio_header_shape(h_);
        return shape_t(s, s + ndim());
    }
    bool is_fortran_order() const { return npyio_header_is_fortran_order(h_) != 0; }
    int64_t count() const { return npyio_header_count(h_); }
    int64_t nbytes() const { return npyio_header_nbytes(h_); }

private:
    const npyio_header *h_;
};

/** An array's description (npyio_header), owned. */
class header : public detail::handle<npyio_header, detail::end_header> {
public:
    using handle::handle;
    header(const dtype &type, const shape_t &shape, bool fortran_order = false)
        : handle(detail::open<handle, npyio_header>(
              npyio_header_new, type.get(), static_cast<int>(shape.size()),
              shape.data(), fortran_order ? 1 : 0)) {}
    /** The header of an array of T. */
    template <class T> static header of(const shape_t &shape)
    {
        return header(dtype::of<T>(), shape);
    }
    header_view view() const noexcept { return header_view(get()); }
    dtype type() const { return view().type(); }
    int ndim() const { return view().ndim(); }
    shape_t shape() const { return view().shape(); }
    int64_t count() const { return view().count(); }
    int64_t nbytes() const { return view().nbytes(); }
};

/* ---- owned data --------------------------------------------------------- */

/** Elements of T the library allocated (npyio_free()), with their shape. */
template <class T> class array {
public:
    using value_type = T;
    array() = default;
    array(void *data, std::size_t nbytes, shape_t shape)
        : data_(data), size_(nbytes / sizeof(T)), shape_(std::move(shape)) {}

    T *data() noexcept { return static_cast<T *>(data_.get()); }
    const T *data() const noexcept { return static_cast<const T *>(data_.get()); }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const shape_t &shape() const noexcept { return shape_; }
    int ndim() const noexcept { return static_cast<int>(shape_.size()); }
    T &operator[](std::size_t i) noexcept { return data()[i]; }
    const T &operator[](std::size_t i) const noexcept { return data()[i]; }
    T *begin() noexcept { return data(); }
    T *end() noexcept { return data() + size_; }
    const T *begin() const noexcept { return data(); }
    const T *end() const noexcept { return data() + size_; }

private:
    detail::block data_;
    std::size_t size_ = 0;
    shape_t shape_;
};

/** Bytes of any type (records, strings, datetimes) with their type
 * string as npyio_load() gives it: dtype.str, or a record's descr list. */
class raw_array {
public:
    raw_array(void *data, std::size_t nbytes, std::string type, shape_t shape)
        : data_(data), nbytes_(nbytes), type_(std::move(type)), shape_(std::move(shape)) {}
    void *data() noexcept { return data_.get(); }
    const void *data() const noexcept { return data_.get(); }
    std::size_t nbytes() const noexcept { return nbytes_; }
    const std::string &type() const noexcept { return type_; }
    const shape_t &shape() const noexcept { return shape_; }
    /** The type as a dtype (field names and offsets of a record). */
    dtype parse_type() const { return dtype::parse(type_); }

private:
    detail::block data_;
    std::size_t nbytes_;
    std::string type_;
    shape_t shape_;
};

/** A non-owning run of elements (std::span is C++20). */
template <class T> class span {
public:
    using value_type = std::remove_cv_t<T>;
    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

namespace detail {

// The element type of a contiguous container (void if it is none).
template <class C, class = void> struct element { using type = void; };
template <class C>
struct element<C, std::void_t<decltype(std::declval<const C &>().data()),
                              decltype(std::declval<const C &>().size())>> {
    using type = std::remove_cv_t<
        std::remove_pointer_t<decltype(std::declval<const C &>().data())>>;
};
template <class C> using element_t = typename element<C>::type;
template <class C>
using if_container = std::enable_if_t<!std::is_void_v<element_t<C>>, int>;

// The shape a container is saved with by default: its own (npyio::array)
// or 1-D.
template <class C, class = void> struct own_shape {
    static shape_t of(const C &c) { return {static_cast<int64_t>(c.size())}; }
};
template <class C>
struct own_shape<C, std::void_t<decltype(std::declval<const C &>().shape())>> {
    static shape_t of(const C &c) { return c.shape(); }
};

// The ndim and shape pointer of a shape, as the C calls take them.
inline int ndim(const shape_t &s) { return static_cast<int>(s.size()); }
inline const int64_t *dims(const shape_t &s) { return s.empty() ? nullptr : s.data(); }

// The most dimensions the options allow (NPYIO_LIMIT_NDIM): room enough
// for any shape a load hands back.
inline std::size_t ndim_limit(const options *o)
{
    int64_t ndim = 0;
    check(npyio_options_get_limit(raw(o), NPYIO_LIMIT_NDIM, &ndim));
    return static_cast<std::size_t>(ndim);
}

// A typed load: call(&data, &len, &ndim, shape, cap) is the C call
// (npyio_load_as, npyio_npz_load_as), its results made an array<T>.
template <class T, class Call> array<T> typed_load(std::size_t shape_cap, Call call)
{
    shape_t shape(shape_cap);
    void *data = nullptr;
    std::size_t len = 0;
    int ndim = 0;
    check(call(&data, &len, &ndim, shape.data(), shape.size()));
    shape.resize(static_cast<std::size_t>(ndim));
    return array<T>(data, len, std::move(shape));
}

// An untyped load: call(&data, &len, type, type_cap, &ndim, shape, cap)
// is the C call (npyio_load, npyio_npz_load). Only the type can be short
// (the shape has the limit's room): a record's descr list can be long,
// so the call is repeated with more room.
template <class Call> raw_array untyped_load(std::size_t shape_cap, Call call)
{
    shape_t shape(shape_cap);
    for (std::size_t cap = 256;; cap *= 4) {
        std::string type(cap, '\0');
        void *data = nullptr;
        std::size_t len = 0;
        int ndim = 0;
        npyio_status st = call(&data, &len, &type[0], cap, &ndim, shape.data(),
                               shape.size());
        if (st == NPYIO_E_BUFFER_TOO_SMALL && cap < (std::size_t(1) << 24))
            continue;
        check(st);
        type.resize(type.find('\0'));
        shape.resize(static_cast<std::size_t>(ndim));
        return raw_array(data, len, std::move(type), std::move(shape));
    }
}

} // namespace detail

/* ---- one-call tasks ----------------------------------------------------- */

namespace detail {

// npyio_save and npyio_append take the same arguments: one helper each
// for bytes of a type string, a pointer to T and a container.
using task_call = npyio_status (*)(const char *, const char *, int, const int64_t *,
                                   const void *, std::size_t, uint32_t,
                                   const npyio_options *);
inline void run(task_call call, const std::string &path, const std::string &type,
                const shape_t &shape, const void *data, std::size_t nbytes,
                uint32_t flags, const options *o)
{
    check(call(path.c_str(), type.c_str(), ndim(shape), dims(shape), data, nbytes,
               flags, raw(o)));
}
template <class T>
void run(task_call call, const std::string &path, const T *data,
         const shape_t &shape, uint32_t flags, const options *o)
{
    run(call, path, type_of<T>(), shape, data, count(shape) * sizeof(T), flags, o);
}
template <class C>
void run_container(task_call call, const std::string &path, const C &c,
                   const shape_t &shape, uint32_t flags, const options *o)
{
    using T = element_t<C>;
    run(call, path, type_of<T>(), shape, c.data(), c.size() * sizeof(T), flags, o);
}

} // namespace detail

/** Save an array in any type npyio_save() takes ("U10", a descr list). */
inline void save_raw(const std::string &path, const std::string &type,
                     const shape_t &shape, const void *data, std::size_t nbytes,
                     uint32_t flags = 0, const options *o = nullptr)
{
    detail::run(npyio_save, path, type, shape, data, nbytes, flags, o);
}

/** Save count(shape) elements of T from a pointer. */
template <class T>
void save(const std::string &path, const T *data, const shape_t &shape,
          uint32_t flags = 0, const options *o = nullptr)
{
    detail::run(npyio_save, path, data, shape, flags, o);
}

/** Save a contiguous container (data(), size()): 1-D unless a shape is
 * given (npyio::array keeps its own). */
template <class C, detail::if_container<C> = 0>
void save(const std::string &path, const C &c, const shape_t &shape,
          uint32_t flags = 0, const options *o = nullptr)
{
    detail::run_container(npyio_save, path, c, shape, flags, o);
}
template <class C, detail::if_container<C> = 0>
void save(const std::string &path, const C &c)
{
    save(path, c, detail::own_shape<C>::of(c));
}

/** Load any .npy file untyped: its bytes in native byte order and C
 * order, its type string and its shape (npyio_load()). */
inline raw_array load_raw(const std::string &path, const options *o = nullptr)
{
    return detail::untyped_load(detail::ndim_limit(o), [&](auto... out) {
        return npyio_load(path.c_str(), detail::raw(o), out...);
    });
}

/** Load a .npy file as elements of T, converted as NumPy's astype under
 * the rule (np.can_cast; 'safe' by default), in C order. */
template <class T>
array<T> load(const std::string &path, casting rule = casting::safe,
              const options *o = nullptr)
{
    return detail::typed_load<T>(detail::ndim_limit(o), [&](auto... out) {
        return npyio_load_as(path.c_str(), type_of<T>(), detail::cast_flags(rule),
                             detail::raw(o), out...);
    });
}

/** Append rows along axis 0 to an .npy file (npyio_append()), in any
 * type npyio_save() takes: shape[0] rows, then the file's other
 * dimensions. */
inline void append_raw(const std::string &path, const std::string &type,
                       const shape_t &shape, const void *rows, std::size_t nbytes,
                       uint32_t flags = 0, const options *o = nullptr)
{
    detail::run(npyio_append, path, type, shape, rows, nbytes, flags, o);
}

/** Append count(shape) elements of T from a pointer. */
template <class T>
void append(const std::string &path, const T *rows, const shape_t &shape,
            uint32_t flags = 0, const options *o = nullptr)
{
    detail::run(npyio_append, path, rows, shape, flags, o);
}
/** Append a contiguous container's elements as rows of the shape. */
template <class C, detail::if_container<C> = 0>
void append(const std::string &path, const C &rows, const shape_t &shape,
            uint32_t flags = 0, const options *o = nullptr)
{
    detail::run_container(npyio_append, path, rows, shape, flags, o);
}
/** Append a 1-D run of elements to a 1-D file. */
template <class C, detail::if_container<C> = 0>
void append(const std::string &path, const C &rows)
{
    append(path, rows, shape_t{static_cast<int64_t>(rows.size())});
}

/** zlib levels for archive members: 0 stores, 1 to 9 deflate. */
constexpr int stored = 0;
constexpr int compressed = 6; // np.savez_compressed's level
/** The flags of savez() and savez_append() (with NPYIO_WRITE_NO_SYNC,
 * NPYIO_NPZ_WRITE_NO_ALIGN): deflate with zlib as 1.0 did, giving
 * np.savez_compressed's bytes (NPYIO_NPZ_WRITE_ZLIB). @since 1.1 */
constexpr uint32_t zlib_deflate = NPYIO_NPZ_WRITE_ZLIB;

/** One array of an archive to write: borrows the data until the call. */
struct entry {
    std::string key;
    std::string type;
    shape_t shape;
    const void *data;
    std::size_t nbytes;
    int level;

    /** A 1-D container (or npyio::array, with its shape), stored. A level
     * comes after a shape only: {"a", v, {3}} must not read as level 3. */
    template <class C, detail::if_container<C> = 0>
    entry(std::string k, const C &c)
        : entry(std::move(k), c, detail::own_shape<C>::of(c), stored) {}
    /** A container with a shape. */
    template <class C, detail::if_container<C> = 0>
    entry(std::string k, const C &c, shape_t s, int lvl = stored)
        : key(std::move(k)), type(type_of<detail::element_t<C>>()),
          shape(std::move(s)), data(c.data()),
          nbytes(c.size() * sizeof(detail::element_t<C>)), level(lvl) {}
    /** count(shape) elements of T at a pointer. */
    template <class T>
    entry(std::string k, const T *p, shape_t s, int lvl = stored)
        : key(std::move(k)), type(type_of<T>()), shape(std::move(s)),
          data(p), nbytes(detail::count(shape) * sizeof(T)), level(lvl) {}
    /** Any type npyio_save() takes, as raw bytes. */
    entry(std::string k, std::string t, shape_t s, const void *p,
          std::size_t n, int lvl = stored)
        : key(std::move(k)), type(std::move(t)), shape(std::move(s)), data(p),
          nbytes(n), level(lvl) {}
};

namespace detail {
// The column arrays npyio_savez() takes, pointing into the entries.
struct savez_columns {
    std::vector<const char *> keys, types;
    std::vector<int> ndims, levels;
    std::vector<const int64_t *> shapes;
    std::vector<const void *> data;
    std::vector<std::size_t> lens;
    explicit savez_columns(const std::vector<entry> &entries)
    {
        for (const entry &e : entries) {
            keys.push_back(e.key.c_str());
            types.push_back(e.type.c_str());
            ndims.push_back(ndim(e.shape));
            shapes.push_back(dims(e.shape));
            data.push_back(e.data);
            lens.push_back(e.nbytes);
            levels.push_back(e.level);
        }
    }
};
} // namespace detail

/** Write an .npz archive of the entries, each at its own level
 * (npyio_savez()); the path is replaced only if all were written. */
inline void savez(const std::string &path, const std::vector<entry> &entries,
                  uint32_t flags = 0, const options *o = nullptr)
{
    detail::savez_columns c(entries);
    check(npyio_savez(path.c_str(), entries.size(), c.keys.data(),
                      c.types.data(), c.ndims.data(), c.shapes.data(),
                      c.data.data(), c.lens.data(), c.levels.data(), flags,
                      detail::raw(o)));
}

/** Add one array to an existing archive (npyio_savez_append()). */
inline void savez_append(const std::string &path, const entry &e,
                         uint32_t flags = 0, const options *o = nullptr)
{
    check(npyio_savez_append(path.c_str(), e.key.c_str(), e.type.c_str(),
                             detail::ndim(e.shape), detail::dims(e.shape),
                             e.data, e.nbytes, e.level, flags, detail::raw(o)));
}
template <class C, detail::if_container<C> = 0>
void savez_append(const std::string &path, const std::string &key,
                  const C &c, const shape_t &shape, int level = stored)
{
    savez_append(path, entry(key, c, shape, level));
}
template <class T>
void savez_append(const std::string &path, const std::string &key,
                  const T *data, const shape_t &shape, int level = stored)
{
    savez_append(path, entry(key, data, shape, level));
}

/* ---- streams, readers, writers, maps ----------------------------------- */

/** A source or sink of bytes (npyio_stream). Readers and writers borrow
 * it: it must outlive them. */
class stream : public detail::handle<npyio_stream, detail::end_stream> {
public:
    using handle::handle;
    /** flags: NPYIO_STREAM_READ, NPYIO_STREAM_WRITE, or both. */
    static stream open_path(const std::string &path, uint32_t flags,
                            const options *o = nullptr)
    {
        return detail::open<stream, npyio_stream>(npyio_stream_open_path,
                                                  path.c_str(), flags, detail::raw(o));
    }
    static stream open_fd(int fd, const options *o = nullptr)
    {
        return detail::open<stream, npyio_stream>(npyio_stream_open_fd, fd, detail::raw(o));
    }
    static stream open_file(FILE *file, const options *o = nullptr)
    {
        return detail::open<stream, npyio_stream>(npyio_stream_open_file, file, detail::raw(o));
    }
    /** Over memory the caller keeps alive and unchanged. */
    static stream open_memory(const void *bytes, std::size_t len,
                              const options *o = nullptr)
    {
        return detail::open<stream, npyio_stream>(npyio_stream_open_memory,
                                                  bytes, len, detail::raw(o));
    }
    static stream create_memory(const options *o = nullptr)
    {
        return detail::open<stream, npyio_stream>(npyio_stream_create_memory, detail::raw(o));
    }
    /** Read up to cap bytes; fewer only at the end. */
    std::size_t read(void *buf, std::size_t cap)
    {
        std::size_t got = 0;
        check(npyio_stream_read(get(), buf, cap, &got));
        return got;
    }
    /** The bytes written to a growable stream, taken from it. */
    std::vector<unsigned char> take_bytes()
    {
        void *bytes = nullptr;
        std::size_t len = 0;
        check(npyio_stream_take_bytes(get(), &bytes, &len));
        detail::block owned(bytes);
        const unsigned char *b = static_cast<const unsigned char *>(bytes);
        return std::vector<unsigned char>(b, b + len);
    }
    void close() { close_with(npyio_stream_close); }
};

class npz;

/** A .npy array being read (npyio_reader). */
class reader : public detail::handle<npyio_reader, detail::end_reader> {
public:
    using handle::handle;
    static reader open(const std::string &path, const options *o = nullptr)
    {
        return detail::open<reader, npyio_reader>(npyio_reader_open_path,
                                                  path.c_str(), detail::raw(o));
    }
    static reader open(stream &s, const options *o = nullptr)
    {
        return detail::open<reader, npyio_reader>(npyio_reader_open_stream,
                                                  s.get(), detail::raw(o));
    }
    /** The file's header (borrowed from the reader). */
    header_view header() const { return header_view(npyio_reader_header(get())); }
    /** Deliver every later read as elements of T (npyio_reader_set_type()). */
    template <class T> reader &set_type(casting rule = casting::safe)
    {
        check(npyio_reader_set_type(get(), type_of<T>(), detail::cast_flags(rule)));
        return *this;
    }
    /** All the data into dst (npyio_reader_read()). */
    void read(void *dst, std::size_t cap, uint32_t flags = NPYIO_READ_NATIVE)
    {
        check(npyio_reader_read(get(), dst, cap, flags));
    }
    /** The next chunk into dst: its size in bytes, 0 at the end. */
    std::size_t read_chunk(void *dst, std::size_t cap,
                           uint32_t flags = NPYIO_READ_NATIVE)
    {
        std::size_t got = 0;
        check(npyio_reader_read_chunk(get(), dst, cap, flags, &got));
        return got;
    }
    /** Rows [first, first + count) along axis 0 into dst. */
    void read_rows(int64_t first, int64_t count, void *dst, std::size_t cap,
                   uint32_t flags = NPYIO_READ_NATIVE)
    {
        check(npyio_reader_read_rows(get(), first, count, dst, cap, flags));
    }
    void close() { close_with(npyio_reader_close); }
};

/** A .npy array being written (npyio_writer): close() commits it; an
 * owner destroyed before close() aborts (the destination keeps its old
 * file). */
class writer : public detail::handle<npyio_writer, detail::end_writer> {
public:
    using handle::handle;
    static writer create(const std::string &path, const header &h,
                         uint32_t flags = 0, const options *o = nullptr)
    {
        return detail::open<writer, npyio_writer>(npyio_writer_create_path, path.c_str(),
                                                  h.get(), flags, detail::raw(o));
    }
    static writer create(stream &s, const header &h, uint32_t flags = 0,
                         const options *o = nullptr)
    {
        return detail::open<writer, npyio_writer>(npyio_writer_create_stream, s.get(),
                                                  h.get(), flags, detail::raw(o));
    }
    /** Append rows described by `rows` (npyio_writer_open_append_path()). */
    static writer open_append(const std::string &path, const header &rows,
                              uint32_t flags = 0, const options *o = nullptr)
    {
        return detail::open<writer, npyio_writer>(npyio_writer_open_append_path,
                                                  path.c_str(), rows.get(), flags,
                                                  detail::raw(o));
    }
    static writer open_append(stream &s, const header &rows, uint32_t flags = 0,
                              const options *o = nullptr)
    {
        return detail::open<writer, npyio_writer>(npyio_writer_open_append_stream,
                                                  s.get(), rows.get(), flags,
                                                  detail::raw(o));
    }
    /** Rewrite rows in place (npyio_writer_open_in_place_path()). */
    static writer open_in_place(const std::string &path, uint32_t flags = 0,
                                const options *o = nullptr)
    {
        return detail::open<writer, npyio_writer>(npyio_writer_open_in_place_path,
                                                  path.c_str(), flags, detail::raw(o));
    }
    static writer open_in_place(stream &s, uint32_t flags = 0,
                                const options *o = nullptr)
    {
        return detail::open<writer, npyio_writer>(npyio_writer_open_in_place_stream,
                                                  s.get(), flags, detail::raw(o));
    }
    void write(const void *data, std::size_t len)
    {
        check(npyio_writer_write(get(), data, len));
    }
    /** Elements of T, in the header's byte order. */
    template <class T> void write(const T *data, std::size_t count)
    {
        write(static_cast<const void *>(data), count * sizeof(T));
    }
    void write_rows(int64_t first, int64_t count, const void *data, std::size_t len)
    {
        check(npyio_writer_write_rows(get(), first, count, data, len));
    }
    void close() { close_with(npyio_writer_close); }
    void abort() noexcept { reset(); }
};

/** A .npy file mapped into memory (npyio_map): bytes as stored. */
class map : public detail::handle<npyio_map, detail::end_map> {
public:
    using handle::handle;
    static map open(const std::string &path, uint32_t flags = 0,
                    const options *o = nullptr)
    {
        return detail::open<map, npyio_map>(npyio_map_open_path, path.c_str(),
                                            flags, detail::raw(o));
    }
    static map create(const std::string &path, const header &h,
                      uint32_t flags = 0, const options *o = nullptr)
    {
        return detail::open<map, npyio_map>(npyio_map_create_path, path.c_str(),
                                            h.get(), flags, detail::raw(o));
    }
    void *data() const { return npyio_map_data(get()); }
    header_view header() const { return header_view(npyio_map_header(get())); }
    bool is_aligned() const { return npyio_map_is_aligned(get()) != 0; }
    void close() { close_with(npyio_map_close); }
};

/* ---- archives ----------------------------------------------------------- */

/** One member of an open archive: loaded only when asked. Valid while
 * its npz is open. */
class member {
public:
    member(npyio_npz *z, std::size_t index, std::size_t shape_cap) noexcept
        : z_(z), index_(index), shape_cap_(shape_cap) {}
    std::size_t index() const noexcept { return index_; }
    /** The NumPy key ("a" for "a.npy") and the file name. */
    std::string key() const { return npyio_npz_key(z_, index_); }
    std::string name() const { return npyio_npz_name(z_, index_); }
    /** What the archive says of the member (NPYIO_NPZ_STAT_*). */
    int64_t stat(npyio_npz_stat_id id) const
    {
        int64_t value = 0;
        check(npyio_npz_stat(z_, index_, id, &value));
        return value;
    }
    /** Check the member's CRC and its .npy (npyio_npz_verify()). */
    void verify() const { check(npyio_npz_verify(z_, index_)); }
    /** A reader of the member, for chunks and rows (the archive must
     * outlive it). */
    npyio::reader reader() const
    {
        return detail::open<npyio::reader, npyio_reader>(npyio_reader_open_member,
                                                         z_, index_);
    }
    template <class T> array<T> load(casting rule = casting::safe) const;
    raw_array load_raw() const;

private:
    npyio_npz *z_;
    std::size_t index_;
    std::size_t shape_cap_; // the archive's NPYIO_LIMIT_NDIM
};

/** An .npz archive open for reading (npyio_npz), map-like: z.size(),
 * z.keys(), z.contains("a"), z["a"], and iteration over its members. */
class npz : public detail::handle<npyio_npz, detail::end_npz> {
public:
    using handle::handle;
    explicit npz(const std::string &path, const options *o = nullptr)
        : handle(detail::open<handle, npyio_npz>(npyio_npz_open_path, path.c_str(),
                                                 detail::raw(o))),
          shape_cap_(detail::ndim_limit(o)) {}
    explicit npz(stream &s, const options *o = nullptr)
        : handle(detail::open<handle, npyio_npz>(npyio_npz_open_stream, s.get(),
                                                 detail::raw(o))),
          shape_cap_(detail::ndim_limit(o)) {}

    std::size_t size() const { return npyio_npz_count(get()); }
    std::vector<std::string> keys() const
    {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < size(); i++)
            out.push_back(npyio_npz_key(get(), i));
        return out;
    }
    bool contains(const std::string &key) const
    {
        std::size_t index = 0;
        npyio_status st = npyio_npz_find(get(), key.c_str(), &index, nullptr);
        return st != NPYIO_E_NOT_FOUND && check(st) == NPYIO_OK;
    }
    /** The member of a key: npyio::error NPYIO_E_NOT_FOUND if none. */
    member operator[](const std::string &key) const
    {
        std::size_t index = 0;
        check(npyio_npz_find(get(), key.c_str(), &index, nullptr));
        return member(get(), index, shape_cap_);
    }
    member at(std::size_t index) const
    {
        if (index >= size())
            throw std::out_of_range("npyio::npz::at: no such member");
        return member(get(), index, shape_cap_);
    }

    /** Members in the archive's order. */
    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = member;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = member;
        iterator(const npz &z, std::size_t i) noexcept
            : z_(z.get()), i_(i), cap_(z.shape_cap_) {}
        member operator*() const noexcept { return member(z_, i_, cap_); }
        iterator &operator++() noexcept { ++i_; return *this; }
        iterator operator++(int) noexcept { iterator old = *this; ++i_; return old; }
        bool operator==(const iterator &o) const noexcept { return i_ == o.i_ && z_ == o.z_; }
        bool operator!=(const iterator &o) const noexcept { return !(*this == o); }

    private:
        npyio_npz *z_;
        std::size_t i_;
        std::size_t cap_;
    };
    iterator begin() const { return iterator(*this, 0); }
    iterator end() const { return iterator(*this, size()); }

    void close() { close_with(npyio_npz_close); }

private:
    std::size_t shape_cap_ = 64; // room for a member's shape (NPYIO_LIMIT_NDIM)
};

/** The member as elements of T, converted under the rule
 * (npyio_npz_load_as(); the CRC is checked). */
template <class T> array<T> member::load(casting rule) const
{
    return detail::typed_load<T>(shape_cap_, [&](auto... out) {
        return npyio_npz_load_as(z_, index_, type_of<T>(), detail::cast_flags(rule),
                                 out...);
    });
}

/** The member untyped: bytes, type string and shape (npyio_npz_load()). */
inline raw_array member::load_raw() const
{
    return detail::untyped_load(shape_cap_, [&](auto... out) {
        return npyio_npz_load(z_, index_, out...);
    });
}

/** An .npz archive being written (npyio_npz_writer): close() commits;
 * an owner destroyed before close() aborts. */
class npz_writer : public detail::handle<npyio_npz_writer, detail::end_npz_writer> {
public:
    using handle::handle;
    static npz_writer create(const std::string &path, uint32_t flags = 0,
                             const options *o = nullptr)
    {
        return detail::open<npz_writer, npyio_npz_writer>(
            npyio_npz_writer_create_path, path.c_str(), flags, detail::raw(o));
    }
    static npz_writer create(stream &s, uint32_t flags = 0, const options *o = nullptr)
    {
        return detail::open<npz_writer, npyio_npz_writer>(
            npyio_npz_writer_create_stream, s.get(), flags, detail::raw(o));
    }
    /** Add members to an existing archive (crash-safe, locked). */
    static npz_writer open_append(const std::string &path, uint32_t flags = 0,
                                  const options *o = nullptr)
    {
        return detail::open<npz_writer, npyio_npz_writer>(
            npyio_npz_writer_open_append_path, path.c_str(), flags, detail::raw(o));
    }
    /** Add members to an archive on a stream, rewritten through a
     * temporary stream (npyio_npz_writer_open_append_stream()). */
    static npz_writer open_append(stream &s, stream &temporary, uint32_t flags = 0,
                                  const options *o = nullptr)
    {
        return detail::open<npz_writer, npyio_npz_writer>(
            npyio_npz_writer_open_append_stream, s.get(), temporary.get(), flags,
            detail::raw(o));
    }
    /** Add an array (npyio_npz_writer_add()). */
    npz_writer &add(const entry &e)
    {
        check(npyio_npz_writer_add(get(), e.key.c_str(), e.type.c_str(),
                                   detail::ndim(e.shape), detail::dims(e.shape),
                                   e.data, e.nbytes, e.level, 0));
        return *this;
    }
    /** A writer of a new member, for arrays written in pieces: close or
     * drop it before the next add and before this writer's close(). */
    writer create_member(const std::string &key, const header &h,
                         int level = stored, uint32_t flags = 0)
    {
        return detail::open<writer, npyio_writer>(npyio_writer_create_member, get(),
                                                  key.c_str(), h.get(), level, flags);
    }
    /** Copy member `index` of `src` as it is stored, under a new key. */
    npz_writer &copy(const std::string &key, const npz &src, std::size_t index)
    {
        check(npyio_npz_writer_copy(get(), key.c_str(), src.get(), index));
        return *this;
    }
    void close() { close_with(npyio_npz_writer_close); }
    void abort() noexcept { reset(); }
};

} // namespace npyio

#endif /* NPYIO_HPP */
