"""checkov, the IaC security scanner, on synthesized templates, from a virtual environment of its
own: its pins (an older boto3 and botocore) clash with the runtime's, so it cannot share ``.venv``.

The environment is made once under ``.local/`` from the ``checkov`` dependency group as uv.lock
has it (every file checked against its hash), and made again when the group's locked files change.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from coupon_cdk import locked

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".local" / "checkov-venv"


@dataclass(frozen=True)
class Finding:
    """A failed check: its id, the resource's logical id, and the template it is in."""

    check_id: str
    logical_id: str
    template: str


def checkov() -> Path:
    """The checkov command, installed first if needed."""
    return locked.environment("checkov", VENV, sys.executable).with_name("checkov")


def failed_checks(templates: list[Path]) -> list[Finding]:
    """Every check checkov's CloudFormation rules fail on ``templates``."""
    arguments = [argument for template in templates for argument in ("-f", str(template))]
    done = subprocess.run(
        [str(checkov()), *arguments, "--framework", "cloudformation", "--output", "json", "--quiet", "--compact"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode not in (0, 1):  # 1: some check failed
        raise RuntimeError(f"checkov exited with {done.returncode}: {done.stderr.strip()[-2000:]}")
    reports = json.loads(done.stdout)
    findings = []
    for report in reports if isinstance(reports, list) else [reports]:
        for failed in report["results"]["failed_checks"]:
            logical_id = failed["resource"].split(".", 1)[1]
            findings.append(Finding(failed["check_id"], logical_id, Path(failed["file_path"]).name))
    return findings
