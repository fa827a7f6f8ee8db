"""pytest fixtures that replay a case recorded by Reprise: see README.md."""

from reprise_pytest.plugin import Replay, ReplayError

__all__ = ["Replay", "ReplayError"]
