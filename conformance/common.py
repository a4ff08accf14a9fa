"""What the three checkers share: the corpus, the verdicts, shell scripts, warnings, world sizes.

A checker is run on corpus folders (written by `cargo run -p trainplan-core --example corpus -- DIR`) and
single files, any number of each. Each checked file gets one line and one verdict:

    ok             the framework accepted the file
    FAIL           the framework rejected it, and the plan has no error finding that says it would
    expected-fail  the framework rejected it, and the plan carries an error finding (not `memory.*`):
                   the planner already says this plan will not run

The last line a checker prints is `conformance <framework>: <accepted> accepted, <expected> expected-fail,
<failed> failed, <total> total`; scripts/conformance reads it. A checker exits 1 if any file failed.
"""

import json
import logging
import os
import re
import shlex
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Target:
    """One file to check, with what is known about its plan."""

    plan: str
    path: Path
    errors: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.plan}/{self.path.name}"

    @property
    def blocking_errors(self) -> list[str]:
        """The error findings that say the plan will not run for a reason other than memory."""
        return [code for code in self.errors if not code.startswith("memory.")]


class Tally:
    """Prints one verdict per file and the closing count on stdout; everything else the process writes
    there (the frameworks log to stdout too) goes to stderr."""

    def __init__(self, framework: str):
        sys.stdout.flush()
        self.out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        self.framework = framework
        self.accepted = 0
        self.expected = 0
        self.failed = 0

    def record(self, target: Target, problems: list[str]) -> None:
        if not problems:
            self.accepted += 1
            self.say(f"ok             {target.label}")
            return
        reason = " | ".join(one_line(p) for p in problems)
        if target.blocking_errors:
            self.expected += 1
            rules = ", ".join(target.blocking_errors)
            self.say(f"expected-fail  {target.label} (rule {rules}): {reason}")
            return
        self.failed += 1
        self.say(f"FAIL           {target.label}: {reason}")

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def finish(self) -> int:
        total = self.accepted + self.expected + self.failed
        self.say(
            f"conformance {self.framework}: {self.accepted} accepted, {self.expected} expected-fail, "
            f"{self.failed} failed, {total} total"
        )
        return 1 if self.failed else 0


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip()


def describe(err: BaseException) -> str:
    """The exception as the user would read it: its type and message."""
    message = one_line(str(err)) or repr(err)
    return f"{type(err).__name__}: {message}"


def targets(args: list[str], framework: str | tuple[str, ...], pick) -> list[Target]:
    """The files to check. Each of `args` is a corpus folder (one with a manifest.json), where `pick(files)`
    chooses the files of each plan of `framework` (or of any of several), or a single file, labelled with its
    path as given."""
    frameworks = (framework,) if isinstance(framework, str) else framework
    res = []
    for arg in args:
        path = Path(arg)
        if path.is_file():
            res.append(Target(plan=str(path.parent), path=path.resolve()))
            continue
        manifest = path / "manifest.json"
        if not manifest.is_file():
            sys.exit(f"{arg}: neither a file nor a corpus folder with a manifest.json")
        for entry in json.loads(manifest.read_text()):
            if entry["framework"] not in frameworks:
                continue
            for name in pick(entry["files"]):
                res.append(Target(entry["name"], (path / entry["name"] / name).resolve(), entry.get("errors", [])))
    return res


# ---------------------------------------------------------------------------------------------------
# Shell scripts: the variables a launch script sets, and the words of one command in it.


def shell_assignments(text: str) -> dict[str, str]:
    """`NAME=value` and `export NAME=value` lines at the start of a line; `${NAME:-default}` gives the
    default (the value when the caller sets nothing)."""
    res: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if not m:
            continue
        words = shlex.split(m.group(2), comments=True)
        value = words[0] if words else ""
        d = re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-(.*)\}", value)
        res[m.group(1)] = d.group(1) if d else expand(value, res)
    return res


def expand(text: str, variables: dict[str, str]) -> str:
    """Substitutes `$NAME` and `${NAME}` with the value the script gave them; others stay as written."""

    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        return variables.get(name, m.group(0))

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, text)


def launch_world_size(plan_dir: Path) -> int | None:
    """Processes the plan's launch.sh starts: torchrun's nnodes × nproc_per_node (DeepSpeed's
    NUM_NODES × GPUS_PER_NODE, LLaMA-Factory's NNODES × NPROC_PER_NODE)."""
    launch = plan_dir / "launch.sh"
    if not launch.is_file():
        return None
    env = shell_assignments(launch.read_text())
    for nodes, per_node in (("NUM_NODES", "GPUS_PER_NODE"), ("NNODES", "NPROC_PER_NODE")):
        if nodes in env and per_node in env:
            return int(env[nodes]) * int(env[per_node])
    return None


def plan_report(plan_dir: Path) -> dict | None:
    """The plan's report (`trainplan eval plan.json`), which scripts/conformance writes as report.json."""
    path = plan_dir / "report.json"
    return json.loads(path.read_text()) if path.is_file() else None


def world_size(plan_dir: Path, fallback: int | None, problems: list[str]) -> int:
    """The plan's device count: from the plan's report, else from what launch.sh starts, else `fallback`
    (`--world-size`, for a file with neither beside it). When both the report and launch.sh are there,
    they must agree."""
    launched = launch_world_size(plan_dir)
    report = plan_report(plan_dir)
    planned = report["n_devices"] if report else None
    if planned is not None and launched is not None and planned != launched:
        problems.append(f"launch.sh starts {launched} processes but the plan has {planned} devices")
    for res in (planned, launched, fallback):
        if res is not None:
            return res
    sys.exit(f"{plan_dir}: no world size: pass --world-size, or put report.json or launch.sh beside the file")


# ---------------------------------------------------------------------------------------------------
# Warnings: what the frameworks log or warn while they read a file is collected, and counts as a failure
# unless it is listed as caused by this machine (no GPU), not by the file.


class Collected(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name} warning: {record.getMessage()}")


class CollectWarnings:
    """Collects `warnings.warn` calls and WARNING+ records of the named loggers inside a `with` block.
    `ignore` holds regular expressions of messages this machine causes (no accelerator, no network)."""

    def __init__(self, loggers: list[str], ignore: list[str]):
        self.loggers = loggers
        self.ignore = [re.compile(p) for p in ignore]
        self.handler = Collected()
        self.messages: list[str] = []

    def __enter__(self):
        self._catch = warnings.catch_warnings(record=True)
        self._caught = self._catch.__enter__()
        warnings.simplefilter("always")
        for name in self.loggers:
            logging.getLogger(name).addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        for name in self.loggers:
            logging.getLogger(name).removeHandler(self.handler)
        self._catch.__exit__(*exc)
        found = self.handler.messages + [f"{w.category.__name__}: {w.message}" for w in self._caught]
        seen = set()
        for message in found:
            message = one_line(message)
            if message in seen or any(p.search(message) for p in self.ignore):
                continue
            seen.add(message)
            self.messages.append(message)
        return False
