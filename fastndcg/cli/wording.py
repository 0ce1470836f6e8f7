"""The library's messages worded with the command's flags (``k=None`` reads ``-k all``)."""

from __future__ import annotations

import re

from fastndcg._core.options import COMMAND_OPTIONS
from fastndcg.stream import GROUP_IN_MEMORY

FLAGS = {
    name: option.flag.name for name, option in COMMAND_OPTIONS.items() if option.flag is not None
}
# Python values the command spells otherwise (another None is the option left out)
_SPELLED = {("k", "None"): "all", ("score", "None"): "''"}


# name=value, name='value' or a bare name= (not inside a path such as a hive directory's k=1)
# with the values listed after it (", 'zero' or 'one'"); or a bare name (not inside a path, a
# quoted value or a call) with the quoted value that may follow it
_NAMES = re.compile(
    r"(?<![\w/.=-])([a-z][a-z_]*)=('[^']*'|[\w.+-]+)?((?:,? (?:or )?'[^']*')*)"
    r"|(?<![\w/.=@'(-])([a-z][a-z_]*)(?![\w/=@'(-]|\.\w)( '[^']*')?"
)


# where a bare name that is also a word (seed, ties, grade...) is the option: at the start of
# a clause, before "must" or its value ("seed must be ...", "preset 'x' orders ...")
_SUBJECT = re.compile(r"(?:^|[:.] )$")


# the library's fix for a column held in hive directory names, which the command cannot follow
_HIVE = re.compile(r"(?P<name>'[^']*') names directories of the files \(hive partitioning\).*$")


# the library's advice that names Python calls -> the command's way
_ADVICE = {
    GROUP_IN_MEMORY: "group it in memory (--group memory)",
    "with fastndcg.ndcg_run": "with --qrels and --run",
}


RUNS = "TREC runs (--qrels/--run)"


FILES = "prediction files"


def command_wording(message: str) -> str:
    """The library's ``name='value'`` in ``message`` as the command's ``--name value``.

    Only the names of the command's options change (``k=None`` reads ``-k all``); a flag
    given alone stands for ``True``, and the values listed after it lose their quotes. A bare
    name changes too: always when it is not a word (``n_threads``, ``k``), otherwise as the
    subject of a clause (``seed must be``), whose ``or None`` then goes (the option left out).
    Advice that names a Python call (grouping rows in memory, scoring a TREC run) names the
    flags instead; a column held in hive directory names gets advice the command can follow.
    """
    hive = _HIVE.search(message)
    advice = ""
    if hive is not None:
        name = hive["name"]
        message = message[: hive.start()]
        advice = (
            f"{name} names directories of the files (hive partitioning), which the command "
            f"does not read: write {name} into the files as a column, or score them from "
            "Python with fastndcg.ndcg_parquet(pyarrow.dataset.dataset(path, "
            "partitioning='hive'), group='memory')"
        )
    for python, command in _ADVICE.items():
        message = message.replace(python, command)
    return "; ".join(_clause_wording(clause) for clause in message.split("; ")) + advice


def _clause_wording(clause: str) -> str:
    """One clause of a message (up to a semicolon) with the command's flags."""
    subject: list[str] = []  # the clause's bare subject, if a flag

    def as_flag(match: re.Match[str]) -> str:
        keyword, value, listed, bare, quoted = match.groups()
        name = keyword or bare
        flag = FLAGS.get(name)
        if flag is None:
            return match.group(0)
        if bare is not None:
            first = _SUBJECT.search(clause[: match.start()]) is not None
            word = "_" not in name and len(name) > 1
            if word and not (first and (quoted or clause.startswith(" must ", match.end()))):
                return match.group(0)
            if first:
                subject.append(name)
            return flag + (quoted or "").replace("'", "")
        if value is None or value == "True":
            return flag
        plain = value.strip("'")
        listed = re.sub(r"'([^']*)'", lambda v: _SPELLED.get((name, v[1]), v[1]), listed)
        return f"{flag} {_SPELLED.get((name, plain), plain)}{listed}"

    worded = _NAMES.sub(as_flag, clause)
    if subject:
        none = _SPELLED.get((subject[0], "None"))
        worded = re.sub(r" or None\b", f" or {none}" if none else "", worded, count=1)
    return worded
