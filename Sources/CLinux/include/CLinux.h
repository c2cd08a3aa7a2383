#ifndef CLINUX_H
#define CLINUX_H

// What Swift's Glibc module leaves out: epoll, eventfd, the GNU accept4 and pthread_setname_np.
// Real headers, so constants and the (packed on x86_64) epoll_event layout come from the system.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

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

/// accept4 without the peer address (glibc's transparent-union argument does not import into Swift).
static inline int clinux_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

static inline uint32_t clinux_epoll_event_flags(const struct epoll_event *event) {
    return event->events;
}

#endif
