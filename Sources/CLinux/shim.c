#define _GNU_SOURCE
#include "CLinux.h"

#include <sys/socket.h>

int clinux_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int clinux_set_thread_name(pthread_t thread, const char *name) {
    return pthread_setname_np(thread, name);
}
