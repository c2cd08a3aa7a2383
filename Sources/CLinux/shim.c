#define _GNU_SOURCE
#include "CLinux.h"

#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

int clinux_accept4(int fd, int flags, uint64_t peer[2]) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    int client = accept4(fd, (struct sockaddr *)&address, &length, flags);
    unsigned char bytes[16] = {0};
    if (client >= 0 && address.ss_family == AF_INET) {
        // As IPv6 maps it (::ffff:a.b.c.d), so a dual-stack listener names an IPv4 client the same way.
        bytes[10] = bytes[11] = 0xff;
        memcpy(bytes + 12, &((struct sockaddr_in *)&address)->sin_addr, 4);
    } else if (client >= 0 && address.ss_family == AF_INET6) {
        memcpy(bytes, &((struct sockaddr_in6 *)&address)->sin6_addr, 16);
    }
    peer[0] = peer[1] = 0;
    for (int i = 0; i < 16; i++) peer[i / 8] = peer[i / 8] << 8 | bytes[i];
    return client;
}

int clinux_set_thread_name(pthread_t thread, const char *name) {
    return pthread_setname_np(thread, name);
}

int clinux_memfd(const char *name, size_t count) {
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)count) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int clinux_seal(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
}

long clinux_sendfile(int out_fd, int in_fd, long *offset, size_t count) {
    off_t position = (off_t)*offset;
    ssize_t n = sendfile(out_fd, in_fd, &position, count);
    *offset = (long)position;
    return (long)n;
}

int clinux_enter_network_namespace(int fd) {
    return setns(fd, CLONE_NEWNET);
}
