#ifndef CTLS_H
#define CTLS_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/// Sets up a new client-method context: TLS 1.2 minimum, peer verification against the
/// default trust store (SSL_CERT_FILE / SSL_CERT_DIR honoured) plus `extra_ca_file`
/// when not NULL, no automatic retries so a non-blocking caller keeps control, and
/// sessions the caller may keep for resumption.
/// Returns 1 on success; 0 leaves the reason on the OpenSSL error queue (the caller frees the context).
int ctls_client_configure(SSL_CTX *ctx, const char *extra_ca_file, int verify_server);

/// Attaches `fd` through a BIO that writes with MSG_NOSIGNAL: Linux has no
/// SO_NOSIGPIPE, and OpenSSL's socket BIO uses write(), which raises SIGPIPE
/// when the peer has gone. The fd stays owned by the caller. Returns 1 on success.
int ctls_set_socket(SSL *ssl, int fd);

/// Sets SNI (for names only) and the name or IP address the certificate must match.
/// Returns 1 on success.
int ctls_set_peer_name(SSL *ssl, const char *host, int is_ip_address);

/// Sets up a new server-method context for TLS versions `min_version`..`max_version` (TLS1_2_VERSION...; 0 for the
/// library's bound; below TLS 1.2 at security level 0, which those versions need), Go's default TLS 1.2
/// cipher suites (SSL_CTX_set_cipher_list may replace them): no renegotiation, no automatic retries,
/// buffers released while a connection idles, and a retried SSL_write may come from a different address
/// (the caller re-gathers the same bytes).
/// Returns 1 on success; 0 leaves the reason on the OpenSSL error queue (the caller frees the context).
int ctls_server_configure(SSL_CTX *ctx, int min_version, int max_version);

/// Client certificates: 0 none, 1 requested (any accepted), 2 required (any accepted), 3 verified if given,
/// 4 required and verified. Verification uses the locations loaded into the context.
void ctls_server_set_client_auth(SSL_CTX *ctx, int mode);

/// SSL_CTX_set1_groups_list is a macro. Returns 1 on success.
int ctls_set_groups(SSL_CTX *ctx, const char *list);

/// SSL_OP_CIPHER_SERVER_PREFERENCE is a macro Swift cannot import.
void ctls_prefer_server_ciphers(SSL_CTX *ctx);

/// Attaches `fd` through a BIO that sends with MSG_NOSIGNAL and notes short reads, and puts the connection
/// in the server role. The fd stays owned by the caller. Returns 1 on success.
int ctls_server_attach(SSL *ssl, int fd);

/// 1 when nothing is buffered in the SSL and the last recv on its socket came back short (or EAGAIN): the
/// socket is drained, and an edge-triggered reader may wait for the next edge.
int ctls_server_drained(SSL *ssl);

/// 1 when the first error on the queue says the peer sent a plain HTTP request (GET, POST, HEAD, PUT)
/// where a TLS ClientHello was due; OpenSSL sends no alert then.
int ctls_error_is_http_request(void);

#endif
