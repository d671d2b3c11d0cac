/* SPDX-License-Identifier: MIT */
/* sandbox_worker.h - toolfs-reader-worker's confinement (sandbox_confine.c). */
#ifndef TR_SANDBOX_WORKER_H
#define TR_SANDBOX_WORKER_H

#include <stdint.h>
#include <sys/types.h>

/* The fork server's own confinement, once at its start, after it loaded what every worker
 * shares: the user nobody when root started it, no new privileges, no core files, no file
 * written; and the worker filters prepared (seccomp and Landlock), to be put on by each worker.
 * Returns 0, or -1 when any of it failed (the server then ends). */
int sandbox_server_confine(void);

/* A worker's confinement, in the child of server after fork, once it has its request: death
 * with the server, rlimits (address space max_memory bytes, CPU, files), Landlock (read-only
 * access to the libraries' data alone, where the kernel has it) and the seccomp filter (kill by
 * default). Returns 0, or -1 (the worker then ends without an answer). */
int sandbox_worker_confine(pid_t server, uint64_t max_memory);

/* The name of system call nr (from a table the server made before any worker; "?" past it):
 * safe in a signal handler. */
const char *sandbox_syscall_name(long nr);

#endif
