// Linked into the arm64 release (build.sh --arch arm64), which is built on Debian 13 (glibc 2.41)
// but should also run on Debian 12 (glibc 2.36: Raspberry Pi OS bookworm). Six functions would
// bind to versions glibc 2.38 added; defined here, the binary binds them to this file instead:
// - __isoc23_strtol, __isoc23_strtoll, __isoc23_sscanf: glibc 2.41's headers make the Swift runtime
//   and Dispatch call these C23 variants. C23's one change, a 0b prefix, is not in what they parse
//   (the environment, /proc), so the functions of before C23 do.
// - strlcpy: new in glibc 2.38.
// - fmod, fmodf: glibc 2.38 gave them new versions (errno set without a wrapper); the old ones
//   compute the same result.
// Built as C17 without _GNU_SOURCE, so the calls below are the functions of before C23. Hidden:
// exported, they would take the dynamic linker's lookups too, fmod@GLIBC_2.17's included (a loop).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN long __isoc23_strtol(const char *string, char **end, int base) { return strtol(string, end, base); }

HIDDEN long long __isoc23_strtoll(const char *string, char **end, int base) { return strtoll(string, end, base); }

HIDDEN int __isoc23_sscanf(const char *string, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int count = vsscanf(string, format, arguments);
    va_end(arguments);
    return count;
}

HIDDEN size_t strlcpy(char *destination, const char *source, size_t size) {
    size_t length = strlen(source);
    if (size > 0) {
        size_t copied = length < size - 1 ? length : size - 1;
        memcpy(destination, source, copied);
        destination[copied] = '\0';
    }
    return length;
}

// glibc's aarch64 versions before 2.38 are its first, GLIBC_2.17.
double fmod_glibc217(double, double);
float fmodf_glibc217(float, float);
__asm__(".symver fmod_glibc217, fmod@GLIBC_2.17");
__asm__(".symver fmodf_glibc217, fmodf@GLIBC_2.17");
HIDDEN double fmod(double x, double y) { return fmod_glibc217(x, y); }
HIDDEN float fmodf(float x, float y) { return fmodf_glibc217(x, y); }
