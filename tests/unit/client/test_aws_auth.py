"""The signers the API client uses against a deployed API (IAM-authorised routes, Cognito)."""

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from coupon_client.aws_auth import id_token, sigv4

URL = "https://abc123.execute-api.eu-west-1.amazonaws.com/dev/coupons"


def test_sigv4_signs_for_execute_api_with_the_callers_credentials_and_covers_the_body(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    sign = sigv4("eu-west-1")

    one = sign("POST", URL, b'{"totalQuantity": 1}', {"Content-Type": "application/json"})
    other = sign("POST", URL, b'{"totalQuantity": 2}', {"Content-Type": "application/json"})

    assert one["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in one["Authorization"]
    assert "X-Amz-Date" in one
    assert one["Authorization"].split("Signature=")[1] != other["Authorization"].split("Signature=")[1]


def test_the_id_token_goes_in_the_authorization_header():
    assert id_token("eyJ.token")("GET", URL, None, {}) == {"Authorization": "eyJ.token"}


def test_a_token_provider_is_asked_before_every_request_so_a_refreshed_token_is_sent():
    tokens = iter(["eyJ.first", "eyJ.refreshed"])
    sign = id_token(lambda: next(tokens))

    assert sign("POST", URL, b"{}", {}) == {"Authorization": "eyJ.first"}
    assert sign("POST", URL, b"{}", {}) == {"Authorization": "eyJ.refreshed"}


def test_the_signature_is_the_one_botocores_signer_computes_for_the_same_request():
    """Recomputed from the signed headers with botocore's own SigV4 steps (canonical request,
    string to sign, signing key), at the request's own X-Amz-Date."""
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    body = b'{"copies": 25}'
    signed = sigv4("eu-west-1", credentials)("POST", URL + "/7/top-up", body, {"Content-Type": "application/json"})

    request = AWSRequest(method="POST", url=URL + "/7/top-up", data=body,
                         headers={k: v for k, v in signed.items() if k != "Authorization"})  # fmt: skip
    request.context["timestamp"] = signed["X-Amz-Date"]
    signer = SigV4Auth(credentials, "execute-api", "eu-west-1")
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)

    assert signed["Authorization"].split("Signature=")[1] == expected
    assert "SignedHeaders=content-type;host;x-amz-date" in signed["Authorization"]
