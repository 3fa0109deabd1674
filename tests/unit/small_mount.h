/*
 * small_mount.h - the full-disk fixture of test_map and test_pathfault: a
 * 1 MiB tmpfs at <scratch dir>/small, mounted by the test's setup when it
 * can be (root, and a kernel that lets it: not under every emulator or
 * container) and unmounted by its teardown. A test that needs the full
 * disk skips itself unless small_mounted is SMALL_MOUNTED. Include after
 * scratch.h, with _POSIX_C_SOURCE 200809L defined; use mount_small and
 * unmount_small as the test's setup and teardown.
 */
#ifndef NPYIO_SMALL_MOUNT_H
#define NPYIO_SMALL_MOUNT_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

enum {
    SMALL_NONE,    /* no mount: only the directory */
    SMALL_MOUNTED, /* the 1 MiB tmpfs */
    SMALL_TOO_BIG  /* mounted, but not the small file system it should be */
};

static char small[256];
static int small_mounted;

static inline int mount_small(void **state)
{
    char cmd[400];
    struct statvfs vfs;

    (void)state;
    small_mounted = SMALL_NONE;
    path_in_dir(small, sizeof small, "small");
    if (mkdir(small, 0700) != 0)
        return -1;
    snprintf(cmd, sizeof cmd,
             "mount -t tmpfs -o size=1m tmpfs %s >/dev/null 2>&1", small);
    if (geteuid() != 0 || system(cmd) != 0)
        return 0;
    /* Really the small file system (not the directory it covers). */
    small_mounted = statvfs(small, &vfs) == 0 &&
                    (unsigned long long)vfs.f_blocks * vfs.f_frsize <=
                        (1u << 20)
                        ? SMALL_MOUNTED
                        : SMALL_TOO_BIG;
    return 0;
}

static inline int unmount_small(void **state)
{
    char cmd[600];
    int failed = 0;

    (void)state;
    if (small_mounted != SMALL_NONE) {
        /* Lazily if a failed test left a file or mapping open on it. */
        snprintf(cmd, sizeof cmd,
                 "umount %s 2>/dev/null || umount -l %s 2>/dev/null", small,
                 small);
        failed = system(cmd) != 0;
        small_mounted = SMALL_NONE;
    }
    return rmdir(small) != 0 || failed ? -1 : 0;
}

#endif /* NPYIO_SMALL_MOUNT_H */
