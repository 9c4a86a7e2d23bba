"""Value decoding shared by the line formats: JSON, then Python literals, then a lenient JSON-ish reader."""

from __future__ import annotations

import ast
import json
import math
import warnings

_json_loads = json.loads
_WORDS = {
    "null": None,
    "None": None,
    "true": True,
    "True": True,
    "false": False,
    "False": False,
    "NaN": math.nan,
    "nan": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
}
_WORD_STOP = frozenset(",:[]{}()\"' \t\r\n")


def _literal(text: str):
    # Odd text like `1abc` or "\d" makes the compiler warn; that is expected noise here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _jsonable(ast.literal_eval(text))


def _jsonable(value):
    """Python-only containers (tuples, sets, odd dict keys) turned into JSON-storable values."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {
            k if isinstance(k, (str, int, float, bool)) or k is None else repr(k): _jsonable(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_jsonable(v) for v in value]
        return items if not isinstance(value, (set, frozenset)) else sorted(items, key=repr)
    raise ValueError(f"{type(value).__name__} is not a JSON value")  # bytes, complex: keep the text


def loads_lenient(text: str):
    """Decode text as JSON, a Python literal or relaxed JSON; raise ValueError when none fits."""
    try:
        return _json_loads(text)
    except ValueError:
        pass
    try:
        # Intel v0.6 writes metadata as Python dicts with single quotes.
        return _literal(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        # Mixed JSON/Python (`"value": null, 'lineno': 1`), bare words, `75.98%`.
        return _Reader(text).document()
    except IndexError:
        raise ValueError("value is cut short (interleaved or truncated output?)") from None
    except (TypeError, RecursionError) as exc:
        raise ValueError(f"cannot decode value: {exc}") from None


def is_key(key: str) -> bool:
    """True for an event key such as `run_start` or `opt_hp_Adam_beta1` (not interleaved garbage)."""
    return key.replace(".", "_").replace("-", "_").isidentifier()


def decode_value(text: str):
    """Decode a logged value; None when empty, the stripped text when it is not a literal."""
    text = text.strip()
    if not text:
        return None
    try:
        return loads_lenient(text)
    except ValueError:
        return text


class _Reader:
    """Tiny recursive-descent reader for JSON with Python quoting and bare words."""

    __slots__ = ("s", "i")

    def __init__(self, s: str):
        self.s, self.i = s, 0

    def document(self):
        value = self.value()
        self.ws()
        if self.i != len(self.s):
            raise ValueError(f"unexpected text at offset {self.i}")
        return value

    def ws(self) -> None:
        s, i = self.s, self.i
        while i < len(s) and s[i] in " \t\r\n":
            i += 1
        self.i = i

    def value(self):
        self.ws()
        c = self.s[self.i]
        if c == "{":
            return self.container("}", {})
        if c in "[(":
            return self.container("]" if c == "[" else ")", [])
        if c in "\"'":
            return self.string(c)
        return self.word()

    def container(self, close: str, out):
        self.i += 1
        while True:
            self.ws()
            if self.s[self.i] == close:
                self.i += 1
                return out
            item = self.value()
            self.ws()
            if isinstance(out, dict):
                if self.s[self.i] != ":":
                    raise ValueError(f"expected ':' at offset {self.i}")
                self.i += 1
                out[item] = self.value()  # TypeError for unhashable keys
                self.ws()
            else:
                out.append(item)
            c = self.s[self.i]
            if c == ",":
                self.i += 1
            elif c != close:
                raise ValueError(f"expected ',' or {close!r} at offset {self.i}")

    def string(self, quote: str) -> str:
        s, j = self.s, self.i + 1
        while s[j] != quote:
            j += 2 if s[j] == "\\" else 1
        raw, self.i = s[self.i : j + 1], j + 1
        try:
            return _literal(raw)  # handles the escapes of either quote style
        except (ValueError, SyntaxError):
            return raw[1:-1]

    def word(self):
        s, j = self.s, self.i
        while j < len(s) and s[j] not in _WORD_STOP:
            j += 1
        token, self.i = s[self.i : j], j
        if not token:
            raise ValueError(f"unexpected {s[j]!r} at offset {j}")
        if token in _WORDS:
            return _WORDS[token]
        if len(token) > 1 and token.endswith("%"):  # Alibaba v0.6 logs accuracy as "75.98000%"
            try:
                return float(token[:-1] + "e-2")  # exact decimal shift, no 0.7472799999 artefacts
            except ValueError:
                return token
        try:
            return int(token)
        except ValueError:
            pass
        try:
            return float(token)
        except ValueError:
            return token  # a bare word such as `manual`
