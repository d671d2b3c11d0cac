# SPDX-License-Identifier: MIT
"""Runs a command under a unit's system call restrictions, as systemd would, without systemd:
seccomp_exec.py [--allow NAME]... [--family AF_X]... [--restrict-namespaces] -- CMD ARG...

It sets no_new_privs, installs one seccomp filter and execs CMD. The filter allows the x86-64
system calls named by --allow (SystemCallFilter=, groups already expanded by the caller) and
nothing from another architecture (SystemCallArchitectures=native); socket(2) only for the
--family families, else EAFNOSUPPORT (RestrictAddressFamilies=); with --restrict-namespaces,
unshare, setns and clone with a namespace flag fail with EPERM and clone3 with ENOSYS, as
RestrictNamespaces=yes does. Any other call kills the process: stricter than a unit with
SystemCallErrorNumber=EPERM, so a call missing from the list shows up as a dead daemon rather
than as a silent fallback."""
import ctypes
import errno
import os
import re
import socket
import struct
import sys

UNISTD = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
NAMESPACE_FLAGS = 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | \
    0x40000000 | 0x00020000 | 0x00000080  # NEWCGROUP UTS IPC USER PID NET NS(mnt) TIME

# classic BPF opcodes
LD_W_ABS, JEQ_K, JGE_K, JSET_K, JA, RET_K = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def syscall_numbers() -> dict:
    """Name -> number for x86-64, from the kernel's uapi header."""
    with open(UNISTD) as f:
        return {m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+)\s+(\d+)", f.read())}


def build_filter(allow, families, restrict_namespaces) -> list:
    """The program as (code, jt, jf, k) tuples."""
    numbers = syscall_numbers()
    prog = [(LD_W_ABS, 0, 0, 4), (JEQ_K, 1, 0, AUDIT_ARCH_X86_64), (RET_K, 0, 0, RET_KILL_PROCESS),
            (LD_W_ABS, 0, 0, 0), (JGE_K, 0, 1, X32_SYSCALL_BIT), (RET_K, 0, 0, RET_KILL_PROCESS)]
    tails = []  # (syscall number, instructions run on a match, ending in a RET)
    if families is not None:
        allowed = [getattr(socket, f) for f in families]
        check = [(LD_W_ABS, 0, 0, 16)]
        for fam in allowed:
            check += [(JEQ_K, 0, 1, fam), (RET_K, 0, 0, RET_ALLOW)]
        tails.append((numbers["socket"], check + [(RET_K, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT)]))
    if restrict_namespaces:
        for name in ("unshare", "setns"):
            tails.append((numbers[name], [(RET_K, 0, 0, RET_ERRNO | errno.EPERM)]))
        tails.append((numbers["clone3"], [(RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]))
        tails.append((numbers["clone"], [(LD_W_ABS, 0, 0, 16), (JSET_K, 0, 1, NAMESPACE_FLAGS),
                                         (RET_K, 0, 0, RET_ERRNO | errno.EPERM),
                                         (RET_K, 0, 0, RET_ALLOW)]))
    special = {nr for nr, _ in tails}
    # Each special call jumps (JA, 32-bit offset) to its tail placed after the allow list.
    jumps = len(prog)
    prog += [None] * (2 * len(tails))
    for name in sorted(set(allow)):
        nr = numbers.get(name)
        if nr is not None and nr not in special:
            prog += [(JEQ_K, 0, 1, nr), (RET_K, 0, 0, RET_ALLOW)]
    prog.append((RET_K, 0, 0, RET_KILL_PROCESS))
    for i, (nr, body) in enumerate(tails):
        at = jumps + 2 * i
        prog[at] = (JEQ_K, 0, 1, nr)
        prog[at + 1] = (JA, 0, 0, len(prog) - (at + 2))
        prog += body
    return prog


def install(prog) -> None:
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


def main(argv) -> None:
    split = argv.index("--")
    allow, families, restrict = [], None, False
    opts = iter(argv[:split])
    for opt in opts:
        if opt == "--allow":
            allow.append(next(opts))
        elif opt == "--family":
            families = (families or []) + [next(opts)]
        elif opt == "--restrict-namespaces":
            restrict = True
        else:
            sys.exit(f"seccomp_exec.py: unknown option {opt}")
    cmd = argv[split + 1:]
    # Resolve before the filter: nothing but the exec itself runs under it here.
    prog = build_filter(allow + ["execve"], families, restrict)
    install(prog)
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
