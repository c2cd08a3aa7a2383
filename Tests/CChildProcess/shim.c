#define _GNU_SOURCE
#include "CChildProcess.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/// In the forked child: only system calls until exec (another thread may have held a lock at the fork).
__attribute__((noreturn)) static void become(char *const argv[], char *const envp[], const int fds[3], pid_t parent, int report) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) goto fail;
    // The parent may have died between the fork and the prctl: then no signal ever comes.
    if (getppid() != parent) _exit(127);
    for (int target = 0; target < 3; target++) {
        // dup2 onto itself keeps close-on-exec: clear it instead.
        if (fds[target] == target ? fcntl(target, F_SETFD, 0) != 0 : dup2(fds[target], target) < 0) goto fail;
    }
    // Start as a shell would start it: no signal blocked (the forking thread may block some, as
    // Dispatch's workers do), SIGPIPE at its default.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    execvpe(argv[0], argv, envp);
fail:;
    int code = errno;
    while (write(report, &code, sizeof code) < 0 && errno == EINTR) {}
    _exit(127);
}

pid_t child_process_spawn(char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -errno;
    const int fds[3] = {stdin_fd, stdout_fd, stderr_fd};
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        int code = errno;
        close(report[0]);
        close(report[1]);
        return -code;
    }
    if (child == 0) {
        close(report[0]);
        become(argv, envp, fds, parent, report[1]);
    }
    close(report[1]);
    // The report pipe closes at the exec (nothing read) or carries the errno of what failed.
    int code = 0;
    ssize_t count;
    while ((count = read(report[0], &code, sizeof code)) < 0 && errno == EINTR) {}
    close(report[0]);
    if (count == (ssize_t)sizeof code) {
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
        return -code;
    }
    return child;
}

int child_process_pipe(int ends[2]) { return pipe2(ends, O_CLOEXEC); }

int child_process_new_network_namespace(void) {
    if (unshare(CLONE_NEWNET) != 0) return -errno;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    struct ifreq request;
    memset(&request, 0, sizeof request);
    strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    int result = ioctl(fd, SIOCGIFFLAGS, &request);
    if (result == 0) {
        request.ifr_flags |= IFF_UP;
        result = ioctl(fd, SIOCSIFFLAGS, &request);
    }
    int code = result == 0 ? 0 : -errno;
    close(fd);
    return code;
}
