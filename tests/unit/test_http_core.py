"""The shared HTTP core: retry decisions, Retry-After, error mapping, sync and async alike."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from thalabus_graph._http import (
    Endpoint,
    RetryPolicy,
    parse_retry_after,
    post_json,
    post_json_async,
)
from thalabus_graph.errors import (
    RateLimited,
    RetryableServiceError,
    ServiceReplyError,
    ServiceStatusError,
    ServiceTimeout,
)

Handler = Callable[[httpx.Request], httpx.Response]


def scripted(answers: list[httpx.Response | Exception]) -> tuple[Handler, list[httpx.Request]]:
    """A handler giving ``answers`` in order (an exception is raised), and the requests seen."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handler, seen


def endpoint(max_retries: int = 2, **retry: Any) -> Endpoint:
    return Endpoint("http://svc.test/x", "test service", {"X-Key": "k"}, 5.0,
                    RetryPolicy(max_retries=max_retries, backoff_seconds=0.1, **retry))


def run_sync(answers: list[httpx.Response | Exception], ep: Endpoint | None = None,
             ) -> tuple[Any, list[httpx.Request], list[float]]:
    handler, seen = scripted(answers)
    sleeps: list[float] = []
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        out = post_json(client, ep or endpoint(), {"q": "é"}, sleep=sleeps.append)
    return out, seen, sleeps


def run_async(answers: list[httpx.Response | Exception], ep: Endpoint | None = None,
              ) -> tuple[Any, list[httpx.Request], list[float]]:
    handler, seen = scripted(answers)
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await post_json_async(client, ep or endpoint(), {"q": "é"}, sleep=sleep)

    return asyncio.run(go()), seen, sleeps


RUNNERS = pytest.mark.parametrize("run", [run_sync, run_async], ids=["sync", "async"])


@RUNNERS
def test_success_sends_json_body_and_headers(run: Any) -> None:
    out, seen, sleeps = run([httpx.Response(200, json={"ok": [1, 2]})])
    assert out == {"ok": [1, 2]}
    assert seen[0].method == "POST"
    assert seen[0].headers["x-key"] == "k"
    assert seen[0].read().decode() in ('{"q":"é"}', '{"q": "é"}', '{"q":"\\u00e9"}',
                                       '{"q": "\\u00e9"}')
    assert sleeps == []


@RUNNERS
@pytest.mark.parametrize("status", [408, 500, 502, 503])
def test_408_and_5xx_are_retried_with_exponential_backoff(run: Any, status: int) -> None:
    out, seen, sleeps = run([httpx.Response(status, text="busy"),
                             httpx.Response(status, text="busy"),
                             httpx.Response(200, json=[])])
    assert out == []
    assert len(seen) == 3
    assert sleeps == pytest.approx([0.1, 0.2])


@RUNNERS
def test_retries_run_out_and_the_last_error_is_raised(run: Any) -> None:
    with pytest.raises(RetryableServiceError, match=r"test service .* HTTP 503: busy") as info:
        run([httpx.Response(503, text="busy")] * 3)
    assert not isinstance(info.value, ServiceStatusError)


@RUNNERS
@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_is_not_retried(run: Any, status: int) -> None:
    handler_answers: list[httpx.Response | Exception] = [httpx.Response(status, text="nope")]
    with pytest.raises(ServiceStatusError, match=f"HTTP {status}: nope") as info:
        run(handler_answers)
    assert info.value.status_code == status
    assert handler_answers == []          # exactly one request was made


@RUNNERS
def test_429_waits_for_retry_after(run: Any) -> None:
    out, _seen, sleeps = run([httpx.Response(429, headers={"Retry-After": "3"}),
                             httpx.Response(200, json={"ok": True})])
    assert out == {"ok": True}
    assert sleeps == [3.0]


@RUNNERS
def test_retry_after_is_capped(run: Any) -> None:
    answers: list[httpx.Response | Exception] = [
        httpx.Response(429, headers={"Retry-After": "500"}), httpx.Response(200, json=1)]
    _, _, sleeps = run(answers, endpoint(max_retry_after_seconds=120.0))
    assert sleeps == [120.0]
    answers = [httpx.Response(429, headers={"Retry-After": "500"}), httpx.Response(200, json=1)]
    _, _, sleeps = run(answers, endpoint(max_backoff_seconds=7.0))
    assert sleeps == [7.0]                # without its own cap Retry-After obeys max_backoff


@RUNNERS
def test_429_until_retries_run_out_keeps_retry_after(run: Any) -> None:
    with pytest.raises(RateLimited) as info:
        run([httpx.Response(429, headers={"Retry-After": "4"})] * 3)
    assert info.value.retry_after == 4.0


@RUNNERS
def test_timeout_and_connection_failure_are_retried(run: Any) -> None:
    request = httpx.Request("POST", "http://svc.test/x")
    out, _seen, sleeps = run([httpx.ReadTimeout("slow", request=request),
                             httpx.ConnectError("refused", request=request),
                             httpx.Response(200, json="fine")])
    assert out == "fine"
    assert len(sleeps) == 2


@RUNNERS
def test_timeout_maps_to_service_timeout(run: Any) -> None:
    request = httpx.Request("POST", "http://svc.test/x")
    with pytest.raises(ServiceTimeout, match=r"did not answer within 5\.0s"):
        run([httpx.ReadTimeout("slow", request=request)] * 3)


@RUNNERS
def test_connection_failure_message(run: Any) -> None:
    request = httpx.Request("POST", "http://svc.test/x")
    with pytest.raises(RetryableServiceError, match="cannot reach test service"):
        run([httpx.ConnectError("refused", request=request)] * 3)


@RUNNERS
def test_non_json_reply_is_not_retried(run: Any) -> None:
    answers: list[httpx.Response | Exception] = [httpx.Response(200, text="<html>")]
    with pytest.raises(ServiceReplyError, match="not JSON"):
        run(answers)
    assert answers == []


@RUNNERS
def test_redirect_status_is_a_reply_error(run: Any) -> None:
    with pytest.raises(ServiceReplyError, match="answered HTTP 302"):
        run([httpx.Response(302, headers={"Location": "http://elsewhere/"})])


def test_jitter_stays_within_half_to_full_backoff() -> None:
    policy = RetryPolicy(backoff_seconds=1.0, jitter=True)
    delays = [policy.delay(2, None) for _ in range(200)]
    assert all(2.0 <= d <= 4.0 for d in delays)
    assert len(set(delays)) > 1


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("nan") is None
    assert parse_retry_after("") is None
    assert parse_retry_after("tomorrow") is None
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 60))
    seconds = parse_retry_after(when)
    assert seconds is not None and 55 <= seconds <= 61


@RUNNERS
def test_an_echoed_url_user_info_is_redacted_from_the_error(run: Any) -> None:
    """A server that echoes the URL's ``user:password`` (without the URL around it) in its
    error body shows neither in the error."""
    ep = Endpoint("http://alice:s3cret-pw@svc.test/x", "test service", {}, 5.0,
                  RetryPolicy(max_retries=0, backoff_seconds=0.1))
    answers: list[httpx.Response | Exception] = [
        httpx.Response(401, text="login alice:s3cret-pw refused; s3cret-pw is wrong")]
    with pytest.raises(ServiceStatusError) as info:
        run(answers, ep)
    assert "s3cret-pw" not in str(info.value)
