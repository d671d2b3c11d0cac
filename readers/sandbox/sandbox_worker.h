/* SPDX-License-Identifier: MIT */
/* sandbox_worker.h - toolfs-reader-worker's confinement (sandbox_confine.c). */
#ifndef TR_SANDBOX_WORKER_H
#define TR_SANDBOX_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The test modes of TOOLFS_WORKER_TEST (docs/SPEC.md §8) that change the confinement itself. */
enum sandbox_test {
	/* the seccomp filter logs every call it would stop (SCMP_ACT_LOG) instead of stopping it,
	 * and traps the calls it refuses, which the SIGSYS handler answers their errno, when the
	 * server is traced (strace): tests/seccomp_profile.py --reader measures so */
	SANDBOX_TEST_PROFILE = 1u << 0,
	/* the server finds no Landlock, as on a kernel without it (ENOSYS) */
	SANDBOX_TEST_NO_LANDLOCK = 1u << 1,
};

/* The fork server's own confinement, once at its start, after it loaded what every worker
 * shares: the user nobody when root started it, no new privileges, no core files, no file
 * written; and the worker filters prepared (seccomp and Landlock), to be put on by each worker.
 * tests: enum sandbox_test flags, 0 but in tests. Returns 0, or -1 when any of it failed (the
 * server then ends). */
int sandbox_server_confine(unsigned tests);

/* 0 when the workers are put under Landlock; else the errno of the kernel's answer to
 * landlock_create_ruleset's version question (ENOSYS, EOPNOTSUPP: no Landlock). */
int sandbox_landlock_missing(void);

/* A worker's confinement, in the child of server after fork, once it has its request: death
 * with the server, rlimits (address space max_memory bytes, CPU, files, and no new task unless
 * threads: its reader starts threads, TR_CAP_THREADS), Landlock (read-only access to the
 * libraries' data alone, where the kernel has it) and the seccomp filter (kill by default).
 * Returns 0, or -1 (the worker then ends without an answer). */
int sandbox_worker_confine(pid_t server, uint64_t max_memory, bool threads);

/* The name of system call nr (from a table the server made before any worker; "?" past it):
 * safe in a signal handler. */
const char *sandbox_syscall_name(long nr);

/* In a traced profile run (SANDBOX_TEST_PROFILE), the errno the filter would answer call nr
 * with, which it traps instead for strace to see; 0 for every other call and in every other
 * run. Safe in a signal handler. */
int sandbox_profile_errno(long nr);

#endif
