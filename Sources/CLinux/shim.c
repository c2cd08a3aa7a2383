#define _GNU_SOURCE
#include "CLinux.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

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
