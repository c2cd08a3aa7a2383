#ifndef CZLIB_H
#define CZLIB_H

#include <zlib.h>

/// deflateInit2 for raw deflate (no zlib or gzip wrapper): `level`, a 32 KiB window, the default
/// memory level. deflateInit2 is a macro, so Swift cannot call it. Returns Z_OK on success.
int czlib_deflate_init_raw(z_stream *stream, int level);

/// inflateInit2 accepting gzip only (windowBits 15 + 16). Returns Z_OK on success.
int czlib_inflate_init_gzip(z_stream *stream);

#endif
