"""A recursive-descent parser for the PromQL subset the metric tool evaluates on the simulator.

Why a parser of our own: the reference agents (ORCA-bench) query Prometheus with real PromQL, and
the embedded simulator has no Prometheus server. Python's `eval` or a regex rewrite would accept
far more than PromQL (or less than it claims); this parser accepts exactly the subset in
`SUPPORTED`, with Prometheus' precedence and type rules, and everything else is a `PromQLSyntaxError`
(a malformed query, with its position) or a `PromQLUnsupportedError` (valid PromQL outside the
subset, naming the construct and listing what is supported). Both are the agent's to fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ...core.errors import PromQLError

__all__ = [
    "PromQLSyntaxError",
    "PromQLUnsupportedError",
    "parse",
    "SUPPORTED",
    "RANGE_FUNCTIONS",
    "AGGREGATIONS",
]

RANGE_FUNCTIONS = (
    "rate",
    "irate",
    "increase",
    "delta",
    "avg_over_time",
    "max_over_time",
    "min_over_time",
    "sum_over_time",
    "count_over_time",
    "last_over_time",
)
# name -> (argument types, how many of them are required, result type)
FUNCTIONS: dict[str, tuple[tuple[str, ...], int, str]] = {
    **{f: (("matrix",), 1, "vector") for f in RANGE_FUNCTIONS},
    "histogram_quantile": (("scalar", "vector"), 2, "vector"),
    **{f: (("vector",), 1, "vector") for f in ("abs", "ceil", "floor", "sqrt")},
    "round": (("vector", "scalar"), 1, "vector"),
    "clamp_min": (("vector", "scalar"), 2, "vector"),
    "clamp_max": (("vector", "scalar"), 2, "vector"),
    "vector": (("scalar",), 1, "vector"),
    "scalar": (("vector",), 1, "scalar"),
    "time": ((), 0, "scalar"),
}
_EXAMPLES = {
    "matrix": "x[5m]",
    "histogram_quantile": "histogram_quantile(0.95, sum by (le) (rate(x_bucket[5m])))",
}
AGGREGATIONS = ("sum", "avg", "max", "min", "count", "topk", "bottomk")
COMPARISON_OPS = ("==", "!=", "<=", "<", ">=", ">")
SET_OPS = ("and", "or", "unless")
SUPPORTED = (
    'selectors name{label=|!=|=~|!~"value"} and name{...}[5m] (metric name required; RE2 regexes, '
    "fully anchored), offset <duration> (not negative); functions "
    + ", ".join(f"{f}(x[d])" for f in RANGE_FUNCTIONS)
    + ", histogram_quantile(q, v), abs, ceil, floor, sqrt, round(v[, to]), clamp_min(v, s), "
    "clamp_max(v, s), vector(s), scalar(v), time(); aggregations "
    + ", ".join(AGGREGATIONS)
    + " with by/without (...) (topk/bottomk take k first); binary + - * / % ^ and comparisons "
    "(== != < <= > >=, optionally bool) between scalars and vectors, one-to-one vector matching "
    "with on(...)/ignoring(...); and, or, unless; numbers, parentheses, durations such as 30s, 5m, 1h30m"
)
MAX_DEPTH = 48  # nesting of parentheses, calls and operators (bounds the recursion)

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0, "y": 31536000.0}
_DURATION = re.compile(r"(?:[0-9]+(?:ms|s|m|h|d|w|y))+(?![a-zA-Z0-9_])")
_DURATION_PART = re.compile(r"([0-9]+)(ms|s|m|h|d|w|y)")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_PUNCT = ("=~", "!~", "!=", "==", "<=", ">=", "(", ")", "{", "}", "[", "]", ",", "=", "<", ">", "+", "-")
_PUNCT += ("*", "/", "%", "^", "@")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}
_KNOWN_FUNCTIONS = (  # real PromQL functions outside the subset: named as unsupported, not unknown
    "abs absent absent_over_time ceil changes clamp clamp_max clamp_min day_of_month day_of_week "
    "days_in_month deriv exp floor histogram_count histogram_sum histogram_fraction holt_winters "
    "hour idelta label_join label_replace last_over_time ln log10 log2 minute month predict_linear "
    "quantile_over_time resets round scalar sgn sort sort_desc sqrt stddev_over_time stdvar_over_time "
    "time timestamp vector year present_over_time mad_over_time double_exponential_smoothing "
    "sort_by_label sort_by_label_desc info"
).split()
_OTHER_AGGREGATIONS = ("stddev", "stdvar", "quantile", "count_values", "group", "limitk", "limit_ratio")


class PromQLSyntaxError(PromQLError):
    """The expression is not valid PromQL; the message gives the position."""


class PromQLUnsupportedError(PromQLError):
    """Valid PromQL outside the evaluated subset; the message names the construct."""


# ---------------------------------------------------------------------------------------- AST
@dataclass(frozen=True)
class Number:
    value: float
    type: str = "scalar"


@dataclass(frozen=True)
class Selector:
    """An instant selector (`range_s` None) or a range selector ``name{...}[range]``."""

    name: str | None
    matchers: tuple[tuple[str, str, str], ...]  # (label, op, value); __name__ matchers included
    offset_s: float = 0.0
    range_s: float | None = None

    @property
    def type(self) -> str:
        return "vector" if self.range_s is None else "matrix"


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple
    type: str = "vector"


@dataclass(frozen=True)
class Aggregate:
    op: str
    expr: object
    param: object | None
    labels: tuple[str, ...]
    without: bool
    type: str = "vector"


@dataclass(frozen=True)
class Unary:
    expr: object

    @property
    def type(self) -> str:
        return self.expr.type  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: object
    rhs: object
    bool_mode: bool = False
    on: bool | None = None  # None: no on/ignoring; True: on(labels); False: ignoring(labels)
    labels: tuple[str, ...] = field(default=())

    @property
    def type(self) -> str:
        both_scalar = self.lhs.type == "scalar" and self.rhs.type == "scalar"  # type: ignore[attr-defined]
        return "scalar" if both_scalar else "vector"


# ---------------------------------------------------------------------------------------- lexer
@dataclass(frozen=True)
class _Tok:
    kind: str  # num, dur, ident, str, op, eof
    text: str
    pos: int
    value: object = None


def _lex(src: str) -> list[_Tok]:
    out: list[_Tok] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "#":  # a comment runs to the end of the line
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        m = _DURATION.match(src, i)
        if m:
            secs = sum(int(a) * _UNITS[u] for a, u in _DURATION_PART.findall(m.group()))
            out.append(_Tok("dur", m.group(), i, secs))
            i = m.end()
            continue
        m = _NUMBER.match(src, i)
        if m and not (c == "." and not m.group()[1:2].isdigit()):
            text = m.group()
            if _IDENT.match(src, m.end()) and not text.lower().startswith("0x"):
                raise _syntax(src, m.end(), f"unexpected character {src[m.end()]!r} after number {text!r}")
            value = float(int(text, 16)) if text[:2].lower() == "0x" else float(text)
            out.append(_Tok("num", text, i, value))
            i = m.end()
            continue
        m = _IDENT.match(src, i)
        if m:
            out.append(_Tok("ident", m.group(), i))
            i = m.end()
            continue
        if c in "\"'`":
            value, i2 = _string(src, i)
            out.append(_Tok("str", src[i:i2], i, value))
            i = i2
            continue
        for p in _PUNCT:
            if src.startswith(p, i):
                out.append(_Tok("op", p, i))
                i += len(p)
                break
        else:
            raise _syntax(src, i, f"unexpected character {c!r}")
    out.append(_Tok("eof", "", n))
    return out


def _string(src: str, i: int) -> tuple[str, int]:
    """A PromQL string literal at `src[i]` (Go escapes in "..." and '...', raw in `...`)."""
    q = src[i]
    j = i + 1
    buf: list[str] = []
    while j < len(src):
        c = src[j]
        if c == q:
            return "".join(buf), j + 1
        if c == "\n" and q != "`":
            break
        if c == "\\" and q != "`":
            e = src[j + 1 : j + 2]
            if e in _ESCAPES or e == q:
                buf.append(_ESCAPES.get(e, e))
                j += 2
                continue
            hexlen = {"x": 2, "u": 4, "U": 8}.get(e)
            if hexlen and re.fullmatch(r"[0-9a-fA-F]+", src[j + 2 : j + 2 + hexlen] or "-"):
                if len(src[j + 2 : j + 2 + hexlen]) == hexlen:
                    buf.append(chr(int(src[j + 2 : j + 2 + hexlen], 16)))
                    j += 2 + hexlen
                    continue
            hint = 'write \\\\ for a backslash, e.g. "a\\\\.b"'
            raise _syntax(src, j, f"unknown escape sequence \\{e} in a string ({hint})")
        buf.append(c)
        j += 1
    raise _syntax(src, i, "unterminated string literal")


def _syntax(src: str, pos: int, msg: str) -> PromQLSyntaxError:
    near = src[pos : pos + 20] or "end of input"
    return PromQLSyntaxError(f"PromQL syntax error at position {pos} (near {near!r}): {msg}")


# ---------------------------------------------------------------------------------------- parser
class _Parser:
    def __init__(self, src: str):
        self.src = src
        self.toks = _lex(src)
        self.i = 0
        self.depth = 0

    # -------------------------------------------------------- helpers
    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        self.i = min(self.i + 1, len(self.toks) - 1)
        return t

    def is_op(self, *texts: str) -> bool:
        return self.tok.kind == "op" and self.tok.text in texts

    def is_word(self, *words: str) -> bool:
        return self.tok.kind == "ident" and self.tok.text.lower() in words

    def expect(self, text: str, what: str = "") -> _Tok:
        if not self.is_op(text):
            raise self.error(f"expected {text!r}{what}, got {self.tok.text or 'end of input'!r}")
        return self.next()

    def error(self, msg: str, pos: int | None = None) -> PromQLSyntaxError:
        return _syntax(self.src, self.tok.pos if pos is None else pos, msg)

    def unsupported(self, what: str) -> PromQLUnsupportedError:
        return PromQLUnsupportedError(
            f"unsupported PromQL at position {self.tok.pos}: {what}. Supported here: {SUPPORTED}"
        )

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"expression nested more than {MAX_DEPTH} levels deep")

    # -------------------------------------------------------- grammar
    def parse(self) -> object:
        if self.tok.kind == "eof":
            raise self.error("empty expression")
        node = self.expr(0)
        if self.tok.kind != "eof":
            raise self.error(f"unexpected {self.tok.text!r} after a complete expression")
        if node.type == "matrix":  # type: ignore[attr-defined]
            raise self.error(
                "a range vector (x[5m]) cannot be the result of a range query: wrap it in a "
                "function such as rate() or avg_over_time()",
                0,
            )
        if node.type == "string":  # type: ignore[attr-defined]
            raise self.unsupported("a string as the whole expression")
        return node

    _LEVELS: tuple[tuple[str, ...], ...] = (
        ("or",),
        ("and", "unless"),
        COMPARISON_OPS,
        ("+", "-"),
        ("*", "/", "%"),
    )

    def _level_op(self, level: int) -> str | None:
        ops = self._LEVELS[level]
        if level <= 1:
            return self.tok.text.lower() if self.is_word(*ops) else None
        return self.tok.text if self.is_op(*ops) else None

    def expr(self, level: int) -> object:
        if level == len(self._LEVELS):
            return self.unary()
        lhs = self.expr(level + 1)  # the precedence levels are not nesting: only brackets count
        while (op := self._level_op(level)) is not None:
            pos = self.next().pos
            bool_mode, on, labels = self.modifiers(op)
            rhs = self.expr(level + 1)
            lhs = self.binary(op, lhs, rhs, bool_mode, on, labels, pos)
        return lhs

    def modifiers(self, op: str) -> tuple[bool, bool | None, tuple[str, ...]]:
        bool_mode = False
        if self.is_word("bool"):
            if op not in COMPARISON_OPS:
                raise self.error(f"bool modifier can only be used on comparison operators, not {op!r}")
            self.next()
            bool_mode = True
        on: bool | None = None
        labels: tuple[str, ...] = ()
        if self.is_word("on", "ignoring"):
            on = self.next().text.lower() == "on"
            labels = self.label_list()
        if self.is_word("group_left", "group_right"):
            raise self.unsupported(f"{self.tok.text} (many-to-one matching); only one-to-one matching is")
        return bool_mode, on, labels

    def binary(
        self, op: str, lhs: object, rhs: object, bool_mode: bool, on: bool | None, labels: tuple, pos: int
    ) -> Binary:
        lt, rt = lhs.type, rhs.type  # type: ignore[attr-defined]
        for t in (lt, rt):
            if t in ("matrix", "string"):
                raise self.error(
                    f"binary operator {op!r} needs scalar or instant-vector operands, got a "
                    f"{'range vector' if t == 'matrix' else 'string'}",
                    pos,
                )
        if op in SET_OPS and "scalar" in (lt, rt):
            raise self.error(f"set operator {op!r} is only defined between instant vectors", pos)
        if op in COMPARISON_OPS and lt == rt == "scalar" and not bool_mode:
            raise self.error("comparisons between scalars must use the bool modifier", pos)
        if on is not None and "scalar" in (lt, rt):
            raise self.error("vector matching (on/ignoring) is only allowed between instant vectors", pos)
        return Binary(op, lhs, rhs, bool_mode, on, labels)

    def unary(self) -> object:
        if self.is_op("-", "+"):
            neg = self.next().text == "-"
            self.enter()
            inner = self.unary()
            self.depth -= 1
            if inner.type not in ("scalar", "vector"):  # type: ignore[attr-defined]
                raise self.error("unary minus needs a scalar or an instant vector")
            if not neg:
                return inner
            if isinstance(inner, Number):
                return Number(-inner.value)
            return Unary(inner)
        return self.power()

    def power(self) -> object:
        base = self.postfix()
        if self.is_op("^"):
            pos = self.next().pos
            self.enter()
            rhs = self.unary()  # right-associative, binds tighter than unary minus on its left
            self.depth -= 1
            bool_mode, on, labels = False, None, ()
            return self.binary("^", base, rhs, bool_mode, on, labels, pos)
        return base

    def postfix(self) -> object:
        node = self.primary()
        if self.is_op("["):
            if not isinstance(node, Selector) or node.range_s is not None or node.offset_s:
                raise self.unsupported("a subquery or a range on something other than a plain selector")
            self.next()
            if self.tok.kind != "dur":
                raise self.error(f"expected a duration such as 5m inside [...], got {self.tok.text!r}")
            rng = self.next().value
            if self.tok.kind == "ident" and self.tok.text.startswith(":"):
                raise self.unsupported("subqueries (x[5m:1m])")
            self.expect("]")
            if not rng > 0:  # type: ignore[operator]
                raise self.error("a range must be positive")
            node = Selector(node.name, node.matchers, 0.0, float(rng))  # type: ignore[arg-type]
        if self.is_op("@"):
            raise self.unsupported("the @ modifier")
        if self.is_word("offset"):
            if not isinstance(node, Selector):
                raise self.unsupported("offset on anything but a selector")
            self.next()
            neg = self.is_op("-")
            if neg or self.is_op("+"):
                self.next()
            if self.tok.kind != "dur":
                raise self.error(f"expected a duration after offset, got {self.tok.text!r}")
            d = float(self.next().value)  # type: ignore[arg-type]
            if neg and d:
                raise self.unsupported("a negative offset (it would read past the end of the data)")
            node = Selector(node.name, node.matchers, d, node.range_s)
        if self.is_op("@"):
            raise self.unsupported("the @ modifier")
        return node

    def primary(self) -> object:
        t = self.tok
        if t.kind == "num":
            self.next()
            return Number(float(t.value))  # type: ignore[arg-type]
        if t.kind == "dur":
            raise self.error(f"unexpected duration {t.text!r} (durations go inside [...] or after offset)")
        if t.kind == "str":
            raise self.unsupported("string literals outside label matchers")
        if self.is_op("("):
            self.next()
            self.enter()
            inner = self.expr(0)
            self.depth -= 1
            self.expect(")", " to close '('")
            return inner
        if self.is_op("{"):
            return self.selector(None)
        if t.kind == "ident":
            low = t.text.lower()
            if low in ("inf", "nan"):
                self.next()
                return Number(float(low))
            nxt = self.peek()
            if low in AGGREGATIONS and (nxt.text == "(" or nxt.text.lower() in ("by", "without")):
                return self.aggregate()
            if low in _OTHER_AGGREGATIONS and (nxt.text == "(" or nxt.text.lower() in ("by", "without")):
                raise self.unsupported(f"aggregation {t.text}()")
            if nxt.kind == "op" and nxt.text == "(":
                return self.call()
            if low in ("by", "without", "on", "ignoring", "bool", "offset", "and", "or", "unless"):
                raise self.error(f"unexpected keyword {t.text!r}")
            self.next()
            return self.selector(t.text)
        raise self.error(f"unexpected {t.text or 'end of input'!r}")

    def selector(self, name: str | None) -> Selector:
        matchers: list[tuple[str, str, str]] = []
        if self.is_op("{"):
            self.next()
            while not self.is_op("}"):
                if self.tok.kind != "ident" or not _LABEL.fullmatch(self.tok.text):
                    raise self.error(f"expected a label name in {{...}}, got {self.tok.text!r}")
                label = self.next().text
                if not self.is_op("=", "!=", "=~", "!~"):
                    raise self.error(f"expected one of = != =~ !~ after label {label!r}")
                op = self.next().text
                if self.tok.kind != "str":
                    raise self.error(f"expected a quoted string after {label}{op}")
                matchers.append((label, op, str(self.next().value)))
                if self.is_op(","):
                    self.next()
                elif not self.is_op("}"):
                    raise self.error("expected ',' or '}' in a label matcher list")
            self.next()
        if name is None:
            names = [m for m in matchers if m[0] == "__name__"]
            if not names:
                raise self.unsupported('a selector without a metric name (name{...} or {__name__="..."})')
        return Selector(name, tuple(matchers))

    def label_list(self) -> tuple[str, ...]:
        self.expect("(", " to open a label list")
        out: list[str] = []
        while not self.is_op(")"):
            if self.tok.kind != "ident" or not _LABEL.fullmatch(self.tok.text):
                raise self.error(f"expected a label name, got {self.tok.text!r}")
            out.append(self.next().text)
            if self.is_op(","):
                self.next()
            elif not self.is_op(")"):
                raise self.error("expected ',' or ')' in a label list")
        self.next()
        return tuple(out)

    def aggregate(self) -> Aggregate:
        op = self.next().text.lower()
        labels: tuple[str, ...] = ()
        without = False
        seen = False
        if self.is_word("by", "without"):
            without = self.next().text.lower() == "without"
            labels, seen = self.label_list(), True
        self.expect("(", f" after {op}")
        self.enter()
        param = None
        if op in ("topk", "bottomk"):
            param = self.expr(0)
            if param.type != "scalar":  # type: ignore[attr-defined]
                raise self.error(f"{op}() takes a scalar k first, e.g. {op}(3, x)")
            self.expect(",", f" after the k of {op}()")
        inner = self.expr(0)
        self.depth -= 1
        if self.is_op(","):
            raise self.error(f"{op}() takes {'two arguments' if param is not None else 'one argument'}")
        self.expect(")", f" to close {op}(")
        if self.is_word("by", "without"):
            if seen:
                raise self.error("by/without given twice")
            without = self.next().text.lower() == "without"
            labels = self.label_list()
        if inner.type != "vector":  # type: ignore[attr-defined]
            raise self.error(f"{op}() needs an instant vector, got a {_type_name(inner)}")
        return Aggregate(op, inner, param, labels, without)

    def call(self) -> Call:
        t = self.next()
        name = t.text
        if name not in FUNCTIONS:
            what = "function" if name in _KNOWN_FUNCTIONS else "unknown function"
            raise PromQLUnsupportedError(
                f"unsupported PromQL at position {t.pos}: {what} {name}(). Supported here: {SUPPORTED}"
            )
        self.expect("(")
        self.enter()
        args = []
        while not self.is_op(")"):
            args.append(self.expr(0))
            if self.is_op(","):
                self.next()
            elif not self.is_op(")"):
                raise self.error(f"expected ',' or ')' in the arguments of {name}()")
        self.next()
        self.depth -= 1
        types, required, result = FUNCTIONS[name]
        got = tuple(a.type for a in args)
        if not required <= len(got) <= len(types) or got != types[: len(got)]:
            shown = ", ".join({"matrix": "range vector", "vector": "instant vector"}.get(x, x) for x in types)
            example = _EXAMPLES.get(name) or _EXAMPLES.get(types[0] if types else "", "")
            hint = f", e.g. {name}({example})" if example and "(" not in example else f", e.g. {example}"
            raise self.error(f"{name}() takes ({shown}){hint if example else ''}", t.pos)
        return Call(name, tuple(args), result)


def _type_name(node: object) -> str:
    return {"matrix": "range vector", "vector": "instant vector"}.get(node.type, node.type)  # type: ignore[attr-defined]


def parse(src: str) -> object:
    """The AST of `src`; raises PromQLSyntaxError / PromQLUnsupportedError. Shared per query string
    (a dashboard asks the same queries at every step): the AST is frozen dataclasses and tuples,
    which nothing can modify, and a query that fails is parsed again (errors are not kept)."""
    if not isinstance(src, str):
        return _Parser(src).parse()
    return _parse_cached(src)


@lru_cache(maxsize=512)
def _parse_cached(src: str) -> object:
    return _Parser(src).parse()
