"""The jail's seccomp filter: deny the system calls no test program needs.

A classic BPF program over `struct seccomp_data`, built once per fork server and installed
in each jailed program right before it runs (after no_new_privs, so no capability is
needed). The denied calls are the kernel's largest attack surface for an unprivileged
process and the ways out of a namespace; no compiler, interpreter or test program here
uses them. Three answers:

- ``kill``: the whole program dies of SIGSYS (`SandboxResult.describe` says why). An
  attempt earns nothing: a program that tries to escape and then solves the task scores 0.
- ``enosys``: "not implemented", for calls that libraries probe and then fall back from
  (glibc tries ``clone3`` before ``clone``; libuv tries ``io_uring``).
- calls of a foreign architecture (``int 0x80`` on x86_64) and of the x32 ABI are killed:
  their numbers mean other calls, which would slip past the table.

Only x86_64 has a table; on another architecture `filter_program` returns None and the
jail runs without a filter (``rewardsmith doctor`` says so).
"""

from __future__ import annotations

import os
import struct
from typing import NamedTuple

__all__ = [
    "ARG_RULES",
    "DENIED",
    "ENOSYS",
    "RET_ALLOW",
    "RET_ERRNO",
    "RET_KILL_PROCESS",
    "SYSCALLS",
    "filter_program",
    "run_filter",
]

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
_ENOSYS_ERRNO = 38

# x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl).
SYSCALLS: dict[str, int] = {
    "ioctl": 16, "socket": 41, "clone": 56, "ptrace": 101, "syslog": 103,
    "uselib": 134, "personality": 135, "ustat": 136, "sysfs": 139, "vhangup": 153,
    "modify_ldt": 154, "pivot_root": 155, "_sysctl": 156, "adjtimex": 159, "chroot": 161,
    "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167,
    "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172,
    "ioperm": 173, "create_module": 174, "init_module": 175, "delete_module": 176,
    "get_kernel_syms": 177, "query_module": 178, "quotactl": 179, "nfsservctl": 180,
    "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
    "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
    "kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435, "pidfd_getfd": 438,
    "mount_setattr": 442, "quotactl_fd": 443, "memfd_create": 319,
}  # fmt: skip

DENIED: dict[str, str] = {
    # Another process's memory or a debugger's grip on it.
    "ptrace": "debug or take over another process",
    "process_vm_readv": "read another process's memory",
    "process_vm_writev": "write another process's memory",
    "kcmp": "compare kernel objects of other processes",
    "pidfd_getfd": "steal another process's file descriptors",
    # Leaving or rearranging the namespaces the jail is made of.
    "setns": "join another namespace",
    "mount": "mount a filesystem",
    "umount2": "unmount the jail's filesystems",
    "pivot_root": "change the root filesystem",
    "chroot": "change the root directory",
    "open_tree": "new mount API",
    "move_mount": "new mount API",
    "fsopen": "new mount API",
    "fsconfig": "new mount API",
    "fsmount": "new mount API",
    "fspick": "new mount API",
    "mount_setattr": "change mount attributes",
    "name_to_handle_at": "file handles bypass the jail's paths",
    "open_by_handle_at": "open a host file by handle (the 'shocker' escape)",
    # Large kernel attack surfaces that no test program uses.
    "bpf": "load eBPF programs",
    "perf_event_open": "performance counters (a long record of kernel bugs)",
    "userfaultfd": "user page-fault handling (a common exploit primitive)",
    "add_key": "kernel keyrings",
    "request_key": "kernel keyrings",
    "keyctl": "kernel keyrings",
    "fanotify_init": "filesystem-wide notification",
    "modify_ldt": "x86 segment descriptors",
    "uselib": "obsolete library loading",
    "ustat": "obsolete",
    "sysfs": "obsolete",
    "_sysctl": "obsolete",
    "lookup_dcookie": "kernel profiling",
    "vhangup": "terminal hangup",
    "syslog": "the kernel log",
    # The machine itself.
    "kexec_load": "replace the running kernel",
    "kexec_file_load": "replace the running kernel",
    "init_module": "load a kernel module",
    "finit_module": "load a kernel module",
    "delete_module": "unload a kernel module",
    "create_module": "obsolete module loading",
    "get_kernel_syms": "obsolete module loading",
    "query_module": "obsolete module loading",
    "reboot": "reboot the machine",
    "swapon": "change swap",
    "swapoff": "change swap",
    "acct": "process accounting",
    "quotactl": "disk quotas",
    "quotactl_fd": "disk quotas",
    "nfsservctl": "obsolete NFS control",
    "iopl": "raw I/O port access",
    "ioperm": "raw I/O port access",
    "settimeofday": "set the clock",
    "clock_settime": "set the clock",
    "adjtimex": "adjust the clock",
    "clock_adjtime": "adjust the clock",
    "sethostname": "rename the machine",
    "setdomainname": "rename the machine",
}
"""Killed whatever the arguments: the name and why no test program needs it."""

ENOSYS = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")
"""Answered "not implemented": libraries probe these and fall back (``clone3``'s flags
live in memory a filter cannot read, so namespace flags could hide there)."""

_NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEW{NS,CGROUP,UTS,IPC,USER,PID,NET}
_CLONE_NEWTIME = 0x80  # unshare only: in clone() this bit is part of the exit signal
_AF_PACKET, _SOCK_RAW, _SOCK_PACKET, _SOCK_TYPE_MASK = 17, 3, 10, 0xF
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
_PER_LINUX, _PER_QUERY = 0, 0xFFFFFFFF


class ArgRule(NamedTuple):
    """Kill the call when argument `arg` (its low 32 bits) matches."""

    arg: int
    why: str
    any_bits: int = 0
    """Matches when any of these bits is set."""
    equals: tuple[int, ...] = ()
    """Matches when the value (after `mask`) is one of these."""
    mask: int = 0xFFFFFFFF
    allow_only: tuple[int, ...] = ()
    """Matches when the value is none of these."""


ARG_RULES: dict[str, tuple[ArgRule, ...]] = {
    "clone": (ArgRule(0, "new namespaces", any_bits=_NAMESPACE_FLAGS),),
    "unshare": (ArgRule(0, "new namespaces", any_bits=_NAMESPACE_FLAGS | _CLONE_NEWTIME),),
    "socket": (
        ArgRule(0, "packet sockets", equals=(_AF_PACKET,)),
        ArgRule(1, "raw sockets", equals=(_SOCK_RAW, _SOCK_PACKET), mask=_SOCK_TYPE_MASK),
    ),
    "ioctl": (ArgRule(1, "inject terminal input", equals=(_TIOCSTI, _TIOCLINUX)),),
    "personality": (
        ArgRule(0, "change the execution domain", allow_only=(_PER_LINUX, _PER_QUERY)),
    ),
}
"""Killed when an argument says so; the same call with other arguments is allowed."""

# Classic BPF opcodes.
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ, _JGE, _JSET = 0x15, 0x35, 0x45  # BPF_JMP | BPF_{JEQ,JGE,JSET} | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_OFF_NR, _OFF_ARCH = 0, 4


def _arg_offset(arg: int) -> int:
    return 16 + 8 * arg  # args[i], low half (little-endian)


Insn = tuple[int, int, int, int]  # code, jump if true, jump if false, k


def _rule_block(rule: ArgRule) -> list[Insn]:
    """Instructions that end in KILL when `rule` matches and fall through otherwise."""
    out: list[Insn] = [(_LD_ABS, 0, 0, _arg_offset(rule.arg))]
    if rule.any_bits:
        out += [(_JSET, 0, 1, rule.any_bits), (_RET, 0, 0, RET_KILL_PROCESS)]
        return out
    if rule.mask != 0xFFFFFFFF:
        out.append((_AND, 0, 0, rule.mask))
    if rule.allow_only:
        n = len(rule.allow_only)
        for i, value in enumerate(rule.allow_only):  # any match jumps over the KILL
            out.append((_JEQ, n - i, 0, value))
        out.append((_RET, 0, 0, RET_KILL_PROCESS))
        return out
    for value in rule.equals:
        out += [(_JEQ, 0, 1, value), (_RET, 0, 0, RET_KILL_PROCESS)]
    return out


def instructions(extra_enosys: tuple[str, ...] = ()) -> list[Insn]:
    """The filter, as (code, jt, jf, k) tuples (x86_64 numbers); `extra_enosys` names
    more calls to answer ENOSYS (the rootless mode's ``memfd_create``)."""
    kill, allow = (_RET, 0, 0, RET_KILL_PROCESS), (_RET, 0, 0, RET_ALLOW)
    enosys = (_RET, 0, 0, RET_ERRNO | _ENOSYS_ERRNO)
    prog: list[Insn] = [
        (_LD_ABS, 0, 0, _OFF_ARCH),
        (_JEQ, 1, 0, AUDIT_ARCH_X86_64),
        kill,
        (_LD_ABS, 0, 0, _OFF_NR),
        (_JGE, 0, 1, X32_SYSCALL_BIT),
        kill,
    ]
    blocks: dict[int, list[Insn]] = {SYSCALLS[name]: [kill] for name in DENIED}
    blocks.update({SYSCALLS[name]: [enosys] for name in (*ENOSYS, *extra_enosys)})
    for name, rules in ARG_RULES.items():
        blocks[SYSCALLS[name]] = [insn for rule in rules for insn in _rule_block(rule)] + [allow]
    return prog + _dispatch(sorted(blocks.items()))


_LINEAR = 4
"""Numbers tested one by one at the leaves of `_dispatch`'s search."""


def _dispatch(blocks: list[tuple[int, list[Insn]]]) -> list[Insn]:
    """Run the block of the call number in the accumulator (each block ends in a return);
    allow any number without one. A binary search over the sorted numbers, not a list:
    the kernel evaluates the filter once per call number when it is installed (to cache
    the calls it always allows), so with a list every jail's start paid for each denied
    number over every call number."""
    if len(blocks) <= _LINEAR:
        out: list[Insn] = []
        for nr, block in blocks:
            out += [(_JEQ, 0, len(block), nr), *block]
        return [*out, (_RET, 0, 0, RET_ALLOW)]
    middle = len(blocks) // 2
    below, above = _dispatch(blocks[:middle]), _dispatch(blocks[middle:])
    if len(below) > 255:  # a classic BPF jump reaches at most 255 instructions
        raise ValueError("seccomp filter too large for one jump")
    return [(_JGE, len(below), 0, blocks[middle][0]), *below, *above]


def filter_program(extra_enosys: tuple[str, ...] = ()) -> bytes | None:
    """The filter as the bytes of a `struct sock_filter` array, or None where there is no
    table for this machine's architecture."""
    if os.uname().machine != "x86_64":
        return None
    return b"".join(struct.pack("=HBBI", *insn) for insn in instructions(extra_enosys))


def run_filter(
    prog: list[Insn], nr: int, args: tuple[int, ...] = (), arch: int = AUDIT_ARCH_X86_64
) -> int:
    """Evaluate `prog` on one system call, as the kernel would (the subset of classic BPF
    the filter uses). For tests: the table and the jumps are checked without a kernel."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * 6)[:6])
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        pc += 1
        if code == _LD_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == _AND:
            acc &= k
        elif code == _RET:
            return k
        else:
            taken = {_JEQ: acc == k, _JGE: acc >= k, _JSET: bool(acc & k)}[code]
            pc += jt if taken else jf
