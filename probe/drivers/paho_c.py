"""The driver of Eclipse Paho C (``libpaho-mqtt3a``, its MQTTAsync API) for ``pubproof
probe-client``: a C program (``interop/drivers/paho_c/``), built here and found here.

Rules:

- the program is built from its sources (:data:`SOURCES`) with the C compiler (``$CC``, else
  ``cc`` or ``gcc``) against Debian's ``libpaho-mqtt-dev`` (``scripts/system-deps``), into
  ``interop/drivers/paho_c/build/`` (:func:`program`); ``scripts/setup`` builds it;
- it is *built* when that file is newer than every source (:func:`built`); the registry
  (:data:`pubproof.probe.clients.driver.SHIPPED`) runs it directly then, and otherwise runs
  this module, which builds it first (:func:`build`: a temporary file renamed into place,
  so that checks starting together never run half a file) and replaces itself with it;
- when it cannot be built (no compiler, no library, no ``interop/`` folder) this module,
  run as the driver, prints the protocol's ``error`` line naming what is missing and ends
  with status 2: every check is then an ``error`` that says so, never skipped;
- the version the driver says ``hello`` with is the Debian package's upstream version,
  compiled in (Debian's 1.3.12-1 calls itself 1.3.11 at run time: the ``hello`` line
  carries that too, as ``library_reports``).

    python -m pubproof.probe.drivers.paho_c build     # build unless built (scripts/setup)
    python -m pubproof.probe.drivers.paho_c status    # built, or why not
    python -m pubproof.probe.drivers.paho_c           # as the driver: build if needed, run
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: the program's sources, in ``interop/drivers/paho_c/``
SOURCES = ("driver.c", "json.c", "json.h")
#: the built program's name, in ``interop/drivers/paho_c/build/``
PROGRAM = "pubproof-paho-c"
#: the Debian package that has the library's headers
PACKAGE = "libpaho-mqtt-dev"
#: the library the program links (Paho's asynchronous API, without TLS)
LIBRARIES = ("-lpaho-mqtt3a", "-lpthread")
FLAGS = ("-std=c11", "-D_POSIX_C_SOURCE=200809L", "-O2", "-Wall", "-Wextra", "-Wpedantic")


class BuildError(Exception):
    """The program cannot be built (the message says what is missing)."""


def folder(interop: Path) -> Path:
    """The sources' folder under ``interop/``."""
    return interop / "drivers" / "paho_c"


def program(interop: Path) -> Path:
    """Where the built program is."""
    return folder(interop) / "build" / PROGRAM


def built(interop: Path) -> bool:
    """Whether the program is there and newer than every source."""
    target = program(interop)
    if not target.is_file():
        return False
    made = target.stat().st_mtime
    return all((folder(interop) / name).stat().st_mtime <= made for name in SOURCES)


def compiler() -> str | None:
    """The C compiler: ``$CC``, else ``cc`` or ``gcc`` on the PATH."""
    given = os.environ.get("CC")
    if given:
        return given
    return shutil.which("cc") or shutil.which("gcc")


def package_version() -> str | None:
    """The upstream version of the installed Debian package (``1.3.12`` of ``1.3.12-1``), if
    dpkg knows it."""
    if shutil.which("dpkg-query") is None:
        return None
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        return None
    upstream = done.stdout.strip().split(":", 1)[-1]
    return upstream.rsplit("-", 1)[0]


def build(interop: Path) -> str:
    """Build the program (whatever its state); the compiler's warnings ("" when none).
    :class:`BuildError` when it cannot be built."""
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler (cc or gcc) on the PATH (Debian: gcc; scripts/system-deps)")
    source = folder(interop)
    missing = [name for name in SOURCES if not (source / name).is_file()]
    if missing:
        raise BuildError(f"the sources {missing} are not in {source}")
    target = program(interop)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{PROGRAM}.{os.getpid()}")
    defines = []
    version = package_version()
    if version is not None:
        defines.append(f'-DPACKAGE_VERSION="{version}"')
    argv = [
        cc, *FLAGS, *defines, "-o", str(partial),
        *(str(source / n) for n in SOURCES if n.endswith(".c")), *LIBRARIES,
    ]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as failure:
        raise BuildError(f"the C compiler {cc} cannot be run: {failure}") from None
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        if "MQTTAsync.h" in done.stderr or "paho-mqtt3a" in done.stderr:
            raise BuildError(
                f"Eclipse Paho C is not installed (Debian: {PACKAGE}; scripts/system-deps): "
                + _last_line(done.stderr)
            )
        raise BuildError(f"{cc} failed: {_last_line(done.stderr)}")
    partial.replace(target)
    return done.stderr


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line]
    return (errors or lines or ["(no output)"])[0]


def _interop() -> Path:
    from pubproof.probe.clients.shipped import interop_folder

    found = interop_folder()
    if found is None:
        raise BuildError(
            "the project's interop/ folder is not found (run from the project, or set "
            "PUBPROOF_INTEROP)"
        )
    return found


def run_as_driver() -> None:
    """The driver protocol: build the program if it is not built, then become it; else the
    protocol's ``error`` line, and status 2."""
    from pubproof.probe.drivers.common import say

    try:
        interop = _interop()
        if not built(interop):
            build(interop)
    except BuildError as failure:
        say("error", message=f"the paho-c driver cannot be built: {failure}")
        sys.exit(2)
    target = str(program(interop))
    sys.stdout.flush()
    os.execv(target, [target])


def main(argv: list[str] | None = None) -> int:
    """``build``, ``status``, or (no argument) run as the driver."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        run_as_driver()
        return 0
    if args[0] not in ("build", "status"):
        sys.stderr.write("usage: python -m pubproof.probe.drivers.paho_c [build|status]\n")
        return 2
    try:
        interop = _interop()
        if args[0] == "status":
            state = "built" if built(interop) else "not built"
            sys.stdout.write(f"{program(interop)}: {state}\n")
            return 0 if built(interop) else 1
        if built(interop):
            sys.stdout.write(f"{program(interop)} is up to date\n")
            return 0
        warnings = build(interop)
    except BuildError as failure:
        sys.stdout.write(f"the paho-c driver is not built: {failure}\n")
        return 1
    sys.stderr.write(warnings)
    sys.stdout.write(f"built {program(interop)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
