#!/bin/sh
# check_dist.sh BUILD_DIR WORK_DIR: the source tarball (`package_source`)
# of the configured build holds exactly the files git tracks (the CI
# script and .gitignore aside) and nothing else, and its contents alone,
# unpacked in WORK_DIR, configure, build with warnings as errors and pass
# the tests (all but the slow and crash labels).
set -eu
build=$1
work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
cmake --build "$build" --target package_source
tarball=$(ls "$build"/npyio-*.tar.gz)
name=$(basename "$tarball" .tar.gz)
echo "tarball: $tarball"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    tar -tzf "$tarball" | grep -v '/$' | sed "s|^$name/||" | sort >"$build/dist.lst"
    git -C "$src" ls-files | grep -v -e '^\.ci/' -e '^\.gitignore$' | sort \
        >"$build/git.lst"
    if ! cmp -s "$build/git.lst" "$build/dist.lst"; then
        echo "the tarball and git ls-files differ (< git only, > tarball only):"
        diff "$build/git.lst" "$build/dist.lst" | grep '^[<>]' | head -20
        exit 1
    fi
    echo "the tarball holds the $(wc -l <"$build/dist.lst") files git tracks"
fi
rm -rf "$work" && mkdir -p "$work"
tar -xzf "$tarball" -C "$work"
cmake -S "$work/$name" -B "$work/build" -DNPYIO_WERROR=ON
cmake --build "$work/build" -j"$(nproc)"
ctest --test-dir "$work/build" --output-on-failure --parallel "$(nproc)" \
      -LE 'slow|crash'
echo "the tarball builds and passes the tests on its own"
