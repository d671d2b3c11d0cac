/* SPDX-License-Identifier: MIT */
/* media_sandbox.c - the confinement of toolfs-media-worker (docs/SPEC.md §6 "The media
 * sandbox"): the fork server takes an unprivileged user, rlimits and no new privileges, which
 * its workers inherit; each worker adds death with the server, no new process, and a seccomp
 * allowlist that leaves no open, socket, exec or fork. */
#include <errno.h>
#include <iconv.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Names of the system calls by number, looked up once by the fork server (libseccomp's table,
 * which allocates): the SIGSYS handler of a worker reads them, safe in a signal handler. */
#define MEDIA_SYSCALLS 512
static const char *syscall_names[MEDIA_SYSCALLS];

static void name_syscalls(void)
{
	for (int i = 0; i < MEDIA_SYSCALLS; i++)
		syscall_names[i] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, i);
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
	name_syscalls();
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

/* The worker's system calls, measured rather than guessed: tests/seccomp_profile.py runs the
 * worker over every media fixture of the tests and a generated corpus (a 20-minute film with
 * 2,000 cues, 1,000 chapters, 4K H.264 and HEVC, VP9, AV1, MPEG-2, ProRes, AC-3, WMA, ALAC ...)
 * with the filter logging instead of stopping, and prints the calls made (docs/SPEC.md §6 "The
 * media sandbox"). Measured on Debian 12 (glibc 2.36, FFmpeg 5.1): brk, close, futex,
 * getrusage, mmap, mremap, munmap, pread64, recvmsg, write, and sysinfo (refused below). The
 * rest of the list is the reviewed margin, each for a path the corpus does not take; anything
 * else stops the worker (SIGSYS, the call named in its reply). */
static const int allowed[] = {
	/* measured: the request and its descriptor, the file's bytes (FFmpeg's I/O preads the
	 * descriptor), the reply; margin: read, writev and sendmsg on those same descriptors */
	SCMP_SYS(recvmsg),
	SCMP_SYS(pread64),
	SCMP_SYS(write),
	SCMP_SYS(close),
	SCMP_SYS(read),
	SCMP_SYS(writev),
	SCMP_SYS(sendmsg),
	/* measured: glibc's malloc and FFmpeg's frame buffers; margin: madvise and mprotect,
	 * which glibc's malloc uses to trim and grow a heap other than the main one */
	SCMP_SYS(brk),
	SCMP_SYS(mmap),
	SCMP_SYS(munmap),
	SCMP_SYS(mremap),
	SCMP_SYS(madvise),
	SCMP_SYS(mprotect),
	/* measured: locks (glibc's stdio and FFmpeg's once-locks futex even with one thread) */
	SCMP_SYS(futex),
	/* measured: the CPU time the pool retires a worker by; margin: the clocks deadlines read,
	 * answered by the vDSO unless the kernel's clock source has none */
	SCMP_SYS(getrusage),
	SCMP_SYS(clock_gettime),
	SCMP_SYS(gettimeofday),
	/* margin: the own process, for glibc's abort() and raise() (the SIGSYS handler raises),
	 * a signal handler's return, FFmpeg's av_cpu_count and a yield */
	SCMP_SYS(getpid),
	SCMP_SYS(gettid),
	SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigreturn),
	SCMP_SYS(sched_getaffinity),
	SCMP_SYS(sched_yield),
	/* margin: the end of a worker whose socket closed (others are killed), random bytes */
	SCMP_SYS(exit),
	SCMP_SYS(exit_group),
	SCMP_SYS(getrandom),
};

/* Harmless questions about the machine or the process that glibc or a library may ask, and
 * that have an answer for failure: they fail with EPERM instead of stopping the worker. glibc's
 * qsort asks sysinfo() for the memory size once its array passes 1 KiB (and sorts in place when
 * it fails); sysconf, get_nprocs and getrlimit callers fall back to defaults. prlimit64 only to
 * read (no new limit: its third argument NULL). */
static const int refused[] = {
	SCMP_SYS(sysinfo),     SCMP_SYS(uname),          SCMP_SYS(getrlimit),
	SCMP_SYS(getcpu),      SCMP_SYS(sched_getparam), SCMP_SYS(sched_getscheduler),
	SCMP_SYS(getpriority), SCMP_SYS(clock_getres),   SCMP_SYS(times),
};

/* SIGSYS from the filter (SECCOMP_RET_TRAP): the forbidden call did not run. The worker's reply
 * names it (no reply of this request has been sent: replies are written with write alone, which
 * the filter allows), then the worker dies of SIGSYS, pending until the handler returns (the
 * handler is reset to the default on entry, SA_RESETHAND). */
static void stopped_at_syscall(int sig, siginfo_t *info, void *context)
{
	struct media_reply rep = {
		.magic = MEDIA_MAGIC, .status = MEDIA_SANDBOXED, .duration = -1.0};
	int nr = info->si_syscall;
	const char *name = nr >= 0 && nr < MEDIA_SYSCALLS ? syscall_names[nr] : NULL;
	size_t len = name ? strlen(name) : 0;

	(void)context;
	if (len >= sizeof(rep.syscall))
		len = 0;
	if (len) {
		memcpy(rep.syscall, name, len);
	} else { /* no name: the number (snprintf is not for signal handlers) */
		char digits[12];
		unsigned n = (unsigned)nr;

		do
			digits[len++] = (char)('0' + n % 10);
		while ((n /= 10) && len < sizeof(digits));
		for (size_t i = 0; i < len; i++)
			rep.syscall[i] = digits[len - 1 - i];
	}
	(void)!write(MEDIA_WORKER_FD, &rep, sizeof(rep));
	raise(sig);
}

int media_sandbox_seccomp(bool profile)
{
	struct sigaction sa = {.sa_sigaction = stopped_at_syscall,
			       .sa_flags = SA_SIGINFO | SA_RESETHAND};
	/* a test run's profile (TOOLFS_MEDIA_TEST=profile): every call runs and is logged, for
	 * tests/seccomp_profile.py to list under strace. Honoured only under a tracer, so that a
	 * daemon left with the variable in its environment still stops every other call. */
	uint32_t other = profile && tr_traced() ? SCMP_ACT_LOG : SCMP_ACT_TRAP;
	scmp_filter_ctx ctx;
	int rc;

	if (sigaction(SIGSYS, &sa, NULL))
		return -1;
	ctx = seccomp_init(other);
	rc = ctx ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	for (size_t i = 0; rc == 0 && i < sizeof(refused) / sizeof(refused[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i], 0);
	/* prlimit64 to read alone (no new limit); tgkill to itself alone (abort() and raise()
	 * signal so): no other process is signalled. (Designated: SCMP_A0 leaves datum_b to the
	 * compiler's warning.) */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1,
				      (struct scmp_arg_cmp){.arg = 2, .op = SCMP_CMP_EQ});
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				      (struct scmp_arg_cmp){.arg = 0,
							    .op = SCMP_CMP_EQ,
							    .datum_a = (scmp_datum_t)getpid()});
	if (rc == 0)
		rc = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	return rc ? -1 : 0;
}
