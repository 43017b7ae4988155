"""The command line as the parser gets it: ghz's flags that only restate grpcbench's
ways dropped (others refused by name), and ``--profile generator`` spelled as flags."""

from __future__ import annotations

from grpcbench.base.errors import UsageError
from grpcbench.run import ghz_compat

# grpcurl's single-dash flags, for `list` and `describe` (grpcurl's own commands): the
# ones that mean one of ours become it; the others are refused naming what to give.
GRPCURL_TAKEN = {
    "-plaintext": "--insecure", "-insecure": "--skipTLS", "-proto": "--proto",
    "-protoset": "--protoset", "-import-path": "-i", "-cacert": "--cacert", "-cert": "--cert",
    "-key": "--key", "-servername": "--cname",
}  # fmt: skip
GRPCURL_REFUSED = {
    "-H": 'give --reflect-metadata \'{"key": "value"}\' (reflection\'s metadata)',
    "-rpc-header": "list and describe make no call: give --reflect-metadata for reflection",
    "-reflect-header": 'give --reflect-metadata \'{"key": "value"}\'',
    "-d": "list and describe send no request: grpcbench run -d ... calls the method",
    "-format": "list and describe print .proto text, as grpcurl's default",
    "-max-time": "list and describe take no time limit of their own",
    "-connect-timeout": "list and describe take no connect timeout of their own",
}


def grpcurl_flags_of(argv: list[str]) -> list[str]:
    """``list``/``describe`` with grpcurl's spellings: ``-plaintext`` is ``--insecure``
    (and so on, ``GRPCURL_TAKEN``), and a grpcurl flag grpcbench does not take is refused
    by name (a ``UsageError``), never read as short options (``-insecure`` was ``-i``)."""
    if len(argv) < 2 or argv[1] not in ("list", "describe"):
        return argv
    kept = argv[:2]
    for word in argv[2:]:
        flag, equals, value = word.partition("=")
        if flag in GRPCURL_REFUSED:
            raise UsageError(f"grpcurl's {flag} is not taken: {GRPCURL_REFUSED[flag]}")
        if flag in GRPCURL_TAKEN:
            kept += [GRPCURL_TAKEN[flag], value] if equals else [GRPCURL_TAKEN[flag]]
            continue
        kept.append(word)
    return kept


def ghz_flags_of(argv: list[str]) -> list[str]:
    """``argv``, checked: a ghz flag `run` does not take is refused by name with its
    reason (``ghz_promises.REFUSED``, a ``UsageError``)."""
    if len(argv) < 2 or argv[1] != "run":
        return argv
    refused = ghz_compat.refused_flags()
    kept = argv[:2]
    words = iter(argv[2:])
    for word in words:
        if word == "--":
            return [*kept, word, *words]
        flag = word.partition("=")[0]
        reason = refused.get(flag)
        if not reason:
            kept.append(word)
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
