"""Warm-pool zygote: imports the scientific stack once, then forks one isolated run per request.

Runs inside a long-lived bubblewrap sandbox (as root, capabilities limited to what it
needs to build namespaces). Per request it forks a run-child that enters fresh mount,
pid, network, IPC and UTS namespaces and attaches the run's own folders, which the host
sends as detached mount trees (``open_tree``) over a unix socket; the run's pid 1 then
forks the solution, which drops to the run's uid and capabilities before executing the
code with ``runpy``. Nothing flows back from a run to the zygote (a fork is copy-on-write),
so runs stay as isolated from each other as cold ones; what they share is only the
already-imported, not-yet-used library code. It must import nothing outside the standard
library, its sibling ``_nsutil`` and the preload list: it runs as ``python -s -E _zygote.py``.
"""

import io
import json
import os
import resource
import runpy
import signal
import site
import socket
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _nsutil import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUTS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    PR_CAPBSET_DROP,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    attach_tree,
    libc,
    loopback_up,
    make_read_only,
    mount,
    prctl,
    unshare,
)

del sys.path[0]
TREES = (("/sandbox/data", True), ("/sandbox/output", False), ("/sandbox/code", True), ("/tmp", False))


def run_child(request, fds):
    """Build the run's namespaces and folders, start its pid 1, and leave (pid 1 needs no parent here)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for procs in request.get("cgroup_procs", []):  # the run's memory, pids and CPU bound, for all it starts
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    out_w, err_w, report_w, *trees = fds
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    unshare(flags)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    python_under_tmp = [(path, os.open(path, os.O_PATH)) for path in request.get("python_under_tmp", [])]
    for tree_fd, (target, read_only) in zip(trees, TREES, strict=True):
        attach_tree(tree_fd, target)
        os.close(tree_fd)
        if read_only:
            make_read_only(target)
    for path, fd in python_under_tmp:  # the run's /tmp hides an interpreter kept under the host's /tmp: bind it back
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        make_read_only(path)
        os.close(fd)
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={request['shm_bytes']}")
    loopback_up()
    init = os.fork()
    if init == 0:
        run_init(request, out_w, err_w, report_w)
    os._exit(0)


def run_init(request, out_w, err_w, report_w):
    """Pid 1 of the run: mount its /proc, start the solution, reap everything, report usage."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    solution = os.fork()
    if solution == 0:
        try:
            run_solution(request, out_w, err_w, report_w)
        except BaseException:  # noqa: BLE001 - a setup fault: visible in stderr, exit code 126
            traceback.print_exc()
        os._exit(126)
    os.close(out_w)
    os.close(err_w)
    _, status, _ = os.wait4(solution, 0)
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    payload = {
        "returncode": os.waitstatus_to_exitcode(status),
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "maxrss_kb": usage.ru_maxrss,
        "network": "isolated",
    }
    os.write(report_w, json.dumps(payload).encode())
    os._exit(0)


def run_solution(request, out_w, err_w, report_w):
    """Drop to the run's uid and limits, reset per-process state, and execute the solution."""
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.closerange(3, 1 << 16)
    os.setsid()
    for name, value in request["rlimits"].items():
        resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (value, value))
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    os.setgroups([])
    os.setgid(request["uid"])
    os.setuid(request["uid"])
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True, errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace")
    sys.stdin = io.TextIOWrapper(io.FileIO(os.open(os.devnull, os.O_RDONLY), "r"))
    _reset_libraries(request["cpus"])
    path = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(path)
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # noqa: BLE001 - report like the interpreter does for an uncaught exception
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _reset_libraries(cpus):
    """What a fresh interpreter would have differently: a random numpy seed and the run's thread count."""
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(cpus)


def _exit_code(exc):
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def main():
    config = json.loads(sys.argv[1])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    sock = socket.socket(fileno=config["socket_fd"])
    for directory in config.get("site_dirs", []):  # the host's user site: -s skips it, HOME differs here
        site.addsitedir(directory)
    failed = []
    for name in config["preload"]:
        try:
            __import__(name)
        except Exception as exc:  # noqa: BLE001 - a missing optional library only makes runs colder
            failed.append(f"{name}: {exc}")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    sock.send(json.dumps({"ready": True, "preload_failed": failed}).encode())
    while True:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 8)
        if not message:
            os._exit(0)
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            try:
                sock.close()
                run_child(json.loads(message), fds)
            except BaseException as exc:  # noqa: BLE001 - reported to the host as an infra-error
                os.write(fds[2], json.dumps({"infra_error": f"warm run setup failed: {exc!r}"}).encode())
            os._exit(127)
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    main()
