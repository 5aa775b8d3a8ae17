"""Prints what a sandboxed process can see of the filesystem, as one line: FSPROBE <json>.

Arguments are host paths to try to read (they must be invisible in the sandbox), then
``--list`` and folders whose entries to list."""

import json
import os
import stat
import sys


def describe(path: str) -> str:
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"missing ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "link -> " + os.readlink(path)
    kind = "dir" if stat.S_ISDIR(st.st_mode) else "char" if stat.S_ISCHR(st.st_mode) else "file"
    readable = os.access(path, os.R_OK | (os.X_OK if kind == "dir" else 0))
    return f"{kind} {oct(st.st_mode & 0o7777)}{'' if readable else ' unreadable'}"


def listing(path: str) -> dict[str, str]:
    try:
        names = sorted(os.listdir(path))
    except OSError as exc:
        return {"": f"unlistable ({exc.strerror})"}
    return {name: describe(os.path.join(path, name)) for name in names}


def read_all(path: str) -> str:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as fh:
                fh.read(1)
    except OSError as exc:
        return f"no ({exc.strerror})"
    return "yes"


args = sys.argv[1:]
split = args.index("--list") if "--list" in args else len(args)
probes, folders = args[:split], args[split + 1 :]
with open("/proc/self/mountinfo") as fh:
    mounts = sorted({line.split()[4] for line in fh})
view = {
    "uid": os.getuid(),
    "root": listing("/"),
    "etc": listing("/etc"),
    "etc_read": {name: read_all("/etc/" + name) for name in sorted(listing("/etc")) if name},
    "dev": listing("/dev"),
    "run": listing("/run"),
    "run_arena": listing("/run/arena"),
    "bot": listing("/bot"),
    "tmp": listing("/tmp"),
    "mounts": mounts,
    "host": {path: read_all(path) for path in probes},
    "inner": {path: listing(path) for path in folders if os.path.isdir(path)},
}
print("FSPROBE " + json.dumps(view, sort_keys=True))
