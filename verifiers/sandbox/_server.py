"""The fork server: a small trusted process that runs jailed programs, one request at a time.

Started by `rewardsmith.verifiers.sandbox` (never imported by the scoring process itself) as
``python -I -c ... REQUEST_FD REPLY_FD CONFIG_JSON``. It enters namespaces of its own
(network, IPC, UTS, mount, PID, and in user-namespace modes a user namespace), becomes
PID 1 there (so its death takes every jail with it), imports the preload modules once,
prepares the jail's read-only root, and keeps a waiting jail per slot (see `_runs.Zygote`),
forked by its quiet twin (`_forker`).
Each request hands one or two programs to waiting jails, feeds stdin, reads capped
stdout/stderr, enforces the deadline, replies with plain dicts, and then, while the client
reads the reply, reaps what the runs left and forks the next waiting jails. Requests and
replies are length-prefixed pickles on private pipes that no jailed process holds.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import time
import traceback
from typing import Any

import _cgroup
import _jail
import _linux as L
import _root
import _seccomp
from _forker import Forker
from _frames import read_frame, write_frame
from _runs import Run, Zygote

_WARM_STDLIB = ("ast", "base64", "json", "math", "traceback")
"""Imported by every server: the harness programs use them, so no child pays for them."""
_MAX_WARM = 32
_TMP = "/tmp"
_SLOTS = 2
_SANDBOX_IDS = (65533, 2)  # the uids a pair of programs gets: 65534 and 65533


def remember_code(spec: dict[str, Any], forker: Forker, seen: set[str]) -> None:
    """Trusted harness source is prepared once per server instead of once per run (see
    `prepare_code`), by the forker, so jails forked from then on inherit it (one forked
    earlier prepares it itself). Only source the caller marked trusted: compiling hostile
    text could stall the forker."""
    source = spec.get("code")
    if not spec.get("trusted_code") or source is None or source in seen:
        return
    if len(seen) >= _MAX_WARM:
        seen.clear()
        forker.warm("")  # an empty source clears the forker's cache
    seen.add(source)
    forker.warm(source)


def prepare_code(source: str) -> Any:
    """Compiled trusted source; when it ends with a call of its own entry point
    (``main()``), its definitions run here once and a run only calls the entry point."""
    tree = ast.parse(source, "main.py")
    last = tree.body[-1] if tree.body else None
    if (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and isinstance(last.value.func, ast.Name)
        and not last.value.args
        and not last.value.keywords
    ):
        tree.body.pop()
        namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        exec(compile(tree, "main.py", "exec"), namespace)
        if callable(namespace.get(last.value.func.id)):
            return (namespace, last.value.func.id)
    return compile(source, "main.py", "exec")


class Server:
    def __init__(self, config: dict[str, Any]) -> None:
        self.mode, self.userns = config["mode"], config["userns"]
        self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self.base = _private_dir(f"rewardsmith-sandbox-{config['name']}")
        root_dir = os.path.join(self.base, "root")
        os.mkdir(root_dir)
        _jail.Context.userns = self.userns
        _jail.Context.prepare = prepare_code
        _root.Root.root_dir = root_dir
        _root.prepare_root(root_dir, config["binds"], config.get("hide", ()))
        _root.Root.template_ns = _root.make_template(root_dir)
        extra = ("memfd_create",) if self.mode == "rootless" else ()
        program = _seccomp.filter_program(extra_enosys=extra)
        _jail.Context.seccomp = L.SeccompProgram(program) if program is not None else None
        self.cgroups: list[Any] = [self._cgroup(config, i) for i in range(_SLOTS)]
        self.forker = Forker(self.own_pid_ns)  # last: it inherits everything above
        self.seen: set[str] = set()
        self.zygotes: list[Zygote | None] = [None] * _SLOTS
        self.to_reap: list[Run] = []
        self.refill()

    def _cgroup(self, config: dict[str, Any], slot: int) -> Any:
        if self.mode == "privileged":
            return _cgroup.CgroupV1(f"{config['name']}-{slot}")
        if self.mode == "cgroup2":
            return _cgroup.CgroupV2(config["cgroup_base"], f"{config['name']}-{slot}")
        return _cgroup.NoCgroup()

    def refill(self) -> None:
        """Fork a waiting jail for every empty slot (after the previous run is reaped)."""
        for i, zygote in enumerate(self.zygotes):
            if zygote is None:
                self.zygotes[i] = Zygote(self.cgroups[i], self.forker)

    def _take(self, slot: int) -> Zygote:
        zygote = self.zygotes[slot]
        self.zygotes[slot] = None
        if zygote is None or not zygote.wait_ready():
            if zygote is not None:  # a broken one: one fresh try, its error if that fails too
                zygote.discard()
                self.cgroups[slot].recycle()
            zygote = Zygote(self.cgroups[slot], self.forker)
            zygote.wait_ready()
        return zygote

    def execute(self, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        peer_fds: list[int | None] = [None] * len(specs)
        pair = None
        if len(specs) == 2:
            pair = socket.socketpair()
            peer_fds = [pair[0].fileno(), pair[1].fileno()]
        sel = selectors.DefaultSelector()
        runs = []
        for slot, (spec, peer) in enumerate(zip(specs, peer_fds, strict=False)):
            remember_code(spec, self.forker, self.seen)
            zygote = self._take(slot)
            run = Run(spec, zygote, peer, sel, watch=self.mode == "rootless")
            if zygote.error:
                run.status += zygote.error.encode()
            runs.append(run)
        if pair is not None:
            for s in pair:
                s.close()
        self._pump(runs)
        for run in runs:
            run.settle()
        results = [run.finish() for run in runs]
        sel.close()
        self.to_reap = runs
        return results

    def _pump(self, runs: list[Run]) -> None:
        while not all(r.settled for r in runs):
            now = time.monotonic()
            live = [r for r in runs if not r.settled]
            for run in live:
                if now >= run.deadline and run.killed_for is None:
                    run.kill("wall_time")
                elif now >= run.next_watch and run.killed_for is None:
                    run.check()
            soonest = min(min(r.deadline, r.next_watch) for r in live)
            timeout = max(0.0, soonest - now) if all(r.killed_for is None for r in live) else 0.05
            for key, _ in live[0].sel.select(timeout):
                run, what = key.data
                run.on_event(key.fd, what)
            # A pair is a judge and its candidate: once the judge is done, so is the candidate.
            if len(runs) == 2 and not runs[0].open and runs[1].open and not runs[1].killed_for:
                runs[1].kill("peer_done")

    def after_reply(self) -> None:
        """While the client reads the reply: reap the last runs, empty their cgroups, and
        fork the next waiting jails."""
        for run in self.to_reap:
            run.zygote.reap()
            run.zygote.cgroup.recycle()
        self.to_reap = []
        self.refill()

    def close(self) -> None:
        for zygote in self.zygotes:
            if zygote is not None:
                zygote.discard()
        for run in self.to_reap:
            run.zygote.reap()
        self.forker.close()
        for cg in self.cgroups:
            cg.remove()
        with contextlib.suppress(OSError):
            os.close(_root.Root.template_ns)
        # Unmount the prepared root first: never walk into its binds of the host's system.
        with contextlib.suppress(OSError):
            L.umount(_root.Root.root_dir)
        _remove_empty(_root.Root.root_dir, self.base)


# ----------------------------------------------------------------------------- start-up


def _enter_namespaces(userns: bool) -> None:
    """Leave the host's network, IPC, UTS, mount and PID namespaces (and, in user-namespace
    modes, its user namespace) and return as PID 1 of the new PID namespace. The processes
    left behind only wait, so the client's handle on the server stays valid."""
    flags = L.CLONE_NEWNET | L.CLONE_NEWIPC | L.CLONE_NEWUTS | L.CLONE_NEWNS
    if userns:
        _enter_user_namespace(flags)
    else:
        L.unshare(flags | L.CLONE_NEWPID)
    pid = os.fork()
    if pid:
        _wait_and_exit(pid)
    L.prctl(L.PR_SET_PDEATHSIG, signal.SIGKILL)
    L.mount("none", "/", None, L.MS_REC | L.MS_PRIVATE)
    # This PID namespace's own /proc: the server names its children by its own pids.
    L.mount("proc", "/proc", "proc", L.MS_NOSUID | L.MS_NODEV | L.MS_NOEXEC)
    L.sethostname("rewardsmith-sandbox")


def _enter_user_namespace(flags: int) -> None:
    """A child makes the user namespace; this process, still outside it, writes its id maps
    (only a writer outside may map more than its own id): the server is root in it, and
    when started by root the sandbox uids map to the same host uids, never to root."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        L.prctl(L.PR_SET_PDEATHSIG, signal.SIGKILL)
        L.unshare(L.CLONE_NEWUSER | flags)
        os.write(ready_w, b"x")
        if os.read(go_r, 1) != b"x":
            os._exit(1)
        L.unshare(L.CLONE_NEWPID)  # owned by the new user namespace: setns back works
        return
    os.close(ready_w)
    os.close(go_r)
    if os.read(ready_r, 1) == b"x":
        uid, gid = os.geteuid(), os.getegid()
        if uid == 0:
            maps = {"uid_map": "0 0 1\n{0} {0} {1}\n", "gid_map": "0 0 1\n{0} {0} {1}\n"}
            first, count = _SANDBOX_IDS
            texts = {k: v.format(first, count) for k, v in maps.items()}
        else:
            with open(f"/proc/{pid}/setgroups", "w") as f:
                f.write("deny")
            texts = {"uid_map": f"0 {uid} 1\n", "gid_map": f"0 {gid} 1\n"}
        for name, text in texts.items():
            with open(f"/proc/{pid}/{name}", "w") as f:
                f.write(text)
        os.write(go_w, b"x")
    _wait_and_exit(pid)


def _wait_and_exit(pid: int) -> None:
    # Only this process's requests and replies matter to the client: keep none of them.
    os.closerange(3, 1 << 16)
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _private_dir(name: str) -> str:
    """A new mode-700 folder under /tmp (a restarted server reuses its name: a suffix)."""
    for n in range(1000):
        path = os.path.join(_TMP, name if n == 0 else f"{name}-{n}")
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue
    raise OSError(f"cannot make a folder for {name} under {_TMP}")


def _sweep_stale_dirs() -> None:
    """Remove the (empty) base dirs of servers whose client is gone; rmdir only, never rmtree."""
    tmp = _TMP
    for name in os.listdir(tmp):
        if not name.startswith("rewardsmith-sandbox-"):
            continue
        pid = name.split("-")[2]  # rewardsmith-sandbox-<client pid>-<id>
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            _remove_empty(os.path.join(tmp, name, "root"), os.path.join(tmp, name))


def _remove_empty(*dirs: str) -> None:
    """rmdir each of `dirs` in order, each on its own: one already gone (a server that
    died between the two) must not keep the next."""
    for path in dirs:
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _own_cgroup() -> str:
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    raise OSError("this process is in no cgroup v2")


def _start(config: dict[str, Any]) -> Server:
    if config["mode"] == "privileged":
        _cgroup.sweep_stale()
    _sweep_stale_dirs()  # the host's /proc is still mounted here: client pids resolve
    if config["mode"] == "cgroup2":
        own = config.get("cgroup_own") or _own_cgroup()
        config["cgroup_base"] = _cgroup.v2_base(
            config["cgroup_mount"], own, not config["userns"], config.get("cgroup_wanted")
        )
    _enter_namespaces(config["userns"])
    L.drop_bounding_set()
    for module in (*_WARM_STDLIB, *config["preload"]):
        importlib.import_module(module)
    _jail.site_quitters()
    return Server(config)


def _add_site(config: dict[str, Any]) -> None:
    """The site-packages folders (the server starts with -S). A server that preloads
    modules also runs their .pth files (an editable install's import hook lives there);
    one that does not stays small: every fork of it copies what it imported."""
    if config["preload"]:
        import site

        for path in config.get("site", ()):
            site.addsitedir(path)
    else:
        sys.path.extend(p for p in config.get("site", ()) if p not in sys.path)


def _start_error(exc: BaseException) -> str:
    """Why the server could not start: the exception, then where it was raised (the
    innermost frames), so `doctor` and every verdict show the real cause."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "<frozen" not in f.filename]
    return f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_list(frames[-3:])).rstrip()


def main() -> None:
    request_fd, reply_fd, raw = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    config = json.loads(raw)
    _add_site(config)
    # No PR_SET_PDEATHSIG on the first process: it fires when the *thread* that started it
    # exits (a pool thread, say), not the process. The client's death closes the request
    # pipe instead; the processes below it die with this one.
    try:
        server = _start(config)
    except Exception as exc:  # say why to the client (no root? no cgroup?), then stop
        write_frame(reply_fd, {"ready": False, "error": _start_error(exc)})
        return
    # Children are forks: freezing the heap keeps their garbage collector from walking (and
    # so copying) every page the server owns.
    gc.collect()
    gc.freeze()
    seccomp = "on" if _jail.Context.seccomp is not None else "unavailable on this architecture"
    write_frame(reply_fd, {"ready": True, "mode": config["mode"], "seccomp": seccomp})
    try:
        while True:
            request = read_frame(request_fd)
            if request is None:
                break
            reply: dict[str, Any]
            try:
                reply = {"results": server.execute(request["specs"])}
            except Exception as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            write_frame(reply_fd, reply)
            server.after_reply()
    finally:
        server.close()


if __name__ == "__main__":
    main()
