"""The one error hierarchy. Every message says what went wrong and what to do about it.

This module is a leaf: every layer may import it, and it imports nothing of ours.
"""

from __future__ import annotations


class AutonomaError(Exception):
    """Root of every error autonoma raises on purpose."""


class ConfigError(AutonomaError):
    """A setting, option or spec string is not valid."""


class ModelError(AutonomaError):
    """Something went wrong talking to a model. When the model did answer (an invalid, cut-off
    or refused answer), what those answers cost is kept here so budgets still count it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class ModelSpecError(ModelError, ConfigError):
    """A model spec string cannot be understood."""


class ModelNotFound(ModelError, ConfigError):
    """A model name is not in the registry, or a model file does not exist."""


class ModelFetchError(ModelError):
    """A model could not be fetched or failed its checksum."""


class ModelUnavailable(ModelError):
    """The endpoint did not answer usefully after every allowed retry."""

    def __init__(self, endpoint: str, reason: str) -> None:
        super().__init__(
            f"model endpoint {endpoint} is unavailable: {reason}. "
            "Check that the server is running and reachable, or choose another --model."
        )
        self.endpoint = endpoint
        self.reason = reason


class RateLimited(ModelUnavailable):
    """The endpoint asked us to wait longer than we are allowed to."""


class ModelRequestRejected(ModelError):
    """The endpoint refused the request itself (a 4xx other than 429): retrying cannot help."""

    def __init__(self, endpoint: str, status: int, detail: str) -> None:
        super().__init__(f"model endpoint {endpoint} rejected the request ({status}): {detail}")
        self.endpoint = endpoint
        self.status = status
        self.detail = detail


class SchemaUnsupported(ModelError):
    """The requested output schema is invalid or cannot be used by this backend."""


class ModelRefused(ModelError):
    """The model refused, its answer was filtered, or it was empty."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"the model gave no usable answer ({kind}): {detail}")
        self.kind = kind
        self.detail = detail


class OutputInvalid(ModelError):
    """The model's output stayed invalid after every allowed re-ask. Carries the raw output."""

    def __init__(self, message: str, raw: str, attempts: int) -> None:
        super().__init__(f"{message} (after {attempts} attempt(s)); raw output: {raw[:500]!r}")
        self.raw = raw
        self.attempts = attempts


class OutputTruncated(OutputInvalid):
    """The answer kept hitting the token limit, so it was never parsed as complete."""
