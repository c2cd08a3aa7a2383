#ifndef CTLS_H
#define CTLS_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#endif
