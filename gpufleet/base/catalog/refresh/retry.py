"""Retry a cloud API call on throttling, with exponential backoff (sleep injectable for tests)."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")

# botocore ClientError codes and Google API errors (class names / HTTP status) that mean "slow down".
THROTTLE_CODES = {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException", "SlowDown"}
THROTTLE_NAMES = {"TooManyRequests", "ResourceExhausted", "ServiceUnavailable"}


def is_throttle(exc: BaseException) -> bool:
    # botocore's ClientError.response is a dict; google.api_core's errors carry the HTTP response object there.
    response = getattr(exc, "response", None)
    code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
    if code in THROTTLE_CODES:
        return True
    return type(exc).__name__ in THROTTLE_NAMES or getattr(exc, "code", None) == 429


def with_retry(call: Callable[[], T], *, attempts: int = 5, base_delay: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> T:
    """call(), retried up to `attempts` times while it is throttled (delay 1, 2, 4, ... seconds)."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - re-raised unless it is throttling
            if not is_throttle(exc) or attempt == attempts - 1:
                raise
            sleep(base_delay * (2 ** attempt))
    raise AssertionError("unreachable")
