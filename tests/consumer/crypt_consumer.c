/*
 * crypt_consumer.c - a program that includes the C library's <crypt.h>
 * next to <npyio.h> and is built with `$(pkg-config --cflags --libs npyio)
 * -lcrypt`. The flags of npyio.pc must not put another package's include
 * folder first (minizip's has a crypt.h of its own, which would hide
 * crypt(3) and leave it undeclared). Exits 0 only if crypt() works.
 */
#include <crypt.h>
#include <npyio.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    const char *hash = crypt("pw", "$6$salt");

    if (hash == NULL || strncmp(hash, "$6$salt$", 8) != 0) {
        fprintf(stderr, "crypt() failed: %s\n", hash ? hash : "(null)");
        return 1;
    }
    printf("crypt OK next to libnpyio %s\n", npyio_version_string());
    return 0;
}
