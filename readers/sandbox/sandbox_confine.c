/* SPDX-License-Identifier: MIT */
/* sandbox_confine.c - the confinement of toolfs-reader-worker (docs/SPEC.md §8): the fork
 * server becomes nobody and takes no new privileges, no core file, no file written; it
 * prepares a Landlock ruleset (read-only access to the libraries' data) and a seccomp filter
 * (kill by default) that each worker puts on after its own rlimits. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include "nobody.h"
#include "sandbox_proto.h"
#include "sandbox_worker.h"

#define WORKER_CPU_SOFT 120 /* seconds of CPU; the core ends a read sooner (its deadline) */
#define WORKER_NOFILE 64    /* the libraries open fonts and data files while they read */

/* Landlock rights newer than the headers this may be built with. */
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* struct landlock_ruleset_attr as ABI 6 has it (the kernel takes the size given). */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

/* What the readers' libraries read while they work, read-only: fonts and their configuration
 * (cairo, poppler, librsvg through fontconfig), poppler-data, tessdata, the shared libraries
 * and their plug-ins (libvips modules, gconv, GdkPixbuf loaders), and the toolfs modules
 * (the worker's own folder, added at run time). Nothing else can be opened. */
static const char *const readable[] = {
	"/usr/lib",
	"/usr/lib64",
	"/usr/local/lib",
	"/etc/fonts",
	"/usr/share/fonts",
	"/usr/local/share/fonts",
	"/var/cache/fontconfig",
	"/usr/share/fontconfig",
	"/usr/share/poppler",
	"/usr/share/tesseract-ocr",
	"/usr/share/mime",
	"/etc/ld.so.cache",
	"/etc/ImageMagick-6",
	"/usr/share/ImageMagick-6",
};

static int ruleset_fd = -1;
static int landlock_errno; /* 0, or why the kernel has no Landlock */
static scmp_filter_ctx filter;
/* The names of the system calls, made by the server for its workers' SIGSYS handler. */
#define SYSCALL_NAMES 512
static char syscall_names[SYSCALL_NAMES][SANDBOX_MAX_SYSCALL_NAME + 1];
/* In a traced profile run, the errno each refused call answers (0: none), which the worker's
 * SIGSYS handler returns in the filter's place (prepare_seccomp says why). */
static unsigned char profile_errno[SYSCALL_NAMES];

static void name_syscalls(void)
{
	for (int nr = 0; nr < SYSCALL_NAMES; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

		snprintf(syscall_names[nr], sizeof(syscall_names[nr]), "%s", name ? name : "?");
		free(name);
	}
}

const char *sandbox_syscall_name(long nr)
{
	return nr >= 0 && nr < SYSCALL_NAMES ? syscall_names[nr] : "?";
}

int sandbox_profile_errno(long nr)
{
	return nr >= 0 && nr < SYSCALL_NAMES ? profile_errno[nr] : 0;
}

static int limit(int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit r = {soft, hard};

	return setrlimit(resource, &r);
}

static int add_readable(const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr rule = {.allowed_access = access};
	struct stat st;
	int rc;

	rule.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (rule.parent_fd < 0)
		return 0; /* not on this system: nothing to allow */
	if (fstat(rule.parent_fd, &st) == 0 && !S_ISDIR(st.st_mode))
		rule.allowed_access &= LANDLOCK_ACCESS_FS_READ_FILE;
	rc = (int)syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
	close(rule.parent_fd);
	return rc;
}

int sandbox_landlock_missing(void)
{
	return landlock_errno;
}

/* The Landlock ruleset, when the kernel has Landlock (ruleset_fd stays -1 without it, and
 * landlock_errno says why: ENOSYS, or EOPNOTSUPP when it is built but not enabled). */
static int prepare_landlock(bool missing)
{
	long abi = missing ? (errno = ENOSYS, -1)
			   : syscall(SYS_landlock_create_ruleset, NULL, 0,
				     LANDLOCK_CREATE_RULESET_VERSION);
	struct ruleset_attr attr = {0};
	size_t size = sizeof(attr.handled_access_fs);
	uint64_t read_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	char self[PATH_MAX];
	ssize_t len;

	if (abi < 1) { /* docs/SPEC.md §8: seccomp, nobody and the rlimits still hold */
		landlock_errno = abi < 0 && errno > 0 ? errno : ENOSYS;
		return 0;
	}
	attr.handled_access_fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;
	if (abi >= 2)
		attr.handled_access_fs |= LL_FS_REFER;
	if (abi >= 3)
		attr.handled_access_fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		attr.handled_access_fs |= LL_FS_IOCTL_DEV;
	if (abi >= 4) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(struct ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	ruleset_fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ruleset_fd < 0)
		return -1;
	for (size_t i = 0; i < sizeof(readable) / sizeof(readable[0]); i++)
		if (add_readable(readable[i], read_access))
			return -1;
	/* Tesseract's data folder when the administrator moved it ($TESSDATA_PREFIX) */
	if (getenv("TESSDATA_PREFIX") && add_readable(getenv("TESSDATA_PREFIX"), read_access))
		return -1;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		char *slash;

		self[len] = '\0';
		slash = strrchr(self, '/');
		if (slash && slash != self)
			*slash = '\0';
		if (add_readable(self, read_access))
			return -1;
	}
	return 0;
}

/* The worker's system calls, measured rather than guessed: tests/seccomp_profile.py --reader
 * runs every family (PDF text, render, region and OCR; PNG, JPEG, GIF, WebP, BMP, TIFF, ICO,
 * HEIC, AVIF; SVG; docx, xlsx, pptx, ODF; notebooks with image outputs; audio and video:
 * FFmpeg's demuxers and decoders, subtitles, frames, contact sheets and their fit, WAV) over
 * the tests' generators and a real-sized corpus with the filter logging instead of stopping,
 * and prints the calls each family's workers and their threads made (docs/SPEC.md §8 lists
 * them per family; one list serves them all, as every worker is the same program). Measured
 * on Debian 12 (glibc 2.36, poppler 22.12, libvips 8.14, librsvg 2.54, Tesseract 5.3, FFmpeg
 * 5.1): the calls marked so below (media's are all among them: no call was added for it); the rest is the reviewed margin, each for a path
 * the corpus does not take. Everything else stops the worker (SIGSYS, after its handler named
 * the call): execve, fork, socket, connect, ptrace, mount, kill, ... Files are read only in
 * practice (Landlock, nobody and RLIMIT_FSIZE 0 refuse writes). */
static const int allowed[] = {
	/* measured: the file's bytes (pread64), fonts, fontconfig's caches (fadvise64),
	 * poppler-data, tessdata, libvips's and ImageMagick's modules and configuration (openat,
	 * read, lseek, close, newfstatat, access, readlink, getdents64, getcwd, fcntl), the reply
	 * (sendto), stderr (write: Tesseract's messages, the SIGABRT handler's reply); margin: the
	 * other ways glibc and Rust's std (librsvg) reach the same (fstat, statx, faccessat2,
	 * readlinkat, readv, dup), and writev: stdio */
	SCMP_SYS(pread64),
	SCMP_SYS(openat),
	SCMP_SYS(read),
	SCMP_SYS(lseek),
	SCMP_SYS(close),
	SCMP_SYS(newfstatat),
	SCMP_SYS(access),
	SCMP_SYS(readlink),
	SCMP_SYS(getdents64),
	SCMP_SYS(getcwd),
	SCMP_SYS(fcntl),
	SCMP_SYS(sendto),
	SCMP_SYS(fstat),
	SCMP_SYS(statx),
	SCMP_SYS(faccessat2),
	SCMP_SYS(readlinkat),
	SCMP_SYS(readv),
	SCMP_SYS(fadvise64),
	SCMP_SYS(dup),
	SCMP_SYS(write),
	SCMP_SYS(writev),
	/* measured: memory (glibc's malloc, libvips's and cairo's buffers); margin: none */
	SCMP_SYS(brk),
	SCMP_SYS(mmap),
	SCMP_SYS(munmap),
	SCMP_SYS(mremap),
	SCMP_SYS(mprotect),
	SCMP_SYS(madvise),
	/* measured: threads (clone, below, with CLONE_THREAD alone) and their set-up, locks (futex:
	 * left out of the trace, millions of calls under strace; glibc's locks need it), the CPU
	 * count (libvips, GLib), thread names (prctl, below), their end, the read's watchdog
	 * waiting for its deadline (clock_nanosleep); margin: a yield and a sleep (libgomp's and
	 * GLib's waits), the thread's id */
	SCMP_SYS(futex),
	SCMP_SYS(set_robust_list),
	SCMP_SYS(rseq),
	SCMP_SYS(sched_getaffinity),
	SCMP_SYS(exit),
	SCMP_SYS(exit_group),
	SCMP_SYS(sched_yield),
	SCMP_SYS(nanosleep),
	SCMP_SYS(clock_nanosleep),
	SCMP_SYS(gettid),
	/* measured: signal masks and handlers (glibc's thread start, GLib), the own pid (raise),
	 * random bytes (Rust's hash seeds), clocks (deadlines; the vDSO answers most), CPU time
	 * (ImageMagick's timer); margin: a handler's return, the handler's stack, the ids a
	 * library asks (GLib's user name cache, fontconfig's cache check) */
	SCMP_SYS(rt_sigaction),
	SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(getpid),
	SCMP_SYS(getrandom),
	SCMP_SYS(clock_gettime),
	SCMP_SYS(times),
	SCMP_SYS(rt_sigreturn),
	SCMP_SYS(sigaltstack),
	SCMP_SYS(getuid),
	SCMP_SYS(geteuid),
	SCMP_SYS(getgid),
	SCMP_SYS(getegid),
	SCMP_SYS(gettimeofday),
	SCMP_SYS(clock_getres),
	SCMP_SYS(getrusage),
	/* margin: GLib's main context wake-up (an eventfd, polled), should a library run one */
	SCMP_SYS(eventfd2),
	SCMP_SYS(poll),
	SCMP_SYS(ppoll),
};

/* Information and housekeeping calls a library may make and do without: an error, not a
 * kill (glibc's qsort asks sysinfo; GLib and libgomp ask the scheduler and the limits). */
static const int refused[] = {
	SCMP_SYS(sysinfo),
	SCMP_SYS(uname),
	SCMP_SYS(getrlimit),
	SCMP_SYS(prlimit64),
	SCMP_SYS(ioctl),
	SCMP_SYS(statfs),
	SCMP_SYS(fstatfs),
	SCMP_SYS(sched_setaffinity),
	SCMP_SYS(sched_getparam),
	SCMP_SYS(sched_getscheduler),
	SCMP_SYS(sched_setscheduler),
	SCMP_SYS(getpriority),
	SCMP_SYS(setpriority),
	SCMP_SYS(get_mempolicy),
	SCMP_SYS(set_mempolicy),
	SCMP_SYS(mbind),
	SCMP_SYS(mkdir),
	SCMP_SYS(mkdirat),
	SCMP_SYS(unlink),
	SCMP_SYS(unlinkat),
	SCMP_SYS(rename),
	SCMP_SYS(renameat),
	SCMP_SYS(renameat2),
	SCMP_SYS(fsync),
	SCMP_SYS(fdatasync),
	SCMP_SYS(ftruncate),
	SCMP_SYS(fchmod),
	SCMP_SYS(umask),
	SCMP_SYS(flock),
	SCMP_SYS(inotify_init1),
	SCMP_SYS(memfd_create),
	SCMP_SYS(mlock),
	SCMP_SYS(munlock),
	SCMP_SYS(getcpu),
	SCMP_SYS(utimensat),
	SCMP_SYS(sched_get_priority_max),
	SCMP_SYS(sched_get_priority_min),
	/* GLib's log writer asks whether stderr is the journal's socket before it prints a
	 * library's warning (Pango's, before librsvg aborts on a font it cannot scale) */
	SCMP_SYS(getpeername),
	SCMP_SYS(getsockname),
};

/* The action of a call refused with errno err. In a traced profile run it traps instead, and
 * the worker's SIGSYS handler answers err as the filter would (the call does not run): strace
 * --seccomp-bpf, which stops the tracee only for the calls it traces (futex left out: the page
 * and OCR threads make hundreds of thousands), is never told of a call a filter answers an
 * errno, but it shows the signal, which names the call. A refused call made with SIGSYS
 * blocked kills the worker in a profile run: its read fails, and the run says so. */
static uint32_t refuse(int nr, int err, bool logging)
{
	if (!logging)
		return SCMP_ACT_ERRNO(err);
	if (nr >= 0 && nr < SYSCALL_NAMES)
		profile_errno[nr] = (unsigned char)err;
	return SCMP_ACT_TRAP;
}

static int prepare_seccomp(bool profile)
{
	/* SIGSYS trapped, so that the worker names the call (sandbox_worker.c on_sigsys); a
	 * test run's profile (TOOLFS_WORKER_TEST=profile) logs instead and lets the call run, for
	 * tests/seccomp_profile.py --reader to list under strace: honoured only under a tracer, so
	 * that a daemon left with the variable still stops every other call */
	bool logging = profile && tr_traced();
	int rc;

	filter = seccomp_init(logging ? SCMP_ACT_LOG : SCMP_ACT_TRAP);
	name_syscalls();
	rc = filter ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, allowed[i], 0);
	for (size_t i = 0; rc == 0 && i < sizeof(refused) / sizeof(refused[0]); i++)
		rc = seccomp_rule_add(filter, refuse(refused[i], EPERM, logging), refused[i], 0);
	/* threads only: a clone without CLONE_THREAD (fork) kills; clone3 is answered ENOSYS so
	 * that glibc takes clone, whose flags the filter can see. Not trapped in a profile run:
	 * glibc tries it with every signal blocked, and a blocked SIGSYS kills (the profile counts
	 * it from each thread's clone) */
	if (rc == 0)
		rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	if (rc == 0)
		rc = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* thread names (GLib, libgomp); every other prctl is refused */
	if (rc == 0)
		rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				      SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	if (rc == 0)
		rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				      SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
	if (rc == 0)
		rc = seccomp_rule_add(filter, refuse(SCMP_SYS(prctl), EPERM, logging),
				      SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_GT, PR_SET_NAME));
	if (rc == 0)
		rc = seccomp_rule_add(filter, refuse(SCMP_SYS(prctl), EPERM, logging),
				      SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_LT, PR_SET_NAME));
	return rc ? -1 : 0;
}

int sandbox_server_confine(unsigned tests)
{
	/* Started by root (the daemon), the server becomes nobody: no file of anyone's to reach
	 * and no process of anyone's to signal, should a worker's filter leave a way. */
	if (tr_drop_to_nobody())
		return -1;
	if (limit(RLIMIT_CORE, 0, 0) || limit(RLIMIT_FSIZE, 0, 0))
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (prepare_landlock(tests & SANDBOX_TEST_NO_LANDLOCK) ||
	    prepare_seccomp(tests & SANDBOX_TEST_PROFILE))
		return -1;
	return 0;
}

int sandbox_worker_confine(pid_t server, uint64_t max_memory, bool threads)
{
	int rc;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != server)
		return -1;         /* the server may have ended before PDEATHSIG was set */
#if !defined(__SANITIZE_ADDRESS__) /* ASan's shadow memory is terabytes of address space */
	if (max_memory && limit(RLIMIT_AS, max_memory, max_memory))
		return -1;
#else
	(void)max_memory;
#endif
	if (limit(RLIMIT_CPU, WORKER_CPU_SOFT, WORKER_CPU_SOFT + 10) ||
	    limit(RLIMIT_NOFILE, WORKER_NOFILE, WORKER_NOFILE))
		return -1;
	/* No new task: RLIMIT_NPROC counts every task of the real user, threads included, so a
	 * reader that starts threads (libvips's pool, toolfs's page threads) keeps the server's
	 * limit; seccomp still refuses it a fork (docs/SPEC.md §8). The server keeps forking. Root
	 * is exempt from it (a worker of a user who is not root keeps its user). */
	if (!threads && limit(RLIMIT_NPROC, 0, 0))
		return -1;
	if (ruleset_fd >= 0) {
		if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0))
			return -1;
		close(ruleset_fd);
	}
	/* signals to itself alone (abort() raises SIGABRT so) */
	rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
			      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	if (rc == 0)
		rc = seccomp_load(filter);
	return rc ? -1 : 0;
}
