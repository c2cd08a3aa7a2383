#ifndef CTLS_H
#define CTLS_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/// Creates the client context: TLS 1.2 minimum, peer verification against the
/// default trust store (SSL_CERT_FILE / SSL_CERT_DIR honoured) plus `extra_ca_file`
/// when not NULL, no automatic retries so a non-blocking caller keeps control, and
/// sessions the caller may keep for resumption.
/// Returns NULL on failure, leaving the reason on the OpenSSL error queue.
SSL_CTX *ctls_client_context_new(const char *extra_ca_file);

/// Attaches `fd` through a BIO that writes with MSG_NOSIGNAL: Linux has no
/// SO_NOSIGPIPE, and OpenSSL's socket BIO uses write(), which raises SIGPIPE
/// when the peer has gone. The fd stays owned by the caller. Returns 1 on success.
int ctls_set_socket(SSL *ssl, int fd);

/// Sets SNI (for names only) and the name or IP address the certificate must match.
/// Returns 1 on success.
int ctls_set_peer_name(SSL *ssl, const char *host, int is_ip_address);

#endif
