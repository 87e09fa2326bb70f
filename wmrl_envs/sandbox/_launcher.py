"""In-sandbox launcher: runs the solution as a child, then reports what it cost.

Why a launcher at all: ``wait4`` on bubblewrap reports bubblewrap's usage, not the
solution's, and a solution may leave ``setsid``/double-forked grandchildren behind.
This tiny stdlib-only program (run as ``python -I -S _launcher.py fd:N``, its config in fd N) sits between
the backend and the solution: it joins the run's cgroups, optionally re-exposes paths an
unprivileged uid cannot traverse, becomes a child subreaper (so orphans come back to it),
starts the solution with its rlimits and uid, waits, kills every leftover descendant and
writes ``{"returncode", "cpu_s", "maxrss_kb"}`` as JSON to the report fd (or file).
It must not import anything outside the standard library: it runs before any sandbox
path is known to work.

The run dies with its supervisor. A parent-death signal reaches the launcher when the
supervising process dies, and the launcher then kills every descendant; but some
supervisors are killed together with their direct children (Ray SIGKILLs a dead worker's
children), and a SIGKILLed launcher can clean nothing up. Where no pid namespace takes the
tree down (the local backend), ``"shim": true`` makes the process the supervisor started
a shim that only relays the exit status, with the launcher below it: whatever kills the
shim signals the launcher. The solution itself also dies with the launcher.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _nsutil import (  # a sibling file, found by path: the launcher runs with -I
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWUSER,
    MS_BIND,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    loopback_up,
    make_read_only,
    mount,
    prctl,
    unshare,
)

del sys.path[0]


def expose(tmpfs_over, binds, shm_bytes=None):
    """Cover each untraversable ancestor (and shared scratch) with a tmpfs and bind the needed paths back in.

    With `shm_bytes`, the run also gets its own /dev/shm of that size and its own SysV IPC namespace, so
    nothing it leaves in shared memory outlives it or reaches another run.
    """
    unshare(CLONE_NEWNS | (CLONE_NEWIPC if shm_bytes else 0))
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    if shm_bytes and os.path.isdir("/dev/shm"):
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={int(shm_bytes)}")
    fds = {path: os.open(path, os.O_PATH) for path, _ in binds}
    for cover in tmpfs_over:
        mount("tmpfs", cover, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for path, read_only in binds:
        os.makedirs(path, exist_ok=True)
        mount(f"/proc/self/fd/{fds[path]}", path, None, MS_BIND | MS_REC)
        if read_only:
            make_read_only(path)
    for fd in fds.values():
        os.close(fd)


def isolate_network():
    """Enter a network namespace holding only a loopback device (unprivileged: inside a user namespace)."""
    if os.geteuid() == 0:
        unshare(CLONE_NEWNET)
    else:
        uid, gid = os.getuid(), os.getgid()
        unshare(CLONE_NEWUSER | CLONE_NEWNET)
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    loopback_up()


def children():
    """Direct children of this process (orphans land here because we are a subreaper)."""
    pids = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                pids.update(int(p) for p in f.read().split())
        except OSError:
            continue
    return pids


def reap_all():
    """SIGKILL and reap every descendant until none is left."""
    for _ in range(1000):
        kids = children()
        if not kids:
            return
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.002)


def report(config, payload):
    """Write the JSON `payload` to the report fd and/or file the config names."""
    data = json.dumps(payload).encode()
    if config.get("report_fd") is not None:
        os.write(config["report_fd"], data)
        os.close(config["report_fd"])
    if config.get("report_path"):
        with open(config["report_path"], "wb") as f:
            f.write(data)


def on_term(signum, frame):
    """Asked to stop (or our parent died): take every descendant down with us."""
    reap_all()
    sys.exit(128 + signum)


def die_with(parent, signum):
    """Have `signum` sent to us when `parent` dies, and act on it at once if it is already gone."""
    prctl(PR_SET_PDEATHSIG, signum)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signum)


def behind_shim(config):
    """Fork; the parent stays as a shim relaying the child's exit, the child returns and carries on as the launcher."""
    die_with(config.get("supervisor_pid"), signal.SIGTERM)  # default action: the shim dies, its child is told
    shim = os.getpid()
    child = os.fork()
    if child == 0:
        return shim
    if config.get("report_fd") is not None:
        os.close(config["report_fd"])
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):  # end the same way, so the supervisor sees the launcher's fate
        signum = os.WTERMSIG(status)
        if signum != signal.SIGKILL:
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status))


def load_config(argument):
    """The run's config: ``fd:N`` (an inherited memfd) or ``file:PATH`` (a root-only file, removed once read).

    Never the JSON itself: every process of the host may read our command line.
    """
    if argument.startswith("file:"):
        path = argument[len("file:") :]
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
        return json.loads(data)
    fd = int(argument[3:])
    chunks = []
    while chunk := os.pread(fd, 1 << 16, sum(map(len, chunks))):
        chunks.append(chunk)
    os.close(fd)
    return json.loads(b"".join(chunks))


def main():
    config = load_config(sys.argv[1])
    parent = behind_shim(config) if config.get("shim") else None
    signal.signal(signal.SIGTERM, on_term)
    die_with(parent, signal.SIGTERM)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    for procs in config.get("cgroup_procs", []):
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            pass
    rlimits = [(getattr(resource, f"RLIMIT_{name}"), int(v)) for name, v in config.get("rlimits", {}).items()]
    launcher = os.getpid()

    def limit_child():
        for which, value in rlimits:
            resource.setrlimit(which, (value, value))
        prctl(PR_SET_NO_NEW_PRIVS, 1)  # setuid binaries cannot raise the run's privileges
        die_with(launcher, signal.SIGKILL)  # after the uid switch, which would clear it

    uid = config.get("uid")
    network = "isolated"
    try:
        if config.get("isolate_network"):
            try:
                isolate_network()
            except OSError as exc:
                if os.geteuid() == 0:
                    raise
                network = f"shared with the host: {exc}"
        if config.get("expose"):
            plan = config["expose"]
            expose(plan.get("tmpfs_over", []), plan.get("binds", []), plan.get("shm_bytes"))
        child = subprocess.Popen(
            config["argv"],
            env=config["env"],
            cwd=config["cwd"],
            user=uid,
            group=config.get("gid"),
            extra_groups=[] if uid is not None else None,
            preexec_fn=limit_child,  # noqa: PLW1509 - the launcher is single-threaded
            close_fds=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        report(config, {"infra_error": f"could not start the solution: {exc}"})
        sys.exit(125)
    _, status, _ = os.wait4(child.pid, 0)
    returncode = os.waitstatus_to_exitcode(status)
    reap_all()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    report(
        config,
        {
            "returncode": returncode,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "maxrss_kb": usage.ru_maxrss,
            "network": network,
        },
    )
    sys.exit(returncode if returncode >= 0 else 128 - returncode)


if __name__ == "__main__":
    main()
