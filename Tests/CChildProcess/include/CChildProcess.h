#ifndef CCHILDPROCESS_H
#define CCHILDPROCESS_H

#include <sys/types.h>

/// Starts `argv[0]` (looked up in PATH when it has no slash, as posix_spawnp does) with `envp`, its
/// stdin, stdout and stderr on the given descriptors, and PR_SET_PDEATHSIG set to SIGKILL before
/// exec: the child dies with the test process however that ends (a timeout's SIGKILL included),
/// which posix_spawn has no hook for. The kernel sends that signal when the *thread* that forked
/// exits, so call this from a thread that lives as long as the process. Returns the child's pid,
/// or minus the errno of what failed (fork, or the exec, reported back through a close-on-exec pipe).
pid_t child_process_spawn(char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd);

/// pipe2(ends, O_CLOEXEC), which Swift's Glibc module leaves out (a GNU function): a pipe no other
/// test's child inherits, even one forked between the pipe's creation and a later fcntl.
int child_process_pipe(int ends[2]);

/// Moves the calling thread alone into a new network namespace, its loopback up (unshare and an
/// ioctl, which Swift's Glibc module leaves out; root only), for a server a test must reach only from
/// inside it. 0, or minus the errno of what failed.
int child_process_new_network_namespace(void);

#endif
