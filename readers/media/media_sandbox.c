/* SPDX-License-Identifier: MIT */
/* media_sandbox.c - the confinement of toolfs-media-worker (docs/SPEC.md §6 "The media
 * sandbox"): the fork server takes an unprivileged user, rlimits and no new privileges, which
 * its workers inherit; each worker adds death with the server, no new process, and a seccomp
 * allowlist that leaves no open, socket, exec or fork. */
#include <iconv.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <seccomp.h>

#include "media_worker.h"
#include "nobody.h"

#define MEDIA_AS_LIMIT (1024ull << 20) /* address space: decoders of huge frames fail cleanly */
#define MEDIA_CPU_SOFT 120             /* seconds of CPU; the pool retires a worker sooner */
#define MEDIA_NOFILE 8                 /* 0-3 and the passed socket or descriptor */

static int limit(int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit r = {soft, hard};

	return setrlimit(resource, &r);
}

/* iconv loads a gconv module (open + mmap) on first use of a charset, which the filter then
 * kills: the charsets FFmpeg's MPEG-TS demuxer converts DVB strings from (libavformat/mpegts.c)
 * are loaded before, and kept open. */
static void preload_charsets(void)
{
	static const char *const charsets[] = {
		"ISO6937",     "ISO-8859-5",  "ISO-8859-6",  "ISO-8859-7",  "ISO-8859-8",
		"ISO-8859-9",  "ISO-8859-10", "ISO-8859-11", "ISO-8859-13", "ISO-8859-14",
		"ISO-8859-15", "UCS-2BE",     "KSC_5601",    "GB2312",      "UTF-16BE",
	};

	for (size_t i = 0; i < sizeof(charsets) / sizeof(charsets[0]); i++)
		(void)iconv_open("UTF-8", charsets[i]); /* kept: the module stays mapped */
}

int media_sandbox_limits(void)
{
	/* Started by root (the daemon), the server becomes nobody: no file of anyone's to reach
	 * and no process of anyone's to signal, should a worker's filter leave a way. */
	if (tr_drop_to_nobody())
		return -1;
#if !defined(__SANITIZE_ADDRESS__) /* ASan's shadow memory is terabytes of address space */
	if (limit(RLIMIT_AS, MEDIA_AS_LIMIT, MEDIA_AS_LIMIT))
		return -1;
#endif
	if (limit(RLIMIT_CORE, 0, 0) || limit(RLIMIT_CPU, MEDIA_CPU_SOFT, MEDIA_CPU_SOFT + 10) ||
	    limit(RLIMIT_NOFILE, MEDIA_NOFILE, MEDIA_NOFILE) || limit(RLIMIT_FSIZE, 0, 0))
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	preload_charsets(); /* once, for every worker forked after */
	return 0;
}

int media_sandbox_worker(pid_t server)
{
	/* no new processes (not enforced for root; the filter forbids fork and clone anyway) */
	limit(RLIMIT_NPROC, 0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		return -1;
	/* the server may have ended before PDEATHSIG was set */
	return getppid() == server ? 0 : -1;
}

/* Everything else kills the process (SIGSYS): open, openat, socket, connect, execve, clone,
 * fork, ptrace, ... The list is what FFmpeg's demuxers and decoders with thread_count 1, glibc's
 * malloc and the worker's loop use. */
static const int allowed[] = {
	SCMP_SYS(read),          SCMP_SYS(pread64),
	SCMP_SYS(write),         SCMP_SYS(writev),
	SCMP_SYS(recvmsg),       SCMP_SYS(sendmsg),
	SCMP_SYS(close),         SCMP_SYS(mmap),
	SCMP_SYS(munmap),        SCMP_SYS(mremap),
	SCMP_SYS(brk),           SCMP_SYS(madvise),
	SCMP_SYS(mprotect),      SCMP_SYS(futex),
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
	SCMP_SYS(getrusage),     SCMP_SYS(getpid),
	SCMP_SYS(gettid),        SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigreturn),  SCMP_SYS(sched_getaffinity),
	SCMP_SYS(sched_yield),   SCMP_SYS(exit),
	SCMP_SYS(exit_group),    SCMP_SYS(getrandom),
};

int media_sandbox_seccomp(void)
{
	scmp_filter_ctx ctx;
	int rc;

	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	rc = ctx ? 0 : -1;

	for (size_t i = 0; rc == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* tgkill to itself alone (abort() raises SIGABRT so): no other process is signalled */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	if (rc == 0)
		rc = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	return rc ? -1 : 0;
}
