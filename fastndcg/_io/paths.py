"""Files fastndcg writes: checked before any work, written whole, never over an input.

One policy for every output (``fastndcg score --per-query``, ``fastndcg compare --plot``,
:meth:`fastndcg.PairedComparison.plot`):

- the path is checked before the work that fills it: its format (by suffix), its directory
  (which must exist), and that it is none of the inputs, nor inside an input directory;
- symbolic links are followed, as they are for inputs: an output that is a link is written
  through it (the file it points to is replaced, the link stays), and a link to an input is
  refused like the input itself (hard links too, where both exist);
- a file is written to a temporary name beside it, then renamed over it, so that a failed
  write leaves nothing behind and a reader never sees half a file; it is created as
  ``open(path, "w")`` would: with the user's umask, or the mode of the file it replaces.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from fastndcg._errors import OptionError
from fastndcg._io.trec_text import ReadFile


def check_output(
    path: Any, option: str, inputs: Iterable[Any] = (), formats: Iterable[str] = ()
) -> Path:
    """``path`` as a file to write, checked; an OptionError naming ``option`` otherwise.

    ``inputs`` are the paths read (files or directories); ``formats`` the suffixes accepted
    (without the dot; empty: any). Returns the path written: ``path`` with its links followed.
    """
    target = Path(path)
    written = target.resolve()
    suffix = target.suffix.lower().removeprefix(".")
    accepted = sorted(formats)

    def refused(problem: str, fix: str, where: Path = target) -> OptionError:
        return OptionError(
            f"`{option}` {path}{problem}", option=option, value=str(path), where=str(where), fix=fix
        )

    if written.is_dir():
        raise refused(" is a directory", "give a file name in it")
    if accepted and suffix not in accepted:
        got = f"the suffix .{suffix}" if suffix else "no suffix"
        names = ", ".join("." + name for name in accepted)
        raise refused(
            f" has {got}, which is not a format it writes", f"name it with one of: {names}"
        )
    if not written.parent.is_dir():
        raise refused(
            f": there is no directory {written.parent}",
            "create it first, or write to an existing directory",
            written.parent,
        )
    for source in inputs:
        read = Path(source).resolve()
        inside = read.is_dir() and read in written.parents
        if written == read or inside or _same_file(written, read):
            raise refused(
                f" {'is inside' if inside else 'is'} the input {source}, which writing it "
                "would overwrite or change",
                "write it to another path",
            )
    return written


def _same_file(first: Path, second: Path) -> bool:
    """Whether both exist and are one file (hard links included)."""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def plot_formats() -> tuple[str, ...]:
    """The suffixes matplotlib writes figures in (without importing pyplot)."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError as exc:
        raise ImportError(
            "plots need matplotlib: pip install 'fastndcg[plot]' (or pip install matplotlib)"
        ) from exc
    return tuple(FigureCanvasBase.get_supported_filetypes())


def check_plot_path(
    path: Any, option: str = "path", sources: Mapping[str, Any] | None = None
) -> Path | None:
    """``path`` checked as a figure to write (None: nothing to write).

    ``sources`` are a comparison's (:attr:`fastndcg.PairedComparison.sources`): the files they
    read are inputs the figure must not replace.
    """
    if path is None:
        return None
    inputs = []
    for source in (sources or {}).values():
        for value in vars(source).values():
            if isinstance(value, ReadFile):
                value = value.path
            if isinstance(value, (str, os.PathLike)):
                inputs.append(value)
    return check_output(path, option, inputs, plot_formats())


def write_whole(path: Any, write: Callable[[Path], None]) -> None:
    """``write`` the file ``path`` under a temporary name beside it, then rename it to ``path``.

    ``write`` gets a path with the suffix of ``path`` (the format), the file there already
    created, empty. A write that fails (a full disk, an interrupt) leaves neither ``path`` nor
    a partial file; ``path`` is replaced only by a complete file, and a link is written through
    (see :func:`check_output`).
    """
    target = Path(path).resolve()
    partial = target.with_name(f".{target.name}.{secrets.token_hex(8)}{Path(path).suffix}")
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # the umask applies
    try:
        if target.exists():  # as open(path, "w") would: the mode of the file replaced
            os.chmod(partial, target.stat().st_mode & 0o7777)
        write(partial)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


__all__ = ["check_output", "check_plot_path", "plot_formats", "write_whole"]
