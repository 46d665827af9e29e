"""Confine this process with Landlock and seccomp, then exec a command:
``python -I -S sandbox_exec.py [--read PATH]… [--no-network] … -- ARGV…`` (``encode`` writes the options).

It runs as a file in an isolated interpreter (stdlib only, no site, and few imports: it starts for
every confined command, and json, re or platform cost more than the rest): the rules are applied in a
process that has just started and then becomes the command, so nothing of myrm's own (threads, the event loop,
locks held at fork time) runs between fork and exec, as it would in a ``preexec_fn``. If any step fails
the command is not run: exit status 126 and one line on stderr.

Why ctypes and not a binding: Landlock is three system calls and two structs, seccomp one ``prctl`` and a
12-instruction filter. The one PyPI binding that covers Landlock (``landlock``) is a 1.0 development
release without the network and scope rights this needs (ABI 4 and 6); libseccomp's bindings need a
compiled library. This file has to run in ``python -I -S`` before anything else is importable anyway.

Resource limits (``--limit NAME=N``, ``--cgroup DIR``) are applied here too, before the Landlock rules (a
confined command could not write the cgroup's file after them) and for an unconfined command alone
(``--no-landlock``): rlimits and a pid cgroup are inherited by everything the command starts.

Landlock rules only ever grant, so "everything but these folders" is written as rules on the siblings of
each hidden path, down to it (``split``); a hidden folder's ancestors get no rule of their own.
"""

from __future__ import annotations

import _signal  # not signal: its enum import is half this file's start-up
import ctypes
import os
import struct
import sys

TYPE_CHECKING = False  # typing's own costs an import: this file starts for every command
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

# system calls (the same numbers on every architecture: they were added after the tables were unified)
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
FS_BITS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # ABI -> how many filesystem rights it knows (>= 5: 16)
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the only ones a file's rule may hold
READ = EXECUTE | READ_FILE | READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI >= 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI >= 6

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
EACCES = 13
# machine -> (audit arch, socket, io_uring_setup); io_uring can open sockets without calling socket()
ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
X32_BIT = 0x40000000  # x86_64's x32 calls: the same kernel functions under other numbers

DENIED = 126  # exit status when the sandbox could not be applied (the command never ran)

# --limit NAME=N: the resource module's limit of each (bytes, or processes over the uid's count)
RLIMITS = {"data": "RLIMIT_DATA", "fsize": "RLIMIT_FSIZE", "core": "RLIMIT_CORE", "nproc": "RLIMIT_NPROC"}
PR_CAPBSET_DROP, CAP_SYS_RESOURCE = 24, 24


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where there is none (old kernel, not enabled, a container's
    seccomp filter refusing the call)."""
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(
        ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), CREATE_RULESET_VERSION
    )
    return max(int(version), 0)


def seccomp_arch() -> tuple[int, int, int] | None:
    """The seccomp numbers of this machine, or None where this file does not know them."""
    return ARCHES.get(os.uname().machine) if sys.platform == "linux" else None


class SandboxError(OSError):
    pass


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise SandboxError(err, f"{what}: {os.strerror(err)}")
    return result


def split(root: str, hidden: Sequence[str]) -> list[str]:
    """Paths whose rules together grant ``root`` without ``hidden`` (real paths) and what lies under them.
    A symbolic link gets no rule: what it points to is granted, or not, where it really lies."""
    inside = [h for h in hidden if h == root or h.startswith(root.rstrip("/") + "/")]
    if not inside:
        return [root]
    if root in inside:
        return []
    out: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return out
    for entry in entries:
        if not entry.is_symlink():
            out += split(entry.path, inside)
    return out


def _add_path(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone, or not ours to open: no rule, so no access
    try:
        if not os.path.isdir(path):
            access &= FILE_RIGHTS
        attr = struct.pack("=Qi", access, fd)  # landlock_path_beneath_attr is packed
        buf = ctypes.create_string_buffer(attr, len(attr))
        _check(
            libc.syscall(ctypes.c_long(SYS_ADD_RULE), ruleset, RULE_PATH_BENEATH, buf, 0),
            f"landlock_add_rule {path}",
        )
    finally:
        os.close(fd)


def _seccomp_filter(arch: tuple[int, int, int]) -> bytes:
    """No new socket of any family, no io_uring, no other ABI's calls: what the filesystem rules cannot
    stop (UDP, raw and netlink sockets; UNIX sockets reached by path, such as an ssh agent or a container
    daemon)."""
    audit, socket_nr, uring_nr = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06

    def ins(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    deny = SECCOMP_RET_ERRNO | EACCES
    prog = [
        ins(ld, 0, 0, 4),  # arch
        ins(jeq, 1, 0, audit),
        ins(ret, 0, 0, SECCOMP_RET_KILL_PROCESS),  # a 32-bit call (int 0x80): other numbers, refused whole
        ins(ld, 0, 0, 0),  # syscall number
        ins(jge, 0, 1, X32_BIT),
        ins(ret, 0, 0, deny),
        ins(jeq, 0, 1, socket_nr),
        ins(ret, 0, 0, deny),
        ins(jeq, 0, 1, uring_nr),
        ins(ret, 0, 0, deny),
        ins(ret, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(prog)


def _install_seccomp(libc: ctypes.CDLL, arch: tuple[int, int, int]) -> None:
    code = _seccomp_filter(arch)
    filt = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(code) // 8, ctypes.cast(filt, ctypes.c_void_p))
    _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp filter")


def _tasks_of(uid: int) -> int:
    """How many tasks (threads included, as RLIMIT_NPROC counts them) ``uid`` runs now."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count


def _has_capability(cap: int) -> bool:
    """Whether this process may use ``cap`` (its effective set; read without ctypes, which costs more)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> cap & 1)
    except (OSError, ValueError):
        pass
    return True  # unknown: try to drop it


def limit(spec: dict[str, object]) -> None:
    """Join the ``cgroup`` (a pid cgroup made for this command) and set the ``limits``, soft and hard,
    for this process and all it starts. ``nproc`` is a count over the uid's tasks now (RLIMIT_NPROC counts
    every process of the uid, not this command's). Root could raise a hard limit (CAP_SYS_RESOURCE): the
    capability leaves the bounding set, so the command exec'd next has it no more."""
    for folder in _strings(spec, "cgroup"):
        # guard: limits-the-command-joins-its-pid-cgroup
        with open(os.path.join(folder, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    limits = spec.get("limits", {})
    if not isinstance(limits, dict) or not limits:
        return
    import resource

    for name, value in limits.items():
        if name not in RLIMITS or not str(value).isdigit():
            raise SandboxError(0, f"bad limit: {name}={value}")
        amount = int(value)
        if name == "nproc":
            if os.getuid() == 0:
                continue  # the kernel never applies it to root: a pid cgroup is what limits root
            # guard: limits-nproc-counts-over-the-uids-tasks
            amount += _tasks_of(os.getuid())
        which = getattr(resource, RLIMITS[name])
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            amount = min(amount, hard)  # never above what this process was given
        # guard: limits-rlimits-are-set-before-exec
        resource.setrlimit(which, (amount, amount))
    # (no mutant: the machine the tests run on has CAP_SYS_RESOURCE out of every bounding set already)
    if _has_capability(CAP_SYS_RESOURCE):
        _libc().prctl(PR_CAPBSET_DROP, CAP_SYS_RESOURCE, 0, 0, 0)


def apply(spec: dict[str, object]) -> None:
    """Restrict this process (and what it will exec) for good.

    ``spec`` (``decode``): ``read`` — roots readable and executable, without ``hidden`` (their real
    paths) beneath them; ``read_more`` — more readable roots, without ``hidden_always``; ``write`` —
    paths with every right (a private temp folder, ``/dev/null``, a workspace); ``network`` — False: no
    TCP bind or connect (Landlock) and no socket at all (seccomp). Signals and abstract UNIX sockets to
    processes outside the sandbox are refused where the kernel can (ABI 6)."""
    abi = landlock_abi()
    if abi < 1:
        raise SandboxError(0, "Landlock is not available")
    network = bool(spec.get("network", True))
    arch = seccomp_arch()
    if not network and arch is None:
        raise SandboxError(0, f"no seccomp filter for {os.uname().machine}: cannot turn the network off")
    libc = _libc()
    handled_fs = (1 << FS_BITS.get(abi, 16)) - 1
    # guard: sandbox-landlock-refuses-tcp
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 and not network else 0
    scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _check(
        libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), buf, ctypes.c_size_t(size), 0), "ruleset"
    )
    try:
        for path, access in _rules(spec, handled_fs):
            _add_path(libc, ruleset, path, access)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    if not network:
        assert arch is not None
        # guard: sandbox-no-new-socket-of-any-family
        _install_seccomp(libc, arch)


# option -> spec key; each may repeat (a list), but --no-network
LIST_OPTIONS = {
    "--read": "read",
    "--hide": "hidden",
    "--read-more": "read_more",
    "--hide-always": "hidden_always",
    "--write": "write",
    "--set": "setenv",
    "--drop-env": "drop_env",
    "--limit": "limits",
    "--cgroup": "cgroup",
}
DICT_OPTIONS = ("setenv", "limits")  # NAME=VALUE items


def encode(spec: dict[str, object]) -> list[str]:
    """``spec`` as this file's options (``decode`` reads them back)."""
    args: list[str] = []
    for option, key in LIST_OPTIONS.items():
        value = spec.get(key, [])
        items = [f"{k}={v}" for k, v in value.items()] if isinstance(value, dict) else value
        for item in items if isinstance(items, list) else ():
            args += [option, str(item)]
    if not spec.get("network", True):
        args.append("--no-network")
    if not spec.get("landlock", True):
        args.append("--no-landlock")
    return args


def decode(args: Sequence[str]) -> tuple[dict[str, object], list[str]]:
    """The spec and the command of this file's argument list."""
    lists: dict[str, list[str]] = {}
    dicts: dict[str, dict[str, str]] = {}
    spec: dict[str, object] = {"network": True}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            spec.update(lists)
            spec.update(dicts)
            return spec, list(args[i + 1 :])
        if a in ("--no-network", "--no-landlock"):
            spec[a[5:]] = False
            i += 1
        elif a in LIST_OPTIONS and i + 1 < len(args):
            key = LIST_OPTIONS[a]
            if key in DICT_OPTIONS:
                name, eq, value = args[i + 1].partition("=")
                if not eq or not name:
                    raise SandboxError(0, f"bad option: {a} {args[i + 1]}")
                dicts.setdefault(key, {})[name] = value
            else:
                lists.setdefault(key, []).append(args[i + 1])
            i += 2
        else:
            raise SandboxError(0, f"bad option: {a}")
    raise SandboxError(0, "no command (after --)")


def _strings(spec: dict[str, object], key: str) -> list[str]:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SandboxError(0, f"bad sandbox spec: {key}")
    return value


def _rules(spec: dict[str, object], everything: int) -> Iterable[tuple[str, int]]:
    hidden = [os.path.realpath(h) for h in _strings(spec, "hidden")]
    always = [os.path.realpath(h) for h in _strings(spec, "hidden_always")]
    for root in _strings(spec, "read"):
        for path in split(os.path.realpath(root), hidden + always):
            yield path, READ & everything
    if "/proc" in hidden + always:  # the system's files, not a process's (its environment holds keys)
        for entry in os.scandir("/proc"):
            # and only those any user may read: root's alone are memory (kcore) or the kernel's log (kmsg)
            # guard: sandbox-proc-only-what-any-user-reads
            if not entry.name.isdigit() and not entry.is_symlink() and _anyone_reads(entry):
                yield entry.path, READ & everything
    for root in _strings(spec, "read_more"):
        for path in split(os.path.realpath(root), always):
            yield path, READ & everything
    for path in _strings(spec, "write"):
        yield os.path.realpath(path), everything


def _anyone_reads(entry: os.DirEntry[str]) -> bool:
    try:
        return bool(entry.stat().st_mode & 0o004)
    except OSError:
        return False


def _environment(spec: dict[str, object]) -> dict[str, str]:
    """The command's environment: this one without the names holding a ``drop_env`` word (any case),
    plus ``setenv``."""
    drop = [d.upper() for d in _strings(spec, "drop_env")]
    env = {k: v for k, v in os.environ.items() if not any(d in k.upper() for d in drop)}
    extra = spec.get("setenv", {})
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise SandboxError(0, "bad sandbox spec: setenv")
    env.update(extra)
    return env


def _which(name: str, path: str) -> str:
    if "/" in name:
        return name
    for folder in path.split(os.pathsep):
        full = os.path.join(folder or ".", name)
        if os.path.isfile(full) and os.access(full, os.X_OK):
            return full
    return name  # exec reports it missing


def main(argv: Sequence[str]) -> int:
    try:
        spec, command = decode(argv)
        if not command:
            raise SandboxError(0, "no command (after --)")
        env = _environment(spec)
        # found before the rules apply: os.execvpe imports a module, from a folder that may be hidden
        program = _which(command[0], env.get("PATH", os.defpath))
        limit(spec)
        if spec.get("landlock", True):
            apply(spec)
    except (SandboxError, OSError, ValueError) as exc:
        print(f"myrm sandbox: not run, the sandbox could not be applied: {exc}", file=sys.stderr)
        return DENIED
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec: `yes | head`
    # would end in "Broken pipe" errors, and a write past the file size limit would not end the writer.
    # guard: sandbox-the-command-gets-default-signals
    for sig in (_signal.SIGPIPE, _signal.SIGXFSZ):
        _signal.signal(sig, _signal.SIG_DFL)
    try:
        os.execve(program, command, env)
    except OSError as exc:
        print(f"myrm sandbox: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return DENIED  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
