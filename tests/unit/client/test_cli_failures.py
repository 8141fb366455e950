"""Every way a call can fail, through the command: one line on standard error, the exit status of
its cause, and what the operator may conclude (a read changed nothing; a write that may have
been carried out says how to look). Real sockets: a closed port, a TLS server whose certificate
is not trusted, an API that answers too late."""

from __future__ import annotations

import http.server
import socket
import ssl
import threading

import pytest
from typer.testing import CliRunner

from coupon_client import errors
from coupon_client.cli import app
from local.stack.tls import certificates
from tests.unit.client.api_double import Answer
from tests.unit.client.test_cli import COUPON, api, run  # noqa: F401 -- the fixture

WAF = Answer(403, {"message": "Forbidden"}, {"x-amzn-ErrorType": "ForbiddenException"})
IAM = Answer(
    403,
    {"status": "FORBIDDEN", "error": "User: arn:aws:iam::1:user/ops is not authorized to perform: execute-api:Invoke"},
    {"x-amzn-ErrorType": "AccessDeniedException"},
)
EXPIRED = Answer(
    403,
    {"status": "FORBIDDEN", "error": "The security token included in the request is expired"},
    {"x-amzn-ErrorType": "AccessDeniedException"},
)
SKEWED = Answer(
    403,
    {"message": "Signature expired: 20261204T100000Z is now earlier than 20261204T101000Z"},
    {"x-amzn-ErrorType": "InvalidSignatureException"},
)
ERRORS = [
    (Answer(404, {"status": "COUPON_NOT_FOUND", "error": "coupon 7 does not exist"}), errors.NotFoundError,
     "404 COUPON_NOT_FOUND: coupon 7 does not exist"),
    (Answer(409, {"status": "PENDING", "error": "retry shortly"}), errors.ConflictError, "409 PENDING: retry shortly"),
    (Answer(422, {"status": "INVALID_REQUEST", "error": "copies: must be at least 1"}), errors.RefusedError,
     "422 INVALID_REQUEST: copies: must be at least 1; nothing changed"),
    (Answer(503, {"status": "UNAVAILABLE", "error": "database"}, {"Retry-After": "2"}), errors.UnavailableError,
     "503 UNAVAILABLE: database; nothing changed: try again after 2 s"),
    (Answer(429, {"status": "THROTTLED", "error": "too many requests, retry later"}), errors.UnavailableError,
     "429 THROTTLED: too many requests, retry later (the stage's rate limit, or the web ACL's); nothing changed"),
    (Answer(502, {"message": "Internal server error"}), errors.NoAnswerError,
     "502 from POST /coupons/7/close: Internal server error; it may have been carried out: look (coupons show 7)"),
    (IAM, errors.ForbiddenError,
     "403: your identity may not call POST /coupons/7/close: it needs execute-api:Invoke on "
     "arn:aws:execute-api:eu-west-1:*:*/dev/POST/coupons/7/close (eu-west-1)"),
    (WAF, errors.BlockedError, "403 Forbidden from the web ACL (AWS WAF) in front of the API, not from IAM"),
    (EXPIRED, errors.SessionExpiredError, "AWS refused the credentials as expired"),
    (SKEWED, errors.NoCredentialsError, "is this machine's clock right?"),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "error", "said"), ERRORS, ids=[e[1].__name__ + str(e[0].status) for e in ERRORS])
def test_each_failure_is_one_line_on_stderr_with_its_exit_status(api, answer, error, said):  # noqa: F811
    api.answer("POST", "/coupons/7/close", answer)

    result = run(api, "close", "7", "--yes", output="json")

    assert result.exit_code == error.exit_code
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("coupons: ")
    assert said in result.stderr


def test_a_closed_port_is_unreachable_and_nothing_was_sent(api):  # noqa: F811 -- its identity, not its server
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]

    result = CliRunner().invoke(app, ["--api-url", f"http://127.0.0.1:{port}/dev", "--region", "eu-west-1",
                                      "reopen", "7"])  # fmt: skip

    assert result.exit_code == errors.UnreachableError.exit_code
    assert result.stderr.count("\n") == 1
    assert "could not connect for POST /coupons/7/reopen" in result.stderr
    assert result.stderr.rstrip().endswith("nothing was sent")
    assert "MaxRetryError" not in result.stderr


def test_a_certificate_not_trusted_is_a_tls_failure(api, tmp_path, monkeypatch):  # noqa: F811 -- its identity
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)  # the system's CAs only: the test's CA is not among them
    made = certificates(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(made.cert, made.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        result = CliRunner().invoke(app, ["--api-url", f"https://127.0.0.1:{server.server_address[1]}/dev",
                                          "--region", "eu-west-1", "show", "7"])  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()

    assert result.exit_code == errors.TlsError.exit_code
    assert "TLS failed for GET /coupons/7" in result.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("method", "path", "args", "said"),
    [
        ("GET", "/coupons/7", ["show", "7"], "a read: nothing changed, try again"),
        ("POST", "/coupons/7/top-up", ["top-up", "7", "5"], "it may have been carried out: look (coupons show 7)"),
    ],
)
def test_a_timeout_says_what_it_means_for_a_read_and_for_a_write(api, method, path, args, said):  # noqa: F811
    api.answer(method, path, Answer(200, COUPON, delay_s=2))

    result = run(api, "--read-timeout", "0.3", *args)

    assert result.exit_code == errors.NoAnswerError.exit_code
    assert f"no answer in time from {method} {path}" in result.stderr
    assert said in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("option", ["--api-url", "--endpoint-url"])
@pytest.mark.parametrize("url", ["notaurl", "ftp://host/x", "https://"])
def test_a_malformed_url_is_a_usage_error_before_anything(option, url):
    result = CliRunner().invoke(app, [option, url, "list"])

    assert result.exit_code == 2
    assert "is not an http(s) URL" in result.stderr
    assert "Traceback" not in result.output


def test_every_exit_status_is_its_own():
    codes = [error.exit_code for error in errors.EVERY_ERROR]
    assert len(set(codes)) == len(codes)
    assert not {0, 1, 2} & set(codes)  # success, an abort, Click's usage errors
