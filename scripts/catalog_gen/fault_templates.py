"""Templates used by `faults.py`: code-change snippets per language, config diffs, flag semantics.

Everything here is deterministic data plus pure helpers; the random choices are made by the caller
with its own `random.Random`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

# --------------------------------------------------------------------------------------------------
# languages

_EXT_FAMILY = {
    ".go": "go",
    ".py": "python",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".cs": "csharp",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".ts": "js",
    ".tsx": "js",
    ".jsx": "js",
    ".rb": "ruby",
    ".rs": "rust",
    ".php": "php",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".ex": "elixir",
    ".exs": "elixir",
}

_LANG_FAMILY = [
    ("typescript", "js"),
    ("javascript", "js"),
    ("node", "js"),
    ("kotlin", "kotlin"),
    ("java", "java"),
    ("c#", "csharp"),
    (".net", "csharp"),
    ("python", "python"),
    ("go", "go"),
    ("ruby", "ruby"),
    ("rust", "rust"),
    ("php", "php"),
    ("c++", "cpp"),
    ("elixir", "elixir"),
]


def code_family(path: str, language: str) -> str | None:
    """The language family of a source file, or None when it is not program code (yaml, conf...)."""
    m = re.search(r"(\.[A-Za-z0-9]+)$", path)
    if m:
        return _EXT_FAMILY.get(m.group(1).lower())
    low = language.lower()
    for needle, fam in _LANG_FAMILY:
        if needle in low:
            return fam
    return None


# --------------------------------------------------------------------------------------------------
# code snippets: mechanism -> family -> variants; a variant is (commit message, [(indent level, line)])

Snippet = tuple[str, list[tuple[int, str]]]

CODE_SNIPPETS: dict[str, dict[str, list[Snippet]]] = {
    "code_error": {
        "go": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if err := validateRequest(req); err != nil {"),
                    (1, 'return nil, status.Errorf(codes.InvalidArgument, "invalid request: %v", err)'),
                    (0, "}"),
                ],
            ),
            (
                "reject requests for unsupported currencies early",
                [
                    (0, "if !isSupportedCurrency(currencyFromContext(ctx)) {"),
                    (1, 'return nil, status.Error(codes.FailedPrecondition, "unsupported currency")'),
                    (0, "}"),
                ],
            ),
        ],
        "python": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if not _validate_request(request):"),
                    (1, 'context.abort(grpc.StatusCode.INVALID_ARGUMENT, "invalid request")'),
                ],
            ),
            (
                "raise on incomplete records instead of skipping them",
                [
                    (0, "if any(not getattr(request, field, None) for field in REQUIRED_FIELDS):"),
                    (1, 'raise ValueError("incomplete request")'),
                ],
            ),
        ],
        "java": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if (!RequestValidator.isValid(request)) {"),
                    (
                        1,
                        'throw Status.INVALID_ARGUMENT.withDescription("invalid request")'
                        ".asRuntimeException();",
                    ),
                    (0, "}"),
                ],
            ),
            (
                "fail fast on stale records",
                [
                    (0, "if (RecordGuard.isStale(request)) {"),
                    (1, 'throw new IllegalStateException("stale record");'),
                    (0, "}"),
                ],
            ),
        ],
        "kotlin": [
            (
                "validate incoming records before processing",
                [
                    (0, 'require(RecordValidator.isValid(record)) { "invalid record" }'),
                ],
            ),
        ],
        "csharp": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if (!RequestValidator.IsValid(request))"),
                    (1, 'throw new RpcException(new Status(StatusCode.InvalidArgument, "invalid request"));'),
                ],
            ),
        ],
        "js": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if (!isValidRequest(request)) {"),
                    (1, "throw new Error('invalid request');"),
                    (0, "}"),
                ],
            ),
            (
                "reject requests with unknown currency codes",
                [
                    (0, "if (!SUPPORTED_CURRENCIES.includes(currencyOf(request))) {"),
                    (1, "throw new Error('unsupported currency');"),
                    (0, "}"),
                ],
            ),
        ],
        "ruby": [
            (
                "validate incoming requests before processing",
                [
                    (0, "raise ArgumentError, 'invalid request' unless valid_request?(request)"),
                ],
            ),
        ],
        "rust": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if !is_valid_request(&request) {"),
                    (1, 'return Err(Status::invalid_argument("invalid request"));'),
                    (0, "}"),
                ],
            ),
        ],
        "php": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if (!isValidRequest($request)) {"),
                    (1, "throw new InvalidArgumentException('invalid request');"),
                    (0, "}"),
                ],
            ),
        ],
        "cpp": [
            (
                "validate incoming requests before processing",
                [
                    (0, "if (!IsValidRequest(*request)) {"),
                    (1, 'return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "invalid request");'),
                    (0, "}"),
                ],
            ),
        ],
        "elixir": [
            (
                "validate incoming params before processing",
                [
                    (0, 'if not valid_request?(params), do: raise(ArgumentError, "invalid request")'),
                ],
            ),
        ],
    },
    "code_latency": {
        "go": [
            ("persist audit entries before replying", [(0, "auditLog.Sync()")]),
            (
                "enrich items with their details",
                [
                    (0, "for i := range items {"),
                    (1, "items[i].Details, _ = fetchDetails(ctx, items[i].Id)"),
                    (0, "}"),
                ],
            ),
        ],
        "python": [
            ("persist audit entries before replying", [(0, "audit_log.flush(sync=True)")]),
            (
                "enrich items with their details",
                [
                    (0, "for item in items:"),
                    (1, "item.details = fetch_details(item.id)"),
                ],
            ),
        ],
        "java": [
            ("persist audit entries before replying", [(0, "auditLog.flush();")]),
            (
                "enrich items with their details",
                [
                    (0, "for (Item item : items) {"),
                    (1, "item.setDetails(detailsRepository.findById(item.getId()));"),
                    (0, "}"),
                ],
            ),
        ],
        "kotlin": [("persist audit entries before acknowledging", [(0, "auditLog.flush()")])],
        "csharp": [("persist audit entries before replying", [(0, "await _auditLog.FlushAsync();")])],
        "js": [
            ("persist audit entries before replying", [(0, "await auditLog.flush();")]),
            (
                "enrich items with their details",
                [
                    (0, "for (const item of items) {"),
                    (1, "item.details = await fetchDetails(item.id);"),
                    (0, "}"),
                ],
            ),
        ],
        "ruby": [("persist audit entries before replying", [(0, "audit_log.flush")])],
        "rust": [("persist audit entries before replying", [(0, "audit_log.flush().await?;")])],
        "php": [("persist audit entries before replying", [(0, "$auditLog->flush();")])],
        "cpp": [("persist audit entries before replying", [(0, "audit_log.Flush();")])],
        "elixir": [("persist audit entries before replying", [(0, "AuditLog.flush()")])],
    },
    "code_crash": {
        "go": [
            (
                "log the tenant serving each request",
                [
                    (0, "tenant := tenantFromContext(ctx)"),
                    (0, 'log.Debugf("serving tenant %s", tenant.Name)'),
                ],
            )
        ],
        "python": [
            (
                "log the tenant serving each request",
                [
                    (0, "tenant = tenant_from_metadata(context)"),
                    (0, 'logger.debug("serving tenant %s", tenant.name)'),
                ],
            )
        ],
        "java": [
            (
                "log the tenant serving each request",
                [
                    (0, "Tenant tenant = TenantContext.current();"),
                    (0, 'logger.debug("serving tenant {}", tenant.getName());'),
                ],
            )
        ],
        "kotlin": [
            (
                "log the tenant of each record",
                [
                    (0, "val tenant = TenantContext.current()!!"),
                    (0, 'logger.debug("tenant {}", tenant.name)'),
                ],
            )
        ],
        "csharp": [
            (
                "log the tenant serving each request",
                [
                    (0, "var tenant = TenantContext.Current!;"),
                    (0, '_logger.LogDebug("serving tenant {Tenant}", tenant.Name);'),
                ],
            )
        ],
        "js": [
            (
                "log the tenant serving each request",
                [
                    (0, "const tenant = tenantFromContext(call);"),
                    (0, "logger.debug({ tenant: tenant.name }, 'serving tenant');"),
                ],
            )
        ],
        "ruby": [
            (
                "log the tenant serving each request",
                [
                    (0, "tenant = tenant_from(request)"),
                    (0, 'logger.debug("serving tenant #{tenant.name}")'),
                ],
            )
        ],
        "rust": [
            (
                "log the tenant serving each request",
                [
                    (0, "let tenant = tenant_from(&request).unwrap();"),
                    (0, 'debug!("serving tenant {}", tenant.name);'),
                ],
            )
        ],
        "php": [
            (
                "log the tenant serving each request",
                [
                    (0, "$tenant = tenantFrom($request);"),
                    (0, "$logger->debug('serving tenant ' . $tenant->name);"),
                ],
            )
        ],
        "cpp": [
            (
                "log the tenant serving each request",
                [
                    (0, "const auto* tenant = TenantFrom(context);"),
                    (0, 'LOG(DEBUG) << "serving tenant " << tenant->name();'),
                ],
            )
        ],
        "elixir": [
            (
                "log the tenant serving each request",
                [
                    (0, "%{name: tenant} = tenant_from(conn)"),
                    (0, 'Logger.debug("serving tenant #{tenant}")'),
                ],
            )
        ],
    },
    "code_retry_storm": {
        "go": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for attempt := 0; attempt < maxAttempts && err != nil; attempt++ {"),
                    (1, "resp, err = callOnce(ctx, req)"),
                    (0, "}"),
                ],
            )
        ],
        "python": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for _ in range(MAX_ATTEMPTS):"),
                    (1, "response = call_once(request) if response is None else response"),
                ],
            )
        ],
        "java": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for (int attempt = 0; attempt < MAX_ATTEMPTS && response == null; attempt++) {"),
                    (1, "response = callOnce(request);"),
                    (0, "}"),
                ],
            )
        ],
        "kotlin": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "repeat(MAX_ATTEMPTS) { if (response == null) response = callOnce(record) }"),
                ],
            )
        ],
        "csharp": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for (var attempt = 0; attempt < MaxAttempts && response is null; attempt++)"),
                    (1, "response = await CallOnceAsync(request);"),
                ],
            )
        ],
        "js": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for (let attempt = 0; attempt < MAX_ATTEMPTS && !response; attempt++) {"),
                    (1, "response = await callOnce(request).catch(() => null);"),
                    (0, "}"),
                ],
            )
        ],
        "ruby": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "MAX_ATTEMPTS.times { response ||= call_once(request) }"),
                ],
            )
        ],
        "rust": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for _ in 0..MAX_ATTEMPTS {"),
                    (1, "if response.is_err() { response = call_once(&request).await; }"),
                    (0, "}"),
                ],
            )
        ],
        "php": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for ($attempt = 0; $attempt < MAX_ATTEMPTS && $response === null; $attempt++) {"),
                    (1, "$response = callOnce($request);"),
                    (0, "}"),
                ],
            )
        ],
        "cpp": [
            (
                "retry failed calls to {dep}",
                [
                    (0, "for (int attempt = 0; attempt < kMaxAttempts && !status.ok(); ++attempt) {"),
                    (1, "status = CallOnce(request, &reply);"),
                    (0, "}"),
                ],
            )
        ],
        "elixir": [
            (
                "retry failed calls to {dep}",
                [
                    (
                        0,
                        "response = Enum.reduce_while(1..@max_attempts, nil, "
                        "fn _, _ -> retry_once(params) end)",
                    ),
                ],
            )
        ],
    },
    "code_memory_leak": {
        "go": [("memoize responses per request key", [(0, "responseCache.Store(cacheKey(req), resp)")])],
        "python": [
            ("memoize responses per request key", [(0, "_response_cache[cache_key(request)] = response")])
        ],
        "java": [
            ("memoize responses per request key", [(0, "RESPONSE_CACHE.put(cacheKey(request), response);")])
        ],
        "kotlin": [("remember processed records", [(0, "processed[record.key()] = record.value()")])],
        "csharp": [
            ("memoize responses per request key", [(0, "ResponseCache[CacheKey(request)] = response;")])
        ],
        "js": [
            ("memoize responses per request key", [(0, "responseCache.set(cacheKey(request), response);")])
        ],
        "ruby": [
            (
                "keep sent messages for the outbox view",
                [(0, "SENT_MESSAGES << { to: request.to, body: body }")],
            )
        ],
        "rust": [
            (
                "memoize responses per request key",
                [
                    (0, "RESPONSE_CACHE.lock().unwrap().insert(cache_key(&request), response.clone());"),
                ],
            )
        ],
        "php": [
            (
                "memoize responses per request key",
                [(0, "self::$responseCache[cacheKey($request)] = $response;")],
            )
        ],
        "cpp": [
            ("memoize responses per request key", [(0, "response_cache_[CacheKey(*request)] = *reply;")])
        ],
        "elixir": [
            (
                "memoize responses per request key",
                [(0, ":ets.insert(:response_cache, {cache_key(params), response})")],
            )
        ],
    },
    "code_cpu_hog": {
        "go": [
            (
                "log the full request payload for debugging",
                [
                    (0, 'if payload, err := json.MarshalIndent(req, "", "  "); err == nil {'),
                    (1, 'log.Debugf("request: %s", payload)'),
                    (0, "}"),
                ],
            )
        ],
        "python": [
            (
                "log the full request payload for debugging",
                [
                    (
                        0,
                        'logger.debug("request: %s", '
                        "json.dumps(MessageToDict(request), indent=2, sort_keys=True))",
                    ),
                ],
            )
        ],
        "java": [
            (
                "log the full request payload for debugging",
                [
                    (
                        0,
                        'logger.debug("request: {}", '
                        "ReflectionToStringBuilder.toString(request, ToStringStyle.MULTI_LINE_STYLE));",
                    ),
                ],
            )
        ],
        "kotlin": [
            (
                "log the full record for debugging",
                [
                    (
                        0,
                        'logger.debug("record: {}", '
                        "mapper.writerWithDefaultPrettyPrinter().writeValueAsString(record))",
                    ),
                ],
            )
        ],
        "csharp": [
            (
                "log the full request payload for debugging",
                [
                    (
                        0,
                        '_logger.LogDebug("request: {Request}", '
                        "JsonSerializer.Serialize(request, PrettyJson));",
                    ),
                ],
            )
        ],
        "js": [
            (
                "log the full request payload for debugging",
                [
                    (0, "logger.debug({ request: JSON.parse(JSON.stringify(request)) }, 'request payload');"),
                ],
            )
        ],
        "ruby": [
            (
                "log the full request payload for debugging",
                [(0, "logger.debug(JSON.pretty_generate(request.to_h))")],
            )
        ],
        "rust": [
            (
                "log the full request payload for debugging",
                [
                    (0, 'debug!("request: {}", serde_json::to_string_pretty(&request).unwrap_or_default());'),
                ],
            )
        ],
        "php": [
            (
                "log the full request payload for debugging",
                [
                    (0, "$logger->debug(json_encode($request, JSON_PRETTY_PRINT));"),
                ],
            )
        ],
        "cpp": [
            (
                "log the full request payload for debugging",
                [
                    (0, 'LOG(DEBUG) << "request: " << request->DebugString();'),
                ],
            )
        ],
        "elixir": [
            (
                "log the full params for debugging",
                [
                    (0, "Logger.debug(inspect(params, pretty: true, limit: :infinity))"),
                ],
            )
        ],
    },
}

# variants used when the excerpt shows a house style (needle in excerpt -> variants)
STYLE_SNIPPETS: dict[tuple[str, str], tuple[str, list[Snippet]]] = {
    ("code_error", "java"): (
        "new Response<>(",
        [
            (
                "validate incoming requests before processing",
                [
                    (0, "if (!RequestValidator.isValid(request)) {"),
                    (1, 'return new Response<>(0, "invalid request", null);'),
                    (0, "}"),
                ],
            ),
            (
                "reject requests for trips that already departed",
                [
                    (0, "if (TripGuard.hasDeparted(request)) {"),
                    (1, 'return new Response<>(0, "trip already departed", null);'),
                    (0, "}"),
                ],
            ),
        ],
    ),
    ("code_error", "js"): (
        "res.status(",
        [
            (
                "validate incoming requests before processing",
                [
                    (0, "if (!isValidRequest(req.body)) {"),
                    (1, "return res.status(500).json({ error: 'invalid request' });"),
                    (0, "}"),
                ],
            ),
        ],
    ),
}

_FUNC_HEADER = {
    "go": re.compile(r"^\s*func\b.*\{\s*$"),
    "python": re.compile(r"^\s*(async\s+)?def\s+\w+.*:\s*$"),
    "java": re.compile(
        r"^\s*(public|private|protected|static|final|synchronized|\s)*"
        r"[\w<>\[\], ?]+\s+\w+\s*\(.*\)\s*(throws [\w., ]+)?\s*\{\s*$"
    ),
    "kotlin": re.compile(r"^\s*(\w+\s+)*fun\s+.*\{\s*$"),
    "csharp": re.compile(
        r"^\s*(public|private|protected|internal|static|async|override|virtual|\s)+"
        r"[\w<>\[\], ?]+\s+\w+\s*\(.*\)\s*\{?\s*$"
    ),
    "js": re.compile(
        r"^\s*(export\s+)?(default\s+)?(async\s+)?(function\b.*|\w+\s*\(.*\)|(const|let)\s+\w+\s*=\s*(async\s*)?\(.*\)\s*=>|.*=>)\s*\{\s*$"
    ),
    "ruby": re.compile(r"^\s*def\s+\w+.*$"),
    "rust": re.compile(r"^\s*(pub(\(\w+\))?\s+)?(async\s+)?fn\s+.*\{\s*$"),
    "php": re.compile(r"^\s*(public|private|protected|static|\s)*function\s+\w+.*\{?\s*$"),
    "cpp": re.compile(r"^\s*[\w:<>\*&, ]+\s+[\w:]+\s*\(.*\)\s*(const)?\s*(override)?\s*\{\s*$"),
    "elixir": re.compile(r"^\s*defp?\s+\w+.*\bdo\s*$"),
}
_CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|catch|else|try|foreach|elif|when|match|loop|do)\b")


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _indent_unit(lines: list[str], family: str) -> str:
    if family == "go" or any(ln.startswith("\t") for ln in lines):
        return "\t"
    widths = sorted(
        {len(_indent_of(ln)) for ln in lines if ln.strip() and _indent_of(ln) and "\t" not in _indent_of(ln)}
    )
    if widths and widths[0] in (2, 4):
        return " " * widths[0]
    return "    " if family in ("python", "java", "kotlin", "csharp", "php", "rust", "cpp") else "  "


def insertion_points(lines: list[str], family: str) -> list[int]:
    """Indexes after which a statement can go at the top of a function body."""
    header = _FUNC_HEADER.get(family)
    points = []
    for i, ln in enumerate(lines):
        if header and header.match(ln) and not _CONTROL.match(ln):
            j = i
            if family in ("csharp", "php") and not ln.rstrip().endswith("{"):
                if j + 1 < len(lines) and lines[j + 1].strip() == "{":
                    j += 1
                else:
                    continue
            if family == "python":  # skip a one-line docstring
                if j + 1 < len(lines) and re.match(r'^\s*("""|\'\'\').*("""|\'\'\')\s*$', lines[j + 1]):
                    j += 1
            if j + 1 < len(lines):
                points.append(j)
    return points


@dataclass(frozen=True)
class CodeChange:
    message: str
    diff: str


def unified_diff(path: str, old: list[str], new: list[str], context: int = 2) -> str:
    body = difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}", n=context, lineterm="")
    return "\n".join(body) + "\n"


def _code_part(line: str) -> str:
    """The line without a trailing `//` or `#` comment (string contents are not parsed)."""
    return re.split(r"\s(//|#)\s|^\s*(//|#)", line)[0]


def _retarget_retries(lines: list[str]) -> tuple[list[str], str] | None:
    """Raise an explicit retry count and drop the backoff next to it, when the excerpt has one."""
    pat = re.compile(
        r"(?i)\b(max_?retries|max_?attempts|attempts|retries|retry_?count)\b(\s*(?::=|=|:)\s*(?:1 \+ )?)(\d+)"
    )
    for i, ln in enumerate(lines):
        m = pat.search(_code_part(ln))
        if m and int(m.group(3)) < 10:
            new = lines[:i] + [ln[: m.start(3)] + "25" + ln[m.end(3) :]] + lines[i + 1 :]
            for k in range(max(0, i - 3), min(len(new), i + 5)):
                if re.search(r"(?i)(backoff|sleep|jitter)", new[k]) and k != i:
                    new = new[:k] + new[k + 1 :]
                    break
            return new, "retry transient failures more aggressively"
    loop = re.compile(r"(attempt\w*\s*<=?\s*)([\w.]*[Rr]etries)\b(?!\s*\*)")
    for i, ln in enumerate(lines):
        m = loop.search(_code_part(ln))
        if m:
            new = lines[:i] + [ln[: m.end(2)] + "*10" + ln[m.end(2) :]] + lines[i + 1 :]
            return new, "retry transient failures more aggressively"
    return None


def _off_by_one(lines: list[str], family: str) -> tuple[list[str], str] | None:
    """Turn the first `i < n` loop bound into `i <= n` (C-like languages) or widen a python range."""
    if family == "python":
        pat = re.compile(r"range\(len\((\w+)\)\)")
        for i, ln in enumerate(lines):
            if pat.search(ln):
                return lines[:i] + [pat.sub(r"range(len(\1) + 1)", ln, count=1)] + lines[
                    i + 1 :
                ], "include the last page in pagination"
        return None
    pat = re.compile(r"^(\s*for\b.*?\b\w+\s*)<(\s*[\w.()]+)")
    for i, ln in enumerate(lines):
        m = pat.search(_code_part(ln))
        if m and "<=" not in ln and "<<" not in ln:
            return lines[:i] + [ln[: m.end(1)] + "<=" + ln[m.end(1) + 1 :]] + lines[
                i + 1 :
            ], "include the last item in pagination"
    return None


_QUOTED = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""")
_REQ_LIKE = re.compile(
    r"(?i)^\$?(req|request|r|data|record|params|payload|body|msg|message|event|order|call|input|conn)$"
)


def _subst_idents(line: str, mapping: dict[str, str]) -> str:
    """Rename identifiers outside string literals (`request` -> the handler's actual parameter...)."""
    parts = _QUOTED.split(line)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"(\$?\b[A-Za-z_]\w*\b)", lambda m: mapping.get(m.group(1), m.group(1)), parts[i])
    return "".join(parts)


def header_params(header: str, family: str) -> list[tuple[str, str]]:
    """(name, declaration) of the parameters in a function header line."""
    if family == "go":
        m = re.search(r"func\s*(\([^)]*\)\s*)?\w+\s*\(([^)]*)\)", header)
    elif family == "ruby":
        m = re.search(r"def\s+[\w.?!]+\s*\(?([^)]*)\)?", header)
    else:
        m = re.search(r"\(([^()]*(\([^()]*\)[^()]*)*)\)", header)
    if not m:
        return []
    inner = m.group(2) if family == "go" else m.group(1)
    out = []
    for raw in (x.strip() for x in inner.split(",")):
        if not raw:
            continue
        decl = raw.split("=")[0].strip()
        if family in ("kotlin", "rust", "js", "python", "elixir") and ":" in decl:
            name = decl.split(":")[0].strip()
        elif family == "go":
            name = decl.split()[0] if decl.split() else decl
        else:
            toks = re.findall(r"\$?[A-Za-z_]\w*", decl)
            name = toks[-1] if toks else decl
        name = name.lstrip("&*").replace("mut ", "").strip()
        if name in ("self", "&self", "this", "cls"):
            continue
        out.append((name, decl))
    return out


def _go_return(header: str) -> str | None:
    if re.search(r",\s*error\s*\)\s*\{\s*$", header):
        return "nil, "
    if re.search(r"\)\s*error\s*\{\s*$", header):
        return ""
    return None


def _bindings(header: str, family: str) -> dict[str, str]:
    params = header_params(header, family)
    names = [n for n, _ in params]
    req = next((n for n in names if _REQ_LIKE.match(n)), names[0] if names else None)
    b: dict[str, str] = {}
    if req:
        for ident in ("request", "req", "record", "params", "$request"):
            b[ident] = req
    if family == "go":
        ctx = next((n for n, d in params if "context.Context" in d), None)
        b["ctx"] = ctx or ("r.Context()" if "*http.Request" in header else "context.Background()")
    elif family in ("python", "cpp"):
        ctx = next((n for n in names if n in ("context", "ctx")), None)
        if ctx:
            b["context"] = ctx
    return b


def code_change(
    mechanism: str, path: str, excerpt: str, family: str, pick: int, downstream: str = ""
) -> CodeChange:
    """A plausible 1-3 line change of `excerpt` producing `mechanism`; `pick` selects among variants."""
    lines = excerpt.rstrip("\n").split("\n")
    mod = None
    if mechanism == "code_error" and pick % 3 == 0:
        mod = _off_by_one(lines, family)
    elif mechanism == "code_retry_storm":
        mod = _retarget_retries(lines)
    if mod is not None:
        new, msg = mod
        return CodeChange(msg, unified_diff(path, lines, new))
    variants = CODE_SNIPPETS[mechanism].get(family) or CODE_SNIPPETS[mechanism]["js"]
    style = STYLE_SNIPPETS.get((mechanism, family))
    if style and style[0] in excerpt:
        variants = style[1]
    points = insertion_points(lines, family)
    if family == "go" and mechanism == "code_error":
        usable = [i for i in points if _go_return(lines[i]) is not None or "http.ResponseWriter" in lines[i]]
        points = usable or points
    if family == "python" and mechanism == "code_error":
        with_ctx = [i for i in points if "context" in lines[i]]
        if with_ctx:
            points = with_ctx
        else:
            variants = variants[1:] or variants
    reqlike = [i for i in points if any(_REQ_LIKE.match(n) for n, _ in header_params(lines[i], family))]
    points = reqlike or points
    message, snippet = variants[pick % len(variants)]
    unit = _indent_unit(lines, family)
    if points:
        at = points[(pick // len(variants)) % len(points)]
        header = (
            lines[at] if not (family in ("csharp", "php") and lines[at].strip() == "{") else lines[at - 1]
        )
        binds = _bindings(header, family)
        if family == "go" and mechanism == "code_error":
            ret = _go_return(header)
            if ret is None and "http.ResponseWriter" in header:
                snippet = [
                    (0, "if err := validateRequest(r); err != nil {"),
                    (1, "http.Error(w, err.Error(), http.StatusBadRequest); return"),
                    (0, "}"),
                ]
            elif ret == "":
                snippet = [(lvl, text.replace("return nil, ", "return ")) for lvl, text in snippet]
        nxt = lines[at + 1]
        base = (
            _indent_of(nxt)
            if nxt.strip() and len(_indent_of(nxt)) > len(_indent_of(lines[at]))
            else _indent_of(lines[at]) + unit
        )
    else:  # no function header in the excerpt: add after the last statement
        binds = {}
        at = len(lines) - 1
        while at > 0 and (
            not lines[at].strip()
            or lines[at].strip()[0] in "})]"
            or lines[at].lstrip().startswith(("//", "#"))
        ):
            at -= 1
        base = _indent_of(lines[at])
    added = [base + unit * lvl + _subst_idents(text, binds) for lvl, text in snippet]
    new = lines[: at + 1] + added + lines[at + 1 :]
    return CodeChange(
        message.format(dep=downstream or "the downstream service"), unified_diff(path, lines, new)
    )


def has_insertion_point(excerpt: str, family: str) -> bool:
    return bool(insertion_points(excerpt.rstrip("\n").split("\n"), family))


# --------------------------------------------------------------------------------------------------
# config diffs


def env_manifest_path(service: str) -> str:
    return f"kubernetes/{service}.yaml"


def _yaml_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def env_diff(service: str, key: str, old: str, new: str | None) -> str:
    """A diff of the Deployment's env entry; `new=None` removes the variable."""
    path = env_manifest_path(service)
    old_lines = [
        "        env:",
        f"        - name: {key}",
        f"          value: {_yaml_quote(old)}",
    ]
    if new is None:
        new_lines = ["        env:"]
    else:
        new_lines = old_lines[:2] + [f"          value: {_yaml_quote(new)}"]
    return unified_diff(path, old_lines, new_lines)


def configmap_diff(configmap: str, key: str, old: str, new: str) -> str:
    """A diff of a ConfigMap entry; for flagd it is the flag's `defaultVariant`."""
    path = f"kubernetes/{configmap}.yaml"
    if configmap == "flagd-config":
        old_lines = [
            f'        "{key}": {{',
            '          "state": "ENABLED",',
            f'          "defaultVariant": "{old}",',
        ]
        new_lines = old_lines[:2] + [f'          "defaultVariant": "{new}",']
    else:
        old_lines = ["data:", f"  {key}: {_yaml_quote(old)}"]
        new_lines = ["data:", f"  {key}: {_yaml_quote(new)}"]
    return unified_diff(path, old_lines, new_lines)


# --------------------------------------------------------------------------------------------------
# Astronomy Shop feature flags: the cause each flag's effect emulates


@dataclass(frozen=True)
class FlagSpec:
    category: str
    symptom: str  # error | latency | restarts | lag | ready
    target: str | None = None  # service the flag's effect lands on, when not FeatureFlag.service
    extra_variants: tuple[str, ...] = ()
    title: str = ""
    request_type: str | None = None  # preferred request type of the entry probe, when the app has it


FLAG_SPECS: dict[str, FlagSpec] = {
    "productCatalogFailure": FlagSpec(
        "code", "error", "product-catalog", title="product catalog fails for one product"
    ),
    "recommendationCacheFailure": FlagSpec(
        "code", "error", "recommendation", title="recommendation cache path broken"
    ),
    "adManualGc": FlagSpec("code", "latency", "ad", title="ad service triggers full GCs"),
    "adHighCpu": FlagSpec("resource", "latency", "ad", title="ad service burns CPU"),
    "adFailure": FlagSpec("code", "error", "ad", title="ad service fails a share of requests"),
    "kafkaQueueProblems": FlagSpec("load", "lag", "checkout", title="order topic flooded, consumer lags"),
    "cartFailure": FlagSpec("config", "latency", "cart", title="cart store pointed at an unreachable host"),
    "paymentFailure": FlagSpec("code", "error", "payment", ("50%", "25%"), title="payment charge fails"),
    "paymentUnreachable": FlagSpec(
        "config", "error", "checkout", title="checkout dials a bad payment address"
    ),
    "loadGeneratorFloodHomepage": FlagSpec(
        "load", "latency", None, title="home page flooded by the load generator", request_type="index"
    ),
    "imageSlowLoad": FlagSpec(
        "network", "latency", "image-provider", ("5sec",), title="product images load slowly"
    ),
    "emailMemoryLeak": FlagSpec("code", "restarts", "email", ("100x",), title="email service leaks memory"),
    "failedReadinessProbe": FlagSpec(
        "deployment", "ready", "cart", title="cart health check reports not serving"
    ),
    "llmInaccurateResponse": FlagSpec(
        "code", "error", "llm", title="LLM returns inaccurate review summaries"
    ),
    "llmRateLimitError": FlagSpec(
        "dependency", "error", "product-reviews", title="LLM rate-limits the review assistant"
    ),
    "intlShippingSlowdown": FlagSpec(
        "code", "latency", "shipping", ("5sec",), title="international shipping orders slow"
    ),
    "loadGeneratorTraffic": FlagSpec("load", "latency", None, title="load generator traffic paused"),
    "loadGeneratorVUs": FlagSpec(
        "load", "latency", None, ("25",), title="load generator virtual users raised"
    ),
}


def flag_spec(name: str, effect: str) -> FlagSpec:
    """The spec of a known flag, or one inferred from its name and effect text."""
    if name in FLAG_SPECS:
        return FLAG_SPECS[name]
    text = f"{name} {effect}".lower()
    if "unreachable" in text or "address" in text or "badhost" in text:
        return FlagSpec("config", "error")
    if "cpu" in text:
        return FlagSpec("resource", "latency")
    if "leak" in text or "memory" in text or "oom" in text:
        return FlagSpec("code", "restarts")
    if "kafka" in text or "queue" in text:
        return FlagSpec("load", "lag")
    if "load" in text or "flood" in text or "traffic" in text:
        return FlagSpec("load", "latency")
    if "readiness" in text or "probe" in text:
        return FlagSpec("deployment", "ready")
    if "slow" in text or "delay" in text or "latency" in text:
        return FlagSpec("code", "latency")
    return FlagSpec("code", "error")
