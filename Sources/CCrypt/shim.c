#include "CCrypt.h"

#include <crypt.h>
#include <stdlib.h>
#include <string.h>

int ccrypt_verify(const char *password, size_t length, const char *hash) {
    if (strlen(password) != length) return 0;
    struct crypt_data *data = calloc(1, sizeof *data);
    if (data == NULL) return 0;
    const char *computed = crypt_r(password, hash, data);
    int ok = 0;
    // libcrypt answers a failure with NULL or a string starting with '*'.
    if (computed != NULL && computed[0] != '*') {
        size_t a = strlen(computed), b = strlen(hash);
        unsigned char difference = (unsigned char)(a != b);
        size_t n = a < b ? a : b;
        for (size_t i = 0; i < n; i++) difference |= (unsigned char)(computed[i] ^ hash[i]);
        ok = difference == 0;
    }
    explicit_bzero(data, sizeof *data);
    free(data);
    return ok;
}
