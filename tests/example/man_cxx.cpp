// npyio.hpp in one program: the tasks as one-liners, an owner that
// commits on close(), and a failure caught as npyio::error.
#include <npyio.hpp>

#include <cstdio>
#include <vector>

int main()
{
    std::vector<double> grid = {1, 2, 3, 4, 5, 6};
    std::vector<int32_t> ids = {10, 20, 30, 40};

    npyio::save("grid.npy", grid, {2, 3});          // np.save, 2 x 3
    npyio::append("grid.npy", grid, {2, 3});        // two rows more
    auto a = npyio::load<double>("grid.npy");       // any numeric .npy
    std::printf("grid.npy: %d-D, %lld x %lld, last %g\n", a.ndim(),
                (long long)a.shape()[0], (long long)a.shape()[1],
                a[a.size() - 1]);

    npyio::savez("both.npz", {{"grid", a},                 // its own shape
                              {"ids", ids, {4}, npyio::compressed}});
    for (auto &&m : npyio::npz("both.npz"))        // opened once
        std::printf("%s: %zu values\n", m.key().c_str(),
                    m.load<double>().size());

    // A writer owns its file until close() commits it; dropped before
    // that, it aborts and an existing rows.npy stays as it was.
    auto w = npyio::writer::create("rows.npy",
                                   npyio::header::of<float>({2, 2}));
    const float row[2] = {0.5f, 1.5f};
    w.write(row, 2);
    w.write(row, 2);
    w.close();
    std::printf("rows.npy: %zu values\n",
                npyio::load<float>("rows.npy").size());

    try {
        npyio::load<float>("no-such.npy");
    } catch (const npyio::error &e) {             // a std::runtime_error
        std::printf("%s: %s\n", npyio_status_string(e.status()), e.what());
        return e.status() == NPYIO_E_NOT_FOUND ? 0 : 1;
    }
    return 1;
}
