#ifndef CCRYPT_H
#define CCRYPT_H

#include <stddef.h>

/// 1 when `password` (of `length` bytes; a NUL inside never matches) hashes to `hash` under crypt(3) from
/// libcrypt (bcrypt $2a$/$2b$/$2y$ among others), the two compared in constant time; 0 otherwise.
/// Thread-safe: crypt_r with its scratch on the heap.
int ccrypt_verify(const char *password, size_t length, const char *hash);

#endif
