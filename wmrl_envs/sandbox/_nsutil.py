"""Linux namespace and mount syscalls for the in-sandbox programs (launcher, zygote).

Standard library only, loaded by path from the launcher and the zygote, which run
before any sandbox path is known to work; the host never imports it.
"""

import ctypes
import fcntl
import os
import socket
import struct

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x4000000, 0x8000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 24, 36, 38
_SYS_MOVE_MOUNT, _MOVE_MOUNT_F_EMPTY_PATH, _AT_FDCWD = 429, 0x4, -100
_SIOCSIFFLAGS, _IFF_UP, _IFF_LOOPBACK, _IFF_RUNNING = 0x8914, 0x1, 0x8, 0x40

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def check(ret, what):
    """Raise OSError with errno when a libc call returned non-zero."""
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags, what="unshare"):
    """Enter new namespaces (CLONE_* flags)."""
    check(libc.unshare(flags), what)


def prctl(option, arg=0):
    """prctl(option, arg) raising on failure."""
    check(libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def mount(source, target, fstype, flags, data=None):
    """mount(2) with str arguments."""
    enc = lambda s: None if s is None else s.encode()
    check(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def make_read_only(target):
    """Remount the bind mount at `target` (and below) read-only."""
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC)


def attach_tree(tree_fd, target):
    """Attach a detached mount tree (from open_tree, possibly another namespace's) at `target`."""
    ret = libc.syscall(_SYS_MOVE_MOUNT, tree_fd, b"", _AT_FDCWD, target.encode(), _MOVE_MOUNT_F_EMPTY_PATH)
    check(0 if ret == 0 else -1, f"move_mount {target}")


def loopback_up():
    """Bring up `lo` in the current (fresh) network namespace."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH", b"lo", _IFF_UP | _IFF_LOOPBACK | _IFF_RUNNING))
