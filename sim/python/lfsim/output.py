"""Output directories written atomically: built next to the target, then renamed into place,
so that an interrupted or failed run never leaves a half-written directory behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from .errors import ScenarioError, quote


def check_target(target: Path, key: str) -> None:
    """Reject, before running, a target that can never become the output directory: a file, a
    path under a file, or a place where no directory can be made (a read-only or pseudo file
    system such as /proc or /sys, no permission). Tried by making and removing a probe."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise ScenarioError(
            f"{key}: got {quote(target)}, which is a file; accepted: a directory path (an "
            "existing directory is replaced)"
        )
    try:
        with _made_parents(target):
            Path(
                tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".probe", dir=target.parent)
            ).rmdir()
    except OSError as exc:
        raise _unusable(target, key, exc) from None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISFIFO, "named pipe"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def check_file_target(target: Path, key: str) -> Path:
    """Reject, before anything runs, a file target that must not or cannot be replaced: anything
    but a regular file (a device such as /dev/full, a pipe, a directory), or a place where no
    file can be made. Returns the path to write (a symlink to a regular file: its target)."""
    target = Path(target)
    if target.exists():
        mode = target.stat().st_mode
        if not stat.S_ISREG(mode):
            raise ScenarioError(
                f"{key}: got {quote(target)}, which is a {_kind(mode)}; accepted: a regular "
                "file (it is replaced) or a new path"
            )
        target = target.resolve()
    elif target.is_symlink():
        raise ScenarioError(
            f"{key}: got {quote(target)}, a symbolic link to nothing; accepted: a regular file "
            "or a new path"
        )
    try:
        with _made_parents(target):
            fd, probe = tempfile.mkstemp(
                prefix=f".{target.name}.", suffix=".probe", dir=target.parent
            )
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise _unwritable(target, key, exc) from None
    return target


def write_file(target: Path, data: str | bytes, key: str) -> Path:
    """Write ``data`` to ``target`` atomically (a temporary file beside it, renamed into place)
    with the permissions a new file gets (umask), or raise ScenarioError naming ``key``: the
    target is never half-written, and no temporary file is left behind (a full disk, EFBIG)."""
    target = check_file_target(target, key)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with _made_parents(target):  # parents made here go again if the write fails
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(raw)
                    f.flush()
                    os.fsync(f.fileno())  # a full disk shows here at the latest
                    os.fchmod(f.fileno(), 0o666 & ~_umask())  # mkstemp's 0600: secrets only
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
    except OSError as exc:
        raise _unwritable(target, key, exc) from None
    return target


def _umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _unwritable(target: Path, key: str, exc: OSError) -> ScenarioError:
    where = f" ({exc.strerror})" if exc.strerror else ""
    return ScenarioError(
        f"{key}: cannot write {quote(target)}{where}; accepted: a path in a writable file "
        "system with room for it"
    )


def _unusable(target: Path, key: str, exc: OSError) -> ScenarioError:
    where = f" ({exc.strerror}: {exc.filename})" if exc.strerror else ""
    return ScenarioError(
        f"{key}: got {quote(target)}, where no directory can be made{where}; accepted: a "
        "directory path in a writable file system"
    )


@contextlib.contextmanager
def _made_parents(target: Path) -> Iterator[None]:
    """Create the missing parents of ``target``; remove them again if an error leaves them
    empty."""
    created = [p for p in [target.parent, *target.parent.parents] if not p.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        yield
    except BaseException:
        _remove_empty(created)
        raise
    _remove_empty(created)


@contextlib.contextmanager
def atomic_dir(target: Path, key: str = "out") -> Iterator[Path]:
    """Yield a fresh temporary directory; on success it replaces ``target`` in one rename."""
    target = Path(target)
    check_target(target, key)
    # Parents created here are removed again if nothing ends up in them (a failed run).
    created = [p for p in [target.parent, *target.parent.parents] if not p.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_orphans(target)
        tmp = Path(
            tempfile.mkdtemp(
                prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent
            )
        )
    except OSError as exc:
        _remove_empty(created)
        raise _unusable(target, key, exc) from None
    try:
        # mkdtemp makes the directory private (0700); give it the usual permissions.
        os.chmod(tmp, 0o777 & ~_umask())
        try:
            yield tmp
        except OSError as exc:
            # Writing the results failed (a full disk, a file size limit; pyarrow's errors name
            # no file): one line, not a traceback. An error about another file goes on as is.
            if not exc.filename or Path(os.path.abspath(exc.filename)).is_relative_to(
                tmp.absolute()
            ):
                raise _unwritable(target, key, exc) from None
            raise
        old = None
        if target.is_dir():
            old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
            os.rename(target, old)
        try:
            os.rename(tmp, target)
        except OSError:
            if old is not None:  # put the previous results back
                os.rename(old, target)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(created)
        raise


def _remove_orphans(target: Path) -> None:
    """Temporary folders of earlier runs for the same target whose process is gone (killed by
    SIGKILL, the machine stopped): nothing else would ever remove them."""
    for old in target.parent.glob(f".{target.name}.*.tmp"):
        pid = old.name[len(target.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_empty(dirs: list[Path]) -> None:
    """Remove the given directories, deepest first, as long as they are empty."""
    for d in dirs:
        try:
            d.rmdir()
        except OSError:
            return
