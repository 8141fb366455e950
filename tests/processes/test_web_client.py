"""The reference browser client as a front end gets it: its own tests (``web/test``, Node's test
runner: the retry contract's scenarios against a scripted fetch), its types generated from its
JSDoc and checked against it, and the package a bundler installs (``import "coupon-web"``, its
types found). The shop page runs it in Chromium against the local stack
(``tests/integration/test_shop_page.py``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
TSC = ROOT / "node_modules" / ".bin" / "tsc"


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def node() -> str:
    found = shutil.which("node")
    assert found, "Node.js is needed (the CDK needs it too)"
    return found


def test_the_reference_client_keeps_the_retry_contract():
    done = run([node(), "--test", "test/"], WEB)
    assert "# fail 0" in done.stdout


def test_its_types_are_generated_from_its_jsdoc_which_type_checks(tmp_path):
    """``npm run types`` writes coupon-client.d.ts; strict checkJs passes on the client."""
    run([str(TSC), "-p", "tsconfig.json", "--outDir", str(tmp_path)], WEB)
    assert (tmp_path / "coupon-client.d.ts").read_text() == (WEB / "coupon-client.d.ts").read_text(), (
        "web/coupon-client.d.ts is out of date: cd web && npm run types"
    )


def test_a_bundlers_project_imports_coupon_web_and_finds_its_types(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "shop", "private": true, "type": "module"}')
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--silent", str(WEB)], tmp_path)
    (tmp_path / "page.ts").write_text(
        'import { CouponClient, type ClaimResult } from "coupon-web";\n'
        'const client = new CouponClient({ baseUrl: "https://api.example.com/prod" });\n'
        "const kind: ClaimResult['kind'] = 'held';\n"
        "export const claimed: Promise<ClaimResult> = client.claim(3, 7);\n"
        "export { kind };\n"
        "// @ts-expect-error: a claim takes numbers\n"
        'client.claim("3", 7);\n'
    )
    run([str(TSC), "--noEmit", "--strict", "--module", "esnext", "--moduleResolution", "bundler",
         "--target", "es2022", "--lib", "es2022,dom", "page.ts"], tmp_path)  # fmt: skip
    script = 'import { CouponClient, MAX_SENDS } from "coupon-web"; console.log(typeof CouponClient, MAX_SENDS)'
    imported = run([node(), "--input-type=module", "-e", script], tmp_path)
    assert imported.stdout.split() == ["function", "5"]
