/* SPDX-License-Identifier: MIT */
/* sandbox_proto.h - the messages between the reader core (sandbox.c) and toolfs-reader-worker:
 * to the fork server over its control socket (a socket to fork a worker on, a worker to end),
 * and to a worker over its own socketpair (one request with the file's descriptor, SCM_RIGHTS;
 * one reply: a header and a serialized tr_result, sandbox_wire.c). */
#ifndef TR_SANDBOX_PROTO_H
#define TR_SANDBOX_PROTO_H

#include <stdint.h>
#include <sys/stat.h>

#include "tr_options.h"
#include "tr_selector.h"

#define SANDBOX_MAGIC 0x74727331u /* "trs1" */
/* The serialization's version: both sides are one build, but a worker of another install
 * answers nothing the core trusts. */
#define SANDBOX_VERSION 1u
/* The control socket in the fork server, and a worker's end of its socketpair in the worker. */
#define SANDBOX_FD 3
/* The most a reply may carry (its header excluded): what the core allocates at most. */
#define SANDBOX_MAX_REPLY (512u << 20)
/* The most bytes of the source's path and name a request carries. */
#define SANDBOX_MAX_PATH 65536u
/* A worker past the read's deadline is given this long to answer with what it has (the readers
 * stop their renders at the deadline themselves) before the core has it killed. */
#define SANDBOX_GRACE_MS 2000
/* A reader still inside a call it cannot cancel this long past the deadline is finished by the
 * worker's watchdog (struct tr_watch): within the grace, and after what a render stopped at the
 * deadline takes to parse the rest of its page (about 1 s of 200,000 operations). */
#define SANDBOX_ANSWER_MS 1000

/* A read: this header (with the file's descriptor), then path_len bytes of the source's path
 * and name_len bytes of its name (no NULs). */
struct sandbox_request {
	uint32_t magic;
	uint32_t version;
	uint32_t reader;   /* index in tr_readers */
	uint32_t path_len; /* at most SANDBOX_MAX_PATH */
	uint32_t name_len; /* at most SANDBOX_MAX_PATH; 0 and has_name 0: no name */
	uint32_t has_name;
	uint64_t deadline; /* CLOCK_MONOTONIC ns (one clock for both processes); 0 none */
	struct stat st;    /* the dispatcher's fstat of this read */
	struct tr_selector sel;
	struct tr_options opts;
};

enum sandbox_status {
	SANDBOX_OK = 0,    /* len bytes of serialized result follow */
	SANDBOX_NOMEM = 1, /* the read ran out of memory (max_worker_memory); nothing follows */
	/* the seccomp filter stopped the worker: len bytes (at most SANDBOX_MAX_SYSCALL_NAME,
	 * [a-z0-9_]) of the system call's name follow */
	SANDBOX_SYSCALL = 2,
};

#define SANDBOX_MAX_SYSCALL_NAME 32

struct sandbox_reply {
	uint32_t magic;
	uint32_t status; /* enum sandbox_status */
	uint64_t len;
	uint32_t modules; /* SANDBOX_OK: the mask of tr_modules the worker has loaded */
	uint32_t reserved;
};

/* To the fork server: SANDBOX_SPAWN with a socket (SCM_RIGHTS) forks a worker on it;
 * SANDBOX_END kills the worker pid (one of its own children, alive or not) and reaps it. */
enum sandbox_control_op {
	SANDBOX_SPAWN = 1,
	SANDBOX_END = 2,
};

struct sandbox_control {
	uint32_t magic;
	uint32_t op; /* enum sandbox_control_op */
	int32_t pid; /* SANDBOX_END: the worker */
	/* SANDBOX_SPAWN: the mask of tr_modules earlier reads loaded, which the server loads and
	 * warms (struct tr_module_head) before it forks, once each */
	uint32_t warm;
};

/* SANDBOX_SPAWN: the new worker's pid (-1: fork failed, status its errno), and in landlock 0
 * when the worker is under Landlock, else the errno of the kernel's answer to the server's
 * question (ENOSYS, EOPNOTSUPP: the reading process logs it once); SANDBOX_END: the pid (-1: no
 * such child) and its wait status. */
struct sandbox_control_reply {
	uint32_t magic;
	int32_t pid;
	int32_t status;
	uint32_t landlock;
};

#endif
