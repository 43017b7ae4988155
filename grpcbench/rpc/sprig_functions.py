"""The template functions a ghz line may use: ghz's own (``newUUID``, ``randomString``,
``randomInt``) and the Sprig functions people reach for (ghz adds all of Sprig v3):
strings, numbers, encodings, hashes, random values and ``now``. A Sprig function not
here is "not defined" before any load, never sent as text.

Arguments arrive as Go would pass them from the template: the call's fields are
text (``.RequestNumber`` too), so the numeric functions convert as Sprig's toInt64 /
toFloat64 do."""

from __future__ import annotations

import base64
import hashlib
import random
import re
import string
import time
import uuid
import zlib
from collections.abc import Callable
from typing import Any

from grpcbench.base.errors import UsageError

_LETTERS = string.ascii_letters + string.digits
CHARSETS = {
    "randAlphaNum": string.ascii_letters + string.digits,
    "randAlpha": string.ascii_letters,
    "randNumeric": string.digits,
    "randAscii": "".join(chr(c) for c in range(32, 127)),
}


def to_int(value: Any) -> int:
    """Sprig's toInt64: numbers, numeric text (else 0), booleans."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return int(value)
    try:
        return int(float(str(value)))
    except ValueError:
        return 0


def to_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _text(value: Any) -> str:
    from grpcbench.rpc.go_template import go_text

    return go_text(value)


def random_string(length: Any) -> str:
    """ghz's randomString: a length of 0 or less is random, from 2 to 16."""
    count = to_int(length)
    if count <= 0:
        count = random.randint(2, 16)
    return "".join(random.choices(_LETTERS, k=count))


def random_int(low: Any, high: Any) -> int:
    """ghz's randomInt and Sprig's randInt: from MIN up to, not including, MAX."""
    first, last = to_int(low), to_int(high)
    if last <= first:
        raise UsageError(f"randomInt/randInt {first} {last}: MAX must exceed MIN")
    return random.randrange(first, last)


def _case_words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(text))
    return [word for word in re.split(r"[\s_\-]+", spaced) if word]


def _substr(start: Any, end: Any, text: Any) -> str:
    value, first, last = str(text), to_int(start), to_int(end)
    if first < 0:
        return value[:last]
    if last < 0 or last > len(value):
        return value[first:]
    return value[first:last]


def _trunc(count: Any, text: Any) -> str:
    value, length = str(text), to_int(count)
    return value[length:] if length < 0 else value[:length]


def _default(fallback: Any, *given: Any) -> Any:
    value = given[0] if given else None
    return fallback if value in (None, "", 0, False, [], {}) else value


def _div(a: Any, b: Any) -> int:
    divisor = to_int(b)
    if divisor == 0:
        raise ValueError("integer divide by zero")
    quotient = abs(to_int(a)) // abs(divisor)  # Go truncates toward zero
    return quotient if (to_int(a) >= 0) == (divisor > 0) else -quotient


def _mod(a: Any, b: Any) -> int:
    divisor = to_int(b)
    if divisor == 0:
        raise ValueError("integer divide by zero")
    return to_int(a) - divisor * _div(a, b)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    # ghz's own
    "newUUID": lambda: str(uuid.uuid4()),
    "randomString": random_string,
    "randomInt": random_int,
    # Sprig: random values and ids
    "uuidv4": lambda: str(uuid.uuid4()),
    "randInt": random_int,
    **{
        name: (lambda count, chars=chars: "".join(random.choices(chars, k=to_int(count))))
        for name, chars in CHARSETS.items()
    },
    # Go's own
    "len": lambda value: len(value) if isinstance(value, str | list) else len(_text(value)),
    "print": lambda *items: _go_print(items),
    # Sprig: strings
    "upper": lambda s: _text(s).upper(),
    "lower": lambda s: _text(s).lower(),
    "title": lambda s: " ".join(w[:1].upper() + w[1:] for w in _text(s).split(" ")),
    "untitle": lambda s: " ".join(w[:1].lower() + w[1:] for w in _text(s).split(" ")),
    "trim": lambda s: _text(s).strip(),
    "trimAll": lambda cut, s: _text(s).strip(_text(cut)),
    "trimPrefix": lambda prefix, s: _text(s).removeprefix(_text(prefix)),
    "trimSuffix": lambda suffix, s: _text(s).removesuffix(_text(suffix)),
    "nospace": lambda s: re.sub(r"\s", "", _text(s)),
    "repeat": lambda count, s: _text(s) * max(0, to_int(count)),
    "substr": _substr,
    "trunc": _trunc,
    "replace": lambda old, new, s: _text(s).replace(_text(old), _text(new)),
    "contains": lambda sub, s: _text(sub) in _text(s),
    "hasPrefix": lambda prefix, s: _text(s).startswith(_text(prefix)),
    "hasSuffix": lambda suffix, s: _text(s).endswith(_text(suffix)),
    "quote": lambda *items: " ".join('"' + _text(i).replace('"', '\\"') + '"' for i in items),
    "squote": lambda *items: " ".join(f"'{_text(i)}'" for i in items),
    "cat": lambda *items: " ".join(_text(i) for i in items if i is not None),
    "snakecase": lambda s: "_".join(w.lower() for w in _case_words(s)),
    "kebabcase": lambda s: "-".join(w.lower() for w in _case_words(s)),
    "camelcase": lambda s: "".join(w[:1].upper() + w[1:] for w in _case_words(s)),
    "toString": _text,
    "default": _default,
    "empty": lambda value: value in (None, "", 0, False),
    # Sprig: numbers
    "atoi": to_int,
    "int": to_int,
    "int64": to_int,
    "float64": to_float,
    "add": lambda *items: sum(to_int(i) for i in items),
    "add1": lambda a: to_int(a) + 1,
    "sub": lambda a, b: to_int(a) - to_int(b),
    "mul": lambda a, *items: to_int(a) * _product(items),
    "div": _div,
    "mod": _mod,
    "max": lambda a, *items: max([to_int(a), *(to_int(i) for i in items)]),
    "min": lambda a, *items: min([to_int(a), *(to_int(i) for i in items)]),
    # Sprig: encodings and hashes
    "b64enc": lambda s: base64.b64encode(_text(s).encode()).decode(),
    "b64dec": lambda s: base64.b64decode(_text(s)).decode(errors="replace"),
    "sha1sum": lambda s: hashlib.sha1(_text(s).encode()).hexdigest(),
    "sha256sum": lambda s: hashlib.sha256(_text(s).encode()).hexdigest(),
    "adler32sum": lambda s: str(zlib.adler32(_text(s).encode())),
    # Sprig: time (now is seconds here; unixEpoch prints them whole)
    "now": lambda: time.time(),
    "unixEpoch": lambda t: str(int(to_float(t))),
}


def _go_print(items: tuple[Any, ...]) -> str:
    """Go's fmt.Sprint: a space between operands when neither is a string."""
    text = ""
    for index, item in enumerate(items):
        if index and not isinstance(item, str) and not isinstance(items[index - 1], str):
            text += " "
        text += _text(item)
    return text


def _product(items: tuple[Any, ...]) -> int:
    result = 1
    for item in items:
        result *= to_int(item)
    return result
