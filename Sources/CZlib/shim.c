#include "CZlib.h"

int czlib_deflate_init_raw(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

int czlib_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}
