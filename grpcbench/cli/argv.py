"""The command line as the parser gets it: ghz's flags that only restate grpcbench's
ways dropped (others refused by name), and ``--profile generator`` spelled as flags."""

from __future__ import annotations

from grpcbench.base.errors import UsageError
from grpcbench.run import ghz_compat


def ghz_flags_of(argv: list[str]) -> list[str]:
    """``argv`` without the ghz flags that only restate what grpcbench does (ghz's
    ``--load-schedule const``, ``--duration-stop wait``: ``ghz_compat.AGREED``); any
    other ghz flag `run` does not take is refused by name with its reason (a
    ``UsageError``)."""
    if len(argv) < 2 or argv[1] != "run":
        return argv
    refused = ghz_compat.refused_flags()
    kept = argv[:2]
    words = iter(argv[2:])
    for word in words:
        if word == "--":
            return [*kept, word, *words]
        flag, equals, value = word.partition("=")
        reason = refused.get(flag)
        if not reason:
            kept.append(word)
            continue
        if not equals and flag in ghz_compat.AGREED:
            value = next(words, "")
        if ghz_compat.AGREED.get(flag) == value:
            continue
        raise UsageError(f"ghz's {flag} is not supported: {reason}")
    return kept


PROFILE_SCOPES = {"servers": ["--profile"], "generator": ["--profile", "--profile-generator"]}


def profile_scope_spelled(argv: list[str]) -> list[str]:
    """``--profile generator`` (the issue's and the docs' spelling) as the flags click
    parses: a bare ``--profile`` stays a flag, so ``--profile generator`` would
    otherwise read "generator" as the target's address."""
    spelled: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--profile":
            following = next(words, None)
            if following in PROFILE_SCOPES:
                spelled += PROFILE_SCOPES[following]
                continue
            spelled.append(word)
            if following is not None:
                spelled.append(following)
            continue
        spelled.append(word)
    return spelled
