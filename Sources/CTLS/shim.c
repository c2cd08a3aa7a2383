#include "CTLS.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

int ctls_client_configure(SSL_CTX *ctx, const char *extra_ca_file, int verify_server) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    // A client that checks nothing skips reading the trust store (a few hundred certificates).
    if (verify_server
        && (SSL_CTX_set_default_verify_paths(ctx) != 1
            || (extra_ca_file != NULL && SSL_CTX_load_verify_locations(ctx, extra_ca_file, NULL) != 1))) {
        return 0;
    }
    SSL_CTX_set_verify(ctx, verify_server ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
    // Servers answering with `Connection: close` often skip close_notify; the HTTP
    // framing (Content-Length, chunked) is what detects a truncated body.
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    // The caller keeps one session per origin for resumption (SSL_get1_session,
    // SSL_set_session); OpenSSL's internal cache is never looked up by a client.
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    return 1;
}

static int nosig_write(BIO *bio, const char *buf, int len) {
    int fd = (int)(intptr_t)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(bio);
    return (int)n;
}

static int nosig_read(BIO *bio, char *buf, int len) {
    int fd = (int)(intptr_t)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = recv(fd, buf, (size_t)len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(bio);
    return (int)n;
}

static long nosig_ctrl(BIO *bio, int cmd, long num, void *ptr) {
    (void)bio; (void)num; (void)ptr;
    // Nothing is buffered here, so a flush always succeeds; every other control is unsupported.
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int nosig_create(BIO *bio) {
    BIO_set_init(bio, 1);
    return 1;
}

static BIO_METHOD *nosig_method;
static pthread_once_t nosig_once = PTHREAD_ONCE_INIT;

static void nosig_method_init(void) {
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "socket without SIGPIPE");
    if (m == NULL) return;
    BIO_meth_set_write(m, nosig_write);
    BIO_meth_set_read(m, nosig_read);
    BIO_meth_set_ctrl(m, nosig_ctrl);
    BIO_meth_set_create(m, nosig_create);
    nosig_method = m;
}

int ctls_set_socket(SSL *ssl, int fd) {
    pthread_once(&nosig_once, nosig_method_init);
    if (nosig_method == NULL) return 0;
    BIO *bio = BIO_new(nosig_method);
    if (bio == NULL) return 0;
    BIO_set_data(bio, (void *)(intptr_t)fd);
    SSL_set_bio(ssl, bio, bio); // the SSL owns the BIO from here on
    return 1;
}

int ctls_set_peer_name(SSL *ssl, const char *host, int is_ip_address) {
    if (is_ip_address) {
        // RFC 6066 forbids IP literals in SNI.
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
    }
    if (SSL_set_tlsext_host_name(ssl, host) != 1) return 0;
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return SSL_set1_host(ssl, host);
}

// Go's default TLS 1.2 suites (crypto/tls since Go 1.22, what exporter-toolkit serves without
// cipher_suites): ECDHE with AES-GCM or ChaCha20-Poly1305, then ECDHE with AES-CBC-SHA. OpenSSL's own
// default adds the CBC-SHA256/SHA384 suites, RSA key exchange and DHE, which Go leaves out.
static const char go_default_suites[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA";

int ctls_server_configure(SSL_CTX *ctx, int min_version, int max_version) {
    if (min_version != 0 && min_version < TLS1_2_VERSION) {
        // TLS 1.0 and 1.1 sign the handshake with MD5+SHA-1, which security level 1 and up refuse, so
        // every such handshake would fail with an internal error. Only a context asked for them drops to 0.
        SSL_CTX_set_security_level(ctx, 0);
    }
    if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1
        || SSL_CTX_set_max_proto_version(ctx, max_version) != 1
        || SSL_CTX_set_cipher_list(ctx, go_default_suites) != 1) {
        return 0;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION);
    SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    // One recv takes whatever records have arrived, instead of a header and a body recv per record.
    SSL_CTX_set_read_ahead(ctx, 1);
    // Resumed sessions with client certificates need a context id; any constant will do for one server.
    static const unsigned char id[] = "http-server";
    SSL_CTX_set_session_id_context(ctx, id, sizeof id - 1);
    return 1;
}

static int accept_any_certificate(int preverify_ok, X509_STORE_CTX *store) {
    (void)preverify_ok; (void)store;
    return 1;
}

void ctls_server_set_client_auth(SSL_CTX *ctx, int mode) {
    switch (mode) {
    case 1: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any_certificate); break;
    case 2: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any_certificate); break;
    case 3: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL); break;
    case 4: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL); break;
    default: SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL); break;
    }
}

int ctls_set_groups(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_groups_list(ctx, list);
}

// The server's socket BIO also remembers whether the last recv came back short: with read-ahead, that
// means the socket was drained, so an edge-triggered reader can stop without one more recv for EAGAIN.
struct server_socket {
    int fd;
    int drained;
};

static int server_write(BIO *bio, const char *buf, int len) {
    struct server_socket *socket = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = send(socket->fd, buf, (size_t)len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(bio);
    return (int)n;
}

static int server_read(BIO *bio, char *buf, int len) {
    struct server_socket *socket = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = recv(socket->fd, buf, (size_t)len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_read(bio);
        socket->drained = 1;
    } else {
        socket->drained = n < len;
    }
    return (int)n;
}

static int server_destroy(BIO *bio) {
    free(BIO_get_data(bio));
    BIO_set_data(bio, NULL);
    return 1;
}

static BIO_METHOD *server_method;
static pthread_once_t server_once = PTHREAD_ONCE_INIT;

static void server_method_init(void) {
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "server socket");
    if (m == NULL) return;
    BIO_meth_set_write(m, server_write);
    BIO_meth_set_read(m, server_read);
    BIO_meth_set_ctrl(m, nosig_ctrl);
    BIO_meth_set_create(m, nosig_create);
    BIO_meth_set_destroy(m, server_destroy);
    server_method = m;
}

int ctls_server_attach(SSL *ssl, int fd) {
    pthread_once(&server_once, server_method_init);
    if (server_method == NULL) return 0;
    struct server_socket *socket = calloc(1, sizeof *socket);
    if (socket == NULL) return 0;
    socket->fd = fd;
    BIO *bio = BIO_new(server_method);
    if (bio == NULL) {
        free(socket);
        return 0;
    }
    BIO_set_data(bio, socket);
    SSL_set_bio(ssl, bio, bio);
    SSL_set_accept_state(ssl);
    return 1;
}

int ctls_server_drained(SSL *ssl) {
    if (SSL_has_pending(ssl)) return 0;
    struct server_socket *socket = BIO_get_data(SSL_get_rbio(ssl));
    return socket != NULL && socket->drained;
}

void ctls_prefer_server_ciphers(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
}

int ctls_error_is_http_request(void) {
    unsigned long code = ERR_peek_error();
    return code != 0 && ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_HTTP_REQUEST;
}
