"""The JSON form of a benchmark table, as the documentation renders it.

Every benchmark command takes ``--json PATH`` and writes one table there with what it needs to
be read later: the date, the machine and software, the command, the data, the columns and rows
(cells already formatted, Markdown inline code allowed) and notes. The documentation keeps the
current files in ``docs/benchmarks/`` and renders them on its performance page
(``docs/_ext/fastndcg_docs.py``); ``tests/docs/test_benchmarks.py`` checks their shape.

A file may also hold, under a name of its own (a *section*), a table written by another mode of
the same benchmark: ``scripts/bench_peers_measures.py`` keeps its table under ``"measures"`` in
``peers.json``. Writing a section keeps the rest of the file; writing the main table keeps the
sections.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import platform
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

FIELDS = ("title", "date", "command", "machine", "data", "columns", "rows", "notes")


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (platform's guess elsewhere)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def ram_gib() -> str:
    """Total memory, from /proc/meminfo."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB RAM"
    return "RAM unknown"


def version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine(tools: tuple[str, ...] = ()) -> dict[str, str]:
    """The machine, the software (fastndcg's stack, then ``tools``) and the load average."""
    import fastndcg

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    software = [f"Python {platform.python_version()}", f"fastndcg {fastndcg.__version__}"]
    for name in ("numpy", "numba", "pyarrow", *tools):
        found = version(name)
        if found is not None:
            software.append(f"{name} {found}")
    load = ""
    with contextlib.suppress(OSError, AttributeError):
        load = "{:.1f} / {:.1f} / {:.1f} (1, 5, 15 min) at the end of the run".format(
            *os.getloadavg()
        )
    return {
        "description": f"{cpu_model()}, {os.cpu_count()} logical CPUs ({usable} usable), "
        f"{ram_gib()}, {platform.system()} {platform.machine()}",
        "software": ", ".join(software),
        "load": load,
    }


def command_line(argv: list[str] | None = None) -> str:
    """How this process was started, as one would type it (``python scripts/x.py ...``)."""
    argv = sys.argv if argv is None else argv
    script = Path(argv[0])
    with contextlib.suppress(ValueError):
        script = script.resolve().relative_to(Path(__file__).resolve().parents[1])
    return shlex.join(["python", str(script), *argv[1:]])


def _plain(value: Any) -> Any:
    """NumPy scalars (in the raw numbers of ``extra``) as Python numbers."""
    return value.item() if hasattr(value, "item") else str(value)


def write(
    path: Path | str,
    *,
    title: str,
    command: str,
    columns: list[str],
    rows: list[list[Any]],
    data: str = "",
    notes: list[str] | tuple[str, ...] = (),
    tools: tuple[str, ...] = (),
    section: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Write one table to ``path`` (JSON) and return it. ``extra`` keeps raw numbers.

    ``section``: store the table under that name in the file, keeping what else it holds.
    """
    if any(len(row) != len(columns) for row in rows):
        raise ValueError("every row needs one cell per column")
    table = {
        "title": title,
        "date": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        "command": command,
        "machine": machine(tools),
        "data": data,
        "columns": list(columns),
        "rows": [[str(cell) for cell in row] for row in rows],
        "notes": list(notes),
        **extra,
    }
    path = Path(path)
    previous = json.loads(path.read_text()) if path.is_file() else {}
    if section is None:
        content = {**table, **sections(previous)}
    else:
        content = {**previous, section: table}
    path.write_text(json.dumps(content, indent=2, default=_plain) + "\n")
    return table


def is_table(value: Any) -> bool:
    """Whether ``value`` (a file's content, or one of its entries) is a table: a section."""
    return isinstance(value, dict) and set(FIELDS) <= set(value)


def sections(table: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tables a file holds beside its main one, by name."""
    return {name: value for name, value in table.items() if is_table(value)}
