#ifndef CLINUX_H
#define CLINUX_H

// What Swift's Glibc module leaves out: epoll, eventfd, the GNU accept4, pthread_setname_np and setns.
// Real headers, so constants and the (packed on x86_64) epoll_event layout come from the system.
// No _GNU_SOURCE here: it renames fd_set's field, which would clash with other modules' view of
// <sys/select.h>; the GNU functions are wrapped in shim.c instead.
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>

/// epoll_event's data is a union and the struct is packed on x86_64: these keep Swift off both.
static inline struct epoll_event clinux_epoll_event(uint32_t events, uint64_t data) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = data;
    return event;
}

static inline uint64_t clinux_epoll_event_data(const struct epoll_event *event) {
    return event->data.u64;
}

static inline uint32_t clinux_epoll_event_flags(const struct epoll_event *event) {
    return event->events;
}

/// accept4; `flags` takes SOCK_NONBLOCK and SOCK_CLOEXEC. `peer` gets the client's address as 128
/// bits, most significant first: IPv6 as is, IPv4 as ::ffff:a.b.c.d, anything else 0.
int clinux_accept4(int fd, int flags, uint64_t peer[2]);

/// pthread_setname_np; names longer than 15 bytes are refused by the kernel.
int clinux_set_thread_name(pthread_t thread, const char *name);

/// A new memfd, close-on-exec and sealable, of `count` zero bytes; -1 (errno set) on failure.
int clinux_memfd(const char *name, size_t count);

/// Seals a memfd against any write, growth or shrinking: pages the kernel still sends from can never
/// change. 0, or -1 with errno set.
int clinux_seal(int fd);

/// setns(2) into the network namespace `fd` names (an open /proc/PID/ns/net), for the calling thread
/// only; 0, or -1 with errno set (EPERM without CAP_SYS_ADMIN).
int clinux_enter_network_namespace(int fd);

/// sendfile(2): up to `count` bytes of `in_fd` from `*offset` to the socket `out_fd`; advances `*offset`.
long clinux_sendfile(int out_fd, int in_fd, long *offset, size_t count);

#endif
