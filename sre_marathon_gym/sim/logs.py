"""Application logs synthesised on query from a compact per-sample "log context".

Why: materialising log lines every tick would dominate the simulator's cost, and almost none are
ever read. Instead `LogContextRecorder.record` keeps, per 15 s sample, a few float32 numbers per
service / edge / request type (counts, failure shares and their components, latencies) plus
symptom bitmasks and a small shared "context" object that only changes when the cluster or the
effects change (running pods, the symptom details such as an address that does not resolve).
`search_logs` renders lines from per-language templates with a random stream derived from
(seed, service, sample), so the same query always returns the same lines, at a cost paid only
when an agent reads logs.

Logs show symptoms only: what a process would print (exceptions naming the call that failed,
flag strings of the OpenTelemetry demo, OOM and probe failures), never fault ids or the
artifact a fault changed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .. import logquery
from ..clock import METRIC_STEP_S
from ..errors import UnknownNameError
from .cluster import POD_MUTATIONS
from .effects import FLAG_BEHAVIOUR, resolve_variant
from .traces import (
    BAD_VALUE,
    BLOCKED,
    DEP_UNAVAIL,
    DNS,
    F_EDGE,
    F_OK,
    F_OWN,
    FLAG,
    GRPC_CODE,
    HTTP_STATUS,
    OWN_APP,
    REFUSED,
    RESET,
    SATURATED,
    TIMEOUT,
    UPSTREAM,
    build_trees,
    encode_trace_id,
)

if TYPE_CHECKING:
    from .simulator import Simulator

STEP_S = METRIC_STEP_S
LEVELS = ("INFO", "WARN", "ERROR")
OK_LINES_PER_REQUEST = 0.03  # sampled-down volume of request log lines
MAX_OK_LINES = 6  # per service per 15 s
ERROR_LINES_PER_ERROR = 0.5
MAX_ERROR_LINES = 12
MIN_LOGGED_SHARE = 0.002  # failure shares below this are noise, not symptoms

# per-service symptom bits (`svc_bits`) and per-edge bits (`edge_bits`): what was going on, cheap to scan
B_APP_ERROR, B_BAD_VALUE, B_DEP_UNAVAIL, B_FLAG_ERROR, B_SLOW_CODE, B_CRASH, B_MISSING_ENV, B_MEM_LEAK, B_MEM_HIGH, \
    B_CPU_HOG, B_THROTTLED, B_SATURATED, B_NOT_READY, B_CRASHLOOP, B_OOM, B_RESTARTED, B_NET_DELAY, B_NET_LOSS, \
    B_CONSUMER_SLOW, B_UNREACHABLE, B_RETRY_STORM, B_CACHE_OFF, B_CONSUMER_LAG = (1 << i for i in range(23))
E_TIMEOUT, E_DNS, E_BLOCKED, E_REFUSED, E_UPSTREAM, E_RESET, E_RETRY, E_CACHE_MISS = (1 << i for i in range(8))

FAMILY = {"Go": "go", "Java": "java", "Kotlin": "java", "Nacos": "java", "C#": "dotnet", "JavaScript": "node",
          "TypeScript": "node", "Python": "python", "C++": "cpp", "Rust": "rust", "Ruby": "ruby", "PHP": "php",
          "Elixir": "elixir", "Envoy": "envoy", "nginx": "nginx", "Redis": "redis", "Valkey": "redis",
          "PostgreSQL": "postgres", "MySQL": "mysql", "Kafka": "kafka", "RabbitMQ": "rabbitmq"}
NATIVE_LEVEL = {"dotnet": {"INFO": "Information", "WARN": "Warning", "ERROR": "Error"},
                "python": {"INFO": "INFO", "WARN": "WARNING", "ERROR": "ERROR"},
                "node": {"INFO": "info", "WARN": "warn", "ERROR": "error"}}


@dataclass(frozen=True)
class LogRecord:
    timestamp: float  # simulated seconds
    service: str
    pod: str
    level: str  # INFO | WARN | ERROR
    message: str
    trace_id: str | None = None
    attributes: dict = field(default_factory=dict)


# ====================================================================== templates
# Fields: {dst} callee, {addr} callee host:port, {host} address dialled, {port}, {tms}/{ts} timeout,
# {detail} callee's error text, {code} gRPC code, {status} HTTP status, {op} operation, {path} route,
# {ms} duration, plus generated ones ({uid}, {pid}, {n}, {txn}, {ip}, {rid}, ...).
CLIENT_ERR: dict[str, dict[int, str]] = {
    "go": {TIMEOUT: "rpc error: code = DeadlineExceeded desc = context deadline exceeded calling {dst}",
           REFUSED: 'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp {addr}: connect: connection refused"',
           DNS: 'rpc error: code = Unavailable desc = name resolver error: dial tcp: lookup {hostname} on 10.96.0.10:53: no such host',
           BLOCKED: "rpc error: code = DeadlineExceeded desc = dial tcp {addr}: i/o timeout",
           RESET: "rpc error: code = Unavailable desc = error reading from server: read tcp 10.244.{n}.{n2}:{eport}->{addr}: read: connection reset by peer",
           UPSTREAM: "rpc error: code = {code} desc = {detail}"},
    "java": {TIMEOUT: 'org.springframework.web.client.ResourceAccessException: I/O error on {verb} request for "http://{addr}{path}": Read timed out',
             REFUSED: 'org.springframework.web.client.ResourceAccessException: I/O error on {verb} request for "http://{addr}{path}": Connection refused (Connection refused)',
             DNS: 'org.springframework.web.client.ResourceAccessException: I/O error on {verb} request for "http://{host}{path}": {hostname}; nested exception is java.net.UnknownHostException: {hostname}',
             BLOCKED: 'org.springframework.web.client.ResourceAccessException: I/O error on {verb} request for "http://{addr}{path}": connect timed out',
             RESET: "java.net.SocketException: Connection reset (calling {dst} at {addr})",
             UPSTREAM: 'org.springframework.web.client.HttpServerErrorException$InternalServerError: {status} : [{{"status":{status},"error":"{detail}","path":"{path}"}}]'},
    "dotnet": {TIMEOUT: 'Grpc.Core.RpcException: Status(StatusCode="DeadlineExceeded", Detail="Deadline Exceeded") calling {dst}',
               REFUSED: 'Grpc.Core.RpcException: Status(StatusCode="Unavailable", Detail="Error connecting to subchannel.", DebugException="System.Net.Sockets.SocketException: Connection refused ({addr})")',
               DNS: 'Grpc.Core.RpcException: Status(StatusCode="Unavailable", Detail="Error connecting to subchannel.", DebugException="System.Net.Sockets.SocketException: Name or service not known ({host})")',
               BLOCKED: 'Grpc.Core.RpcException: Status(StatusCode="DeadlineExceeded", Detail="Deadline Exceeded") connecting to {addr}',
               RESET: 'Grpc.Core.RpcException: Status(StatusCode="Unavailable", Detail="Error starting gRPC call. HttpRequestException: An error occurred while sending the request. IOException: Connection reset by peer ({addr})")',
               UPSTREAM: 'Grpc.Core.RpcException: Status(StatusCode="{code}", Detail="{detail}") calling {dst}'},
    "node": {TIMEOUT: "Error: 4 DEADLINE_EXCEEDED: Deadline exceeded after {ts}s calling {dst}",
             REFUSED: "Error: 14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED {addr}",
             DNS: "Error: 14 UNAVAILABLE: Name resolution failed for target dns:{host}: getaddrinfo ENOTFOUND {hostname}",
             BLOCKED: "Error: 4 DEADLINE_EXCEEDED: Deadline exceeded: connect ETIMEDOUT {addr}",
             RESET: "Error: 14 UNAVAILABLE: read ECONNRESET (calling {dst} at {addr})",
             UPSTREAM: "Error: {codenum} {CODE}: {detail}"},
    "python": {TIMEOUT: '<_InactiveRpcError of RPC that terminated with: status = StatusCode.DEADLINE_EXCEEDED details = "Deadline Exceeded" calling {dst}>',
               REFUSED: '<_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE details = "failed to connect to all addresses; last error: UNKNOWN: ipv4:{addr}: Failed to connect to remote host: Connection refused">',
               DNS: '<_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE details = "DNS resolution failed for {host}: C-ares status is not ARES_SUCCESS qtype=A name={hostname}: Domain name not found">',
               BLOCKED: '<_InactiveRpcError of RPC that terminated with: status = StatusCode.DEADLINE_EXCEEDED details = "Deadline Exceeded" connecting to {addr}>',
               RESET: '<_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE details = "Socket closed" calling {dst}>',
               UPSTREAM: '<_InactiveRpcError of RPC that terminated with: status = StatusCode.{CODE} details = "{detail}" calling {dst}>'},
    "cpp": {TIMEOUT: "RPC to {dst} failed: Deadline Exceeded", REFUSED: "RPC to {dst} failed: failed to connect to all addresses ({addr}): Connection refused",
            DNS: "RPC to {dst} failed: DNS resolution failed for {host}", BLOCKED: "RPC to {dst} failed: Deadline Exceeded (connect {addr})",
            RESET: "RPC to {dst} failed: Socket closed", UPSTREAM: "RPC to {dst} failed: {detail}"},
    "rust": {TIMEOUT: 'error sending request for url (http://{addr}{path}): operation timed out',
             REFUSED: 'error sending request for url (http://{addr}{path}): error trying to connect: tcp connect error: Connection refused (os error 111)',
             DNS: 'error sending request for url (http://{host}{path}): error trying to connect: dns error: failed to lookup address information: Name or service not known',
             BLOCKED: 'error sending request for url (http://{addr}{path}): error trying to connect: tcp connect error: Connection timed out (os error 110)',
             RESET: 'error sending request for url (http://{addr}{path}): connection error: Connection reset by peer (os error 104)',
             UPSTREAM: 'HTTP status server error ({status} Internal Server Error) for url (http://{addr}{path}): {detail}'},
    "ruby": {TIMEOUT: "Net::ReadTimeout with #<TCPSocket:(closed)> calling {dst}", REFUSED: 'Errno::ECONNREFUSED: Failed to open TCP connection to {addr} (Connection refused - connect(2) for "{hostname}" port {port})',
             DNS: "SocketError: Failed to open TCP connection to {host} (getaddrinfo: Name or service not known)", BLOCKED: "Net::OpenTimeout: execution expired connecting to {addr}",
             RESET: "Errno::ECONNRESET: Connection reset by peer calling {dst}", UPSTREAM: "{dst} returned {status}: {detail}"},
    "php": {TIMEOUT: "cURL error 28: Operation timed out after {tms} milliseconds with 0 bytes received (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for http://{addr}{path}",
            REFUSED: "cURL error 7: Failed to connect to {hostname} port {port}: Connection refused for http://{addr}{path}",
            DNS: "cURL error 6: Could not resolve host: {hostname} for http://{host}{path}", BLOCKED: "cURL error 28: Connection timed out after {tms} milliseconds for http://{addr}{path}",
            RESET: "cURL error 56: Recv failure: Connection reset by peer for http://{addr}{path}", UPSTREAM: "Server error: `{verb} http://{addr}{path}` resulted in a `{status} Internal Server Error` response: {detail}"},
    "elixir": {TIMEOUT: "** (Mint.TransportError) timeout calling {dst}", REFUSED: "** (Mint.TransportError) connection refused ({addr})",
               DNS: "** (Mint.TransportError) non-existing domain ({hostname})", BLOCKED: "** (Mint.TransportError) timeout connecting to {addr}",
               RESET: "** (Mint.TransportError) socket closed ({addr})", UPSTREAM: "request to {dst} failed with {status}: {detail}"},
}
# datastore / broker clients: the protocol decides the wording more than the language
PROTO_ERR: dict[str, dict[int, str]] = {
    "redis": {TIMEOUT: "Timeout performing {rcmd} (1000ms), inst: 1, qu: 0, qs: 12, aw: False, rs: ReadAsync, ws: Idle, in: 0, serverEndpoint: {addr}, mc: 1/1/0, mgr: 10 of 10 available, clientName: {pod}",
              REFUSED: "connection refused: {addr} (It was not possible to connect to the redis server(s). UnableToConnect on {addr}/Interactive)",
              DNS: "It was not possible to connect to the redis server(s). UnableToResolvePhysicalConnection on {host}/Interactive: No such host is known",
              BLOCKED: "It was not possible to connect to the redis server(s). ConnectTimeout on {addr}/Interactive",
              RESET: "No connection is active/available to service this operation: {rcmd} cart:{uid}; SocketFailure on {addr}/Interactive, Connection reset by peer",
              UPSTREAM: "{detail} (redis {addr})"},
    "sql": {TIMEOUT: "query on {dst} failed: canceling statement due to statement timeout ({tms} ms)",
            REFUSED: "dial tcp {addr}: connect: connection refused",
            DNS: "dial tcp: lookup {hostname} on 10.96.0.10:53: no such host",
            BLOCKED: "dial tcp {addr}: i/o timeout", RESET: "read tcp 10.244.{n}.{n2}:{eport}->{addr}: read: connection reset by peer",
            UPSTREAM: "{detail}"},
    "kafka": {TIMEOUT: "kafka: Failed to deliver 1 messages: kafka server: Request exceeded the user-specified time limit in the request ({dst} {addr})",
              REFUSED: "kafka: client has run out of available brokers to talk to: dial tcp {addr}: connect: connection refused",
              DNS: "kafka: client has run out of available brokers to talk to: dial tcp: lookup {hostname}: no such host",
              BLOCKED: "kafka: client has run out of available brokers to talk to: dial tcp {addr}: i/o timeout",
              RESET: "kafka: broker {addr} disconnected: write: connection reset by peer", UPSTREAM: "kafka server: {detail}"},
    "amqp": {TIMEOUT: "org.springframework.amqp.AmqpTimeoutException: java.util.concurrent.TimeoutException publishing to {addr}",
             REFUSED: "org.springframework.amqp.AmqpConnectException: java.net.ConnectException: Connection refused ({addr})",
             DNS: "org.springframework.amqp.AmqpIOException: java.net.UnknownHostException: {hostname}",
             BLOCKED: "org.springframework.amqp.AmqpConnectException: java.net.SocketTimeoutException: connect timed out ({addr})",
             RESET: "org.springframework.amqp.AmqpIOException: java.net.SocketException: Connection reset ({addr})", UPSTREAM: "{detail}"},
}
CLIENT_PREFIX = {"go": "failed to {op}: ", "java": "[{op}] call failed: ", "dotnet": "{op} failed: ", "node": "{op} failed: ",
                 "python": "{op} failed: ", "cpp": "", "rust": "", "ruby": "", "php": "", "elixir": ""}

OWN_APP_TEXT = {"go": "internal error: runtime error: index out of range [3] with length 3",
                "java": "java.lang.NullPointerException: Cannot invoke \"java.util.List.size()\" because \"items\" is null",
                "dotnet": "System.NullReferenceException: Object reference not set to an instance of an object.",
                "node": "TypeError: Cannot read properties of undefined (reading 'units')",
                "python": "AttributeError: 'NoneType' object has no attribute 'id'",
                "cpp": "std::out_of_range: map::at", "rust": "called `Option::unwrap()` on a `None` value",
                "ruby": "NoMethodError: undefined method `[]' for nil:NilClass", "php": "TypeError: Unsupported operand types: string * int",
                "elixir": "** (FunctionClauseError) no function clause matching", "nginx": "upstream prematurely closed connection",
                "envoy": "upstream reset", "redis": "ERR internal error", "postgres": "ERROR: could not read block 42 in file \"base/16384/2619\": read only 0 of 8192 bytes",
                "mysql": "ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction",
                "kafka": "NOT_ENOUGH_REPLICAS: Messages are rejected since there are fewer in-sync replicas than required",
                "rabbitmq": "channel error: PRECONDITION_FAILED - unknown delivery tag"}
BAD_VALUE_TEXT = {"go": 'strconv.ParseInt: parsing "{value}": invalid syntax', "java": 'java.lang.NumberFormatException: For input string: "{value}"',
                  "dotnet": "System.FormatException: The input string '{value}' was not in a correct format.",
                  "node": 'RangeError: Invalid value "{value}"', "python": "ValueError: invalid literal for int() with base 10: '{value}'",
                  "_": 'invalid value "{value}"'}
UNAVAIL_TEXT = {"redis": "LOADING Redis is loading the dataset in memory", "postgres": "FATAL: the database system is in recovery mode",
                "mysql": "ERROR 1040 (HY000): Too many connections", "kafka": "LEADER_NOT_AVAILABLE: There is no leader for this topic-partition as we are in the middle of a leadership election",
                "rabbitmq": "connection.close: CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'",
                "_": "service temporarily unavailable: backend returned 503"}
SATURATED_TEXT = {"java": "java.util.concurrent.RejectedExecutionException: Thread pool is EXHAUSTED! (active: {n}, queue: 100)",
                  "go": "resource exhausted: too many in-flight requests ({n})", "dotnet": "System.InvalidOperationException: request queue limit reached ({n})",
                  "node": "Error: 8 RESOURCE_EXHAUSTED: server overloaded ({n} pending)", "python": "grpc: RESOURCE_EXHAUSTED: too many concurrent RPCs ({n})",
                  "nginx": "worker_connections are not enough", "envoy": "upstream overflow", "postgres": "FATAL: sorry, too many clients already",
                  "mysql": "ERROR 1040 (HY000): Too many connections", "redis": "ERR max number of clients reached",
                  "_": "request rejected: server busy ({n} queued)"}
SLOW_TEXT = {"go": "slow request: {op} took {ms}ms", "java": "[{op}] Slow response: {ms} ms", "dotnet": "{op} took {ms} ms, longer than expected",
             "node": "request {op} took {ms}ms", "python": "{op} slow: {ms} ms", "postgres": "LOG: duration: {ms} ms  statement: SELECT * FROM products WHERE id = $1",
             "mysql": "# Query_time: {sec}  Lock_time: 0.000012 Rows_sent: 1  Rows_examined: 4096", "redis": "slowlog: {rcmd} took {us} microseconds",
             "_": "{op} completed in {ms} ms (slow)"}
STARTUP_TEXT = {"go": 'starting to listen on tcp: "[::]:{port}"', "java": "Started Application in {sec} seconds (process running for {sec2})",
                "dotnet": "Now listening on: http://[::]:{port}", "node": "gRPC server started on 0.0.0.0:{port}",
                "python": "server started, listening on port {port}", "cpp": "Server listening on port: {port}", "rust": "listening on 0.0.0.0:{port}",
                "ruby": "Listening on http://0.0.0.0:{port}", "php": "Server running at http://0.0.0.0:{port}",
                "elixir": "Running Phoenix endpoint with cowboy using http://0.0.0.0:{port}", "envoy": "starting main dispatch loop",
                "nginx": "start worker processes", "redis": "Ready to accept connections tcp", "postgres": "LOG: database system is ready to accept connections",
                "mysql": "ready for connections. Version: '8.0.36'  socket: '/var/run/mysqld/mysqld.sock'  port: {port}",
                "kafka": "[KafkaServer id=1] started (kafka.server.KafkaServer)", "rabbitmq": "Server startup complete; 4 plugins started."}
OOM_TEXT = {"go": "fatal error: runtime: out of memory", "java": "java.lang.OutOfMemoryError: Java heap space",
            "dotnet": "Unhandled exception. System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.",
            "node": "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "python": "MemoryError",
            "ruby": "failed to allocate memory (NoMemoryError)", "php": "PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted",
            "redis": "Can't save in background: fork: Cannot allocate memory", "_": "out of memory: allocation failed"}
MEM_HIGH_TEXT = {"java": "GC overhead: pause Full GC (Allocation Failure) {n2}M->{n2}M, {ms}ms", "go": "memory usage {pct}% of limit, GC running continuously",
                 "dotnet": "GC heap size {pct}% of container limit", "node": "<--- Last few GCs ---> Mark-Compact (reduce) {ms} ms: average mu = 0.12",
                 "python": "memory usage high: rss {pct}% of limit", "_": "memory usage {pct}% of limit"}
CRASH_TEXT = {"go": "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x8a3c2f]",
              "java": 'Exception in thread "main" java.lang.IllegalStateException: Failed to execute CommandLineRunner',
              "dotnet": "Unhandled exception. System.InvalidOperationException: Sequence contains no elements",
              "node": "TypeError: Cannot read properties of null (reading 'map')\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
              "python": "Traceback (most recent call last):\n  File \"/app/server.py\", line 88, in <module>\nTypeError: 'NoneType' object is not subscriptable",
              "_": "process exited after an unhandled error (exit code 1)"}
MISSING_ENV_TEXT = {"go": "panic: environment variable \"{key}\" not set", "java": "java.lang.IllegalArgumentException: Could not resolve placeholder '{key}' in value \"${{{key}}}\"",
                    "dotnet": "System.ArgumentNullException: Value cannot be null. (Parameter '{key}')",
                    "node": "Error: environment variable {key} is required", "python": "KeyError: '{key}'", "_": "missing required environment variable {key}"}
READINESS_TEXT = {"go": 'http: "GET {path}" 404 page not found', "java": "No mapping for GET {path}", "dotnet": "Request finished HTTP/1.1 GET http://{ip}:{port}{path} - 404 0 - {ms}ms",
                  "node": "GET {path} 404", "python": '"GET {path} HTTP/1.1" 404 -', "nginx": '{ip} - - [{clf}] "GET {path} HTTP/1.1" 404 153 "-" "kube-probe/1.29"',
                  "_": "GET {path} -> 404 Not Found"}
REQUEST_OK = {"go": ["{op} request served in {ms}ms", "request complete: {op}"], "java": ["[{op}][Request handled][{ms} ms]", "{op}: success"],
              "dotnet": ["Request finished {op} - 200 - {ms}ms"], "node": ["{op} handled in {ms}ms"], "python": ["{op} handled in {ms} ms"],
              "cpp": ["{op} successful"], "rust": ["{op} finished in {ms}ms"], "ruby": ["Completed {op} in {ms}ms"], "php": ["{op} completed"],
              "elixir": ["Sent 200 in {ms}ms"], "redis": [], "postgres": [], "mysql": [], "kafka": [], "rabbitmq": [], "_": ["{op} ok"]}
RETRY_TEXT = "retrying call to {dst} (attempt {attempt}): {detail}"
CACHE_MISS_TEXT = "cache miss for {pid}, fetching from {dst}"
LAG_TEXT = {"java": "Consumer group {svc} is lagging: {lag} records behind on orders-0", "_": "consumer lag {lag} records on orders"}

# service-specific lines seen in the real applications (opentelemetry-demo 2.2, online-boutique)
SERVICE_INFO: dict[tuple[str, str], list[str]] = {
    ("checkout", "go"): ["[PlaceOrder] user_id={uid} user_currency={cur}", "payment went through (transaction_id: {txn})", "order placed",
                         'order confirmation email sent to "someone@example.com"', "sending to postProcessor",
                         "Successful to write message. offset: {n3}, duration: {ms}ms"],
    ("product-catalog", "go"): ["Product Found"],
    ("cart", "dotnet"): ["GetCartAsync called with userId={uid}", "AddItemAsync called with userId={uid}, productId={pid}, quantity={n}",
                         "EmptyCartAsync called with userId={uid}"],
    ("payment", "node"): ["Charge request received.", "Transaction complete."],
    ("currency", "cpp"): ["Convert conversion successful", "GetSupportedCurrencies successful"],
    ("quote", "php"): ["Calculated quote"],
    ("shipping", "rust"): ["Requesting quote", "Sending Quote", "Tracking ID Created"],
    ("email", "ruby"): ["Order confirmation email sent"],
    ("recommendation", "python"): ["Receive ListRecommendations for product ids:['{pid}', '{pid2}']"],
    ("product-reviews", "python"): ["Receive GetProductReviews for product id:{pid}", "Receive GetAverageProductReviewScore for product id:{pid}"],
    ("ad", "java"): ["Targeted ad request received for [telescopes]", "Non-targeted ad request received, preparing random response."],
    ("accounting", "dotnet"): ["Order details: {{\"OrderId\": \"{uid}\", \"ShippingTrackingId\": \"{txn}\"}}."],
    ("fraud-detection", "java"): ["Consumed record with orderId: {uid}, and updated total count to: {n3}"],
    ("frontend", "go"): ["request complete", "request started"],
    ("checkoutservice", "go"): ["[PlaceOrder] user_id=\"{uid}\" user_currency=\"{cur}\"", "payment went through (transaction_id: {txn})",
                                'order confirmation email sent to "someone@example.com"'],
    ("cartservice", "dotnet"): ["GetCartAsync called with userId={uid}", "AddItemAsync called with userId={uid}, productId={pid}, quantity={n}"],
    ("currencyservice", "node"): ["conversion request successful", "Getting supported currencies..."],
    ("paymentservice", "node"): ["Transaction processed: visa ending 0454 Amount: {cur}{n}.{n2}"],
    ("emailservice", "python"): ["A request to send order confirmation email to someone@example.com has been received."],
    ("recommendationservice", "python"): ["[Recv ListRecommendations] product_ids=['{pid}', '{pid2}']"],
    ("shippingservice", "go"): ["[GetQuote] received request", "[GetQuote] completed request", "[ShipOrder] received request"],
    ("adservice", "java"): ["received ad request (context_words=[clothing, accessories])"],
}
# Astronomy Shop flags: (service whose process logs, level, message) while the flag is on; and
# (gRPC code, error text) callers see when the flag makes the service fail (reference §4.3)
FLAG_LINES: dict[str, list[tuple[str, str, str]]] = {
    "adManualGc": [("ad", "WARN", "Feature Flag adManualGc enabled, performing a manual gc now"),
                   ("ad", "INFO", "Triggering a manual garbage collection, next one in {n} seconds."),
                   ("ad", "INFO", "The artificially triggered GCs took: {ms} ms")],
    "adHighCpu": [("ad", "INFO", "High CPU-Load problempattern enabled")],
    "kafkaQueueProblems": [("checkout", "INFO", "Warning: FeatureFlag 'kafkaQueueProblems' is activated, overloading queue now."),
                           ("checkout", "INFO", "Done with #{n3} messages for overload simulation."),
                           ("fraud-detection", "INFO", "FeatureFlag 'kafkaQueueProblems' is enabled, sleeping 1 second")],
    "recommendationCacheFailure": [("recommendation", "INFO", "get_product_list: cache miss"),
                                   ("recommendation", "INFO", "get_product_list: cache hit")],
    "llmRateLimitError": [("product-reviews", "INFO", "llmRateLimitError feature flag: True"),
                          ("product-reviews", "INFO", "Invoking mock LLM with model: astronomy-llm-rate-limit")],
    "llmInaccurateResponse": [("product-reviews", "INFO", "Returning an inaccurate response for product_id: {pid}")],
}
FLAG_ERROR: dict[str, tuple[str, str, str | None]] = {  # flag -> (gRPC code, text callers see, level the service logs it at)
    "productCatalogFailure": ("Internal", "Error: Product Catalog Fail Feature Flag Enabled", None),
    "paymentFailure": ("Unknown", "Payment request failed. Invalid token. app.loyalty.level=gold", "WARN"),
    "cartFailure": ("FailedPrecondition", "Can't access cart storage. StackExchange.Redis.RedisConnectionException: It was not possible to connect to the redis server(s). UnableToConnect on badhost:1234/Interactive", "ERROR"),
    "adFailure": ("Unavailable", "GetAds Failed with status Status{{code=UNAVAILABLE, description=null, cause=null}}", "WARN"),
    "llmRateLimitError": ("Unknown", "Caught Exception: Error code: 429 - {{'error': {{'message': 'Rate limit exceeded', 'type': 'rate_limit_error'}}}}", "ERROR"),
    "llmInaccurateResponse": ("OK", "Returning an inaccurate response for product_id: {pid}", None),
}
FLAG_CALLER_PREFIX = {"productCatalogFailure": 'failed to get product #"OLJCESPC7Z": ', "paymentFailure": "failed to charge card: could not charge the card: "}
FLAG_ADDRESS = {"paymentUnreachable": "badAddress"}
CODE_NUM = {"OK": 0, "Canceled": 1, "Unknown": 2, "InvalidArgument": 3, "DeadlineExceeded": 4, "NotFound": 5, "ResourceExhausted": 8,
            "FailedPrecondition": 9, "Internal": 13, "Unavailable": 14}
PRODUCT_IDS = ("OLJCESPC7Z", "66VCHSJNUP", "1YMWWN1N4O", "L9ECAV7KIM", "2ZYFJ3GM2N", "0PUK6V6EV0", "LS4PSXUNUM", "9SIQT8TOJO",
               "6E92ZMYYFZ", "HQTGWGPNH4")
CURRENCIES = ("USD", "EUR", "CAD", "JPY", "GBP", "TRY")
SYMPTOM_BIT_NAMES = {B_APP_ERROR: "application_error", B_BAD_VALUE: "invalid_value", B_DEP_UNAVAIL: "unavailable",
                     B_FLAG_ERROR: "flag_error", B_SLOW_CODE: "slow", B_CRASH: "crash", B_MISSING_ENV: "missing_env",
                     B_MEM_LEAK: "memory_growth", B_MEM_HIGH: "memory_high", B_CPU_HOG: "cpu_high", B_THROTTLED: "cpu_throttled",
                     B_SATURATED: "saturated", B_NOT_READY: "readiness_failing", B_CRASHLOOP: "crashloop", B_OOM: "oomkilled",
                     B_RESTARTED: "restarted", B_NET_DELAY: "network_delay", B_NET_LOSS: "packet_loss", B_CONSUMER_SLOW: "consumer_slow",
                     B_UNREACHABLE: "no_endpoints", B_RETRY_STORM: "retrying", B_CACHE_OFF: "cache_miss", B_CONSUMER_LAG: "consumer_lag"}


GRPC_METHODS = {  # service -> the rpc its spans are named after (proto packages of both demos)
    "product-catalog": "oteldemo.ProductCatalogService/GetProduct", "cart": "oteldemo.CartService/GetCart",
    "checkout": "oteldemo.CheckoutService/PlaceOrder", "currency": "oteldemo.CurrencyService/Convert",
    "payment": "oteldemo.PaymentService/Charge", "recommendation": "oteldemo.RecommendationService/ListRecommendations",
    "ad": "oteldemo.AdService/GetAds", "product-reviews": "oteldemo.ProductReviewService/GetProductReviews",
    "shipping": "/get-quote", "quote": "POST /getquote", "email": "POST /send_order_confirmation",
    "productcatalogservice": "hipstershop.ProductCatalogService/GetProduct", "cartservice": "hipstershop.CartService/GetCart",
    "checkoutservice": "hipstershop.CheckoutService/PlaceOrder", "currencyservice": "hipstershop.CurrencyService/Convert",
    "paymentservice": "hipstershop.PaymentService/Charge", "recommendationservice": "hipstershop.RecommendationService/ListRecommendations",
    "adservice": "hipstershop.AdService/GetAds", "shippingservice": "hipstershop.ShippingService/GetQuote",
    "emailservice": "hipstershop.EmailService/SendOrderConfirmation", "flagd": "flagd.evaluation.v1.Service/ResolveBoolean",
}


def _pick(table: dict, family: str):
    return table.get(family, table.get("_"))


class _Draw:
    """A block of uniforms from one seeded Generator, consumed as python floats (cheaper than rng calls)."""

    def __init__(self, rng: np.random.Generator, n: int = 256):
        self.rng = rng
        self.u = rng.random(n).tolist()
        self.i = 0

    def __call__(self) -> float:
        if self.i >= len(self.u):
            self.u = self.rng.random(256).tolist()
            self.i = 0
        self.i += 1
        return self.u[self.i - 1]

    def choice(self, seq):
        return seq[min(int(self() * len(seq)), len(seq) - 1)]

    def weighted(self, weights: list[float]) -> int:
        total = sum(weights)
        x = self() * total
        for i, w in enumerate(weights):
            x -= w
            if x < 0:
                return i
        return len(weights) - 1

    def hexs(self, n: int) -> str:
        return "".join("0123456789abcdef"[int(self() * 16) % 16] for _ in range(n))


class _Fill(dict):
    """format_map values generated on first use from the draw stream."""

    def __init__(self, draw: _Draw, **kw):
        super().__init__(**kw)
        self.d = draw

    def __missing__(self, key: str) -> str:
        d = self.d
        gen = {"uid": lambda: f"{d.hexs(8)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(12)}",
               "pid": lambda: d.choice(PRODUCT_IDS), "pid2": lambda: d.choice(PRODUCT_IDS), "cur": lambda: d.choice(CURRENCIES),
               "txn": lambda: f"{d.hexs(8)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(12)}", "n": lambda: str(1 + int(d() * 9)),
               "n2": lambda: str(2 + int(d() * 250)), "n3": lambda: str(100 + int(d() * 9000)), "eport": lambda: str(32768 + int(d() * 28000)),
               "ip": lambda: f"10.244.{int(d() * 4)}.{2 + int(d() * 250)}", "rid": lambda: f"{d.hexs(8)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(12)}",
               "sec": lambda: f"{3 + d() * 20:.3f}", "sec2": lambda: f"{4 + d() * 20:.3f}", "us": lambda: str(10000 + int(d() * 90000)),
               "rcmd": lambda: d.choice(("HGET", "HMSET", "EXPIRE")), "attempt": lambda: str(1 + int(d() * 2)),
               "pct": lambda: str(85 + int(d() * 14)), "lag": lambda: str(500 + int(d() * 20000)), "ms": lambda: str(1 + int(d() * 50))}
        f = gen.get(key)
        v = f() if f is not None else "-"
        self[key] = v
        return v


def _fill_path(path: str, draw: _Draw) -> str:
    """Concrete request path: route parameters ({id}, {date}, ...) replaced by plausible values."""
    return re.sub(r"\{[^}]*\}", lambda m: draw.choice(PRODUCT_IDS) if "id" in m.group(0).lower() else str(1 + int(draw() * 30)), path)


def entry_route(method: str, endpoint: str) -> tuple[str, str]:
    """`GET+POST /api/products/{id} then POST /api/cart` -> ("POST", "/api/cart"): the request's final call."""
    toks = f"{method} {endpoint}".replace("+", " ").split()
    verb, path = "GET", "/"
    for i, tok in enumerate(toks):
        if tok.startswith("/"):
            path = tok.split("?")[0]
            prev = [t for t in toks[:i] if t.isupper() and t.isalpha()]
            verb = prev[-1] if prev else verb
    return verb, path


# ====================================================================== the recorder
@dataclass
class _Context:
    """Per-service facts that change only with the cluster or the effects (shared by many samples)."""

    ready_pods: tuple[tuple[str, ...], ...]
    live_pods: tuple[tuple[str, ...], ...]  # containers running (ready or not)
    notready_pods: tuple[tuple[str, ...], ...]
    own_sources: tuple[tuple[tuple[int, float, str], ...], ...]  # (cause, weight, flag name or detail)
    bits: np.ndarray  # [S] static symptom bits
    route_kind: np.ndarray  # [E] DNS | BLOCKED | 0
    route_host: dict[int, str]
    missing_env: dict[int, str]
    readiness_path: dict[int, str]
    flags_on: frozenset[str]
    mem_pods: tuple[tuple[str, int], ...]  # pods whose memory can grow or is inflated


class LogContextRecorder:
    """Per-15 s aggregates the log and trace synthesisers read; `record(sim, t)` is the simulator hook."""

    GROW = 256

    def __init__(self, sim: Simulator, step_s: float = STEP_S):
        c = sim.compiled
        self.compiled = c
        self.app = sim.app
        self.app_name = sim.app.app
        self.epoch = sim.epoch  # wall-clock stamps in log bodies (envoy, nginx)
        self.step_s = float(step_s)
        self.services = c.services
        S, E, R = len(c.services), len(c.edge_src), len(c.request_types)
        self.S, self.E, self.R = S, E, R
        state = sim.log_seed.generate_state(4)
        self.entropy = (int(state[0]), int(state[1]))
        self.key = hashlib.blake2b(bytes(np.asarray(state, dtype=np.uint32).tobytes()), digest_size=16).digest()
        svc = {s.name: s for s in sim.app.services}
        self.family = [FAMILY.get(svc[n].language, "go") for n in c.services]
        self.kinds = [svc[n].kind for n in c.services]
        self.ports = [svc[n].port for n in c.services]
        self.background = c.background_rps
        self.retries = c.edge_retries.astype(int)
        self.protocols = [e.protocol for e in sim.app.edges]
        self.addresses = [f"{e.target}:{svc[e.target].port or 8080}" for e in sim.app.edges]
        inbound = {e.target: e.protocol for e in sim.app.edges}
        self.server_op = [self._server_op(n, svc[n].language, inbound.get(n, "http")) for n in c.services]
        self.client_op = [self._client_op(e.target, e.protocol) for e in sim.app.edges]
        self.edge_path = [self._edge_path(e.target) for e in sim.app.edges]
        self.background_op = [f"{n} process" if svc[n].kind == "service" else self.server_op[i] for i, n in enumerate(c.services)]
        self.root_ops = []
        for rt in sim.app.request_types:
            verb, path = entry_route(rt.method, rt.endpoint)
            self.root_ops.append(f"{verb} {path}")
        self.server_attrs = [{"service.name": n, "telemetry.sdk.language": svc[n].language.lower()} for n in c.services]
        self.trees = build_trees(c)
        self.out_edges = [np.nonzero(c.edge_src == s)[0].tolist() for s in range(S)]
        self.readiness_default = {n: (svc[n].readiness_probe.path if svc[n].readiness_probe else None) for n in c.services}
        self.addr_defaults = {(n, cfg.key): cfg.value for n in c.services for cfg in svc[n].config}
        self.flag_index = {f.name: i for i, f in enumerate(sim.app.feature_flags)}
        # growing arrays
        self.n = 0
        cap = self.GROW
        f32 = np.float32
        self.times = np.zeros(cap)
        self._svc = {k: np.zeros((cap, S), dtype=f32) for k in (
            "svc_count", "svc_fail", "own_err", "saturated", "unreachable", "svc_lat", "own_lat", "hop_ms", "inbound_loss",
            "throttled", "added_ms")}
        self._edge = {k: np.zeros((cap, E), dtype=f32) for k in ("edge_rate", "edge_fail", "edge_tshare", "edge_route", "edge_timeout")}
        self._rt = {k: np.zeros((cap, R), dtype=f32) for k in ("rt_rate", "rt_fail", "rt_lat")}
        self.svc_bits = np.zeros((cap, S), dtype=np.uint32)
        self.edge_bits = np.zeros((cap, E), dtype=np.uint8)
        self.ctx_ref = np.zeros(cap, dtype=np.int32)
        self.contexts: list[_Context] = []
        self._ctx_key: object = None
        self.events: dict[int, list[tuple[int, str, str]]] = {}  # position -> (service, pod, reason)
        self._restarts_seen: dict[str, int] = {}
        self._k_index: dict[int, int] = {}
        self._cause_cache: dict[tuple[int, int], tuple[int, int, int, str, str]] = {}
        self._spec_memo_key: object = None
        self._pods_key: tuple | None = None
        self._pod_memo: dict[str, tuple] = {}  # pod -> (key, its part of a context)
        self._crashing: list[int] = []
        self._behaviours_memo: dict[tuple[str, int], tuple[tuple, list]] = {}
        self._readiness_memo: dict[tuple[str, str | None], bool] = {}
        self._expected_memo: tuple | None = None  # see `_expected_part`
        self._bind_arrays()

    # ------------------------------------------------------------ static names
    @staticmethod
    def _camel(name: str) -> str:
        return "".join(p.capitalize() for p in re.split(r"[-_]", name) if p and p not in ("service",))

    def _server_op(self, name: str, language: str, proto: str) -> str:
        camel = self._camel(name)
        if name in GRPC_METHODS and "/" in GRPC_METHODS[name] and not GRPC_METHODS[name].startswith(("/", "POST")):
            full = GRPC_METHODS[name]
            if language == "Python":
                return "/" + full
            if language in ("JavaScript", "TypeScript"):
                return "grpc." + full
            if language == "C#":
                return "POST /" + full
            if language == "C++":
                return full.split(".", 1)[1].replace("Service/", "/")
            if language in ("Rust", "PHP", "Ruby"):
                return full.rsplit("/", 1)[1]
            return full
        if name in GRPC_METHODS:
            return GRPC_METHODS[name]
        if proto == "grpc":
            if language == "Python":
                return f"/oteldemo.{camel}Service/Handle"
            if language in ("JavaScript", "TypeScript"):
                return f"grpc.oteldemo.{camel}Service/Handle"
            if language == "C#":
                return f"POST /oteldemo.{camel}Service/Handle"
            return f"oteldemo.{camel}Service/Handle"
        if proto == "redis":
            return "HGET"
        if proto == "sql":
            return "SELECT"
        if proto in ("kafka", "amqp"):
            return "orders receive"
        return f"POST /api/v1/{name.replace('ts-', '').replace('-', '')}"

    def _client_op(self, target: str, proto: str) -> str:
        if target in GRPC_METHODS and proto == "grpc":
            return GRPC_METHODS[target]
        if proto == "grpc":
            return f"oteldemo.{self._camel(target)}Service/Handle"
        if proto == "redis":
            return "HGET"
        if proto == "sql":
            return "SELECT"
        if proto in ("kafka", "amqp"):
            return "orders publish"
        return "POST"

    @staticmethod
    def _edge_path(target: str) -> str:
        return f"/api/v1/{target.replace('ts-', '').replace('-', '')}"

    # ------------------------------------------------------------ the hook
    def record(self, sim: Simulator, t: float) -> None:
        """Append the sample for time t (call once per 15 s metric sample, after the tick)."""
        res = sim.last
        if res is None:
            return
        k = int(round(t / self.step_s))
        p = self._k_index.get(k)
        if p is None:
            p = self.n
            if p >= len(self.times):
                self._grow()
            self.n += 1
            self._k_index[k] = p
        self.times[p] = k * self.step_s
        if self._cause_cache:
            self._cause_cache = {key: v for key, v in self._cause_cache.items() if key[0] != p}
        arrays = getattr(sim, "_arrays", None) or sim.effects.arrays()
        c = self.compiled
        sv, ed, rt = self._svc, self._edge, self._rt
        dt = self.step_s
        sv["svc_count"][p] = res.svc_rate * dt
        sv["svc_fail"][p] = res.svc_fail
        ctx = self._context(sim)
        sat, hop_ms, static_bits, eb = self._expected_part(res, arrays, ctx)
        sv["saturated"][p] = sat
        sv["unreachable"][p] = res.unreachable
        sv["own_err"][p] = arrays["own_error"]
        sv["svc_lat"][p] = res.svc_latency_ms
        sv["own_lat"][p] = res.own_latency_ms
        sv["inbound_loss"][p] = arrays["inbound_loss"]
        sv["hop_ms"][p] = hop_ms
        sv["throttled"][p] = res.throttled_ratio
        sv["added_ms"][p] = arrays["added_ms"]
        ed["edge_rate"][p] = res.edge_rate
        ed["edge_fail"][p] = res.edge_fail
        ed["edge_tshare"][p] = res.edge_timeout_share
        ed["edge_route"][p] = arrays["edge_fail"]
        ed["edge_timeout"][p] = arrays["edge_timeout_ms"]
        rt["rt_rate"][p] = res.rt_rate
        rt["rt_fail"][p] = res.rt_fail
        rt["rt_lat"][p] = res.rt_latency_ms
        self.ctx_ref[p] = self.contexts.index(ctx) if self.contexts[-1] is not ctx else len(self.contexts) - 1
        # dynamic bits
        bits = static_bits.copy()
        lag = getattr(sim, "kafka_lag", None)
        if lag is not None:
            bits[np.asarray(lag) > 1000] |= B_CONSUMER_LAG
        cl = sim.cluster
        for name, si in ctx.mem_pods:
            pod = cl.pods.get(name)
            if pod is None:
                continue
            limit = cl.spec_of(pod).mem_limit_mi
            if limit and sim.effects.memory_mi(pod, sim.now) > 0.85 * limit:
                bits[si] |= B_MEM_HIGH
        evs = []
        pods_key = (POD_MUTATIONS[0], len(cl.pods))  # no pod written or removed: no restart, same crash loops
        if pods_key != self._pods_key:
            self._pods_key = pods_key
            crashing = []
            for pod in cl.pods.values():
                seen = self._restarts_seen.get(pod.name, 0)
                if pod.restarts > seen:
                    si = c.index[pod.service]
                    reason = pod.last_terminated_reason or "Error"
                    evs.append((si, pod.name, reason))
                    bits[si] |= B_RESTARTED | (B_OOM if reason == "OOMKilled" else 0)
                    self._restarts_seen[pod.name] = pod.restarts
                if pod.waiting_reason == "CrashLoopBackOff":
                    crashing.append(c.index[pod.service])
            self._crashing = crashing
        for si in self._crashing:
            bits[si] |= B_CRASHLOOP
        if evs:
            self.events[p] = evs
        self.svc_bits[p] = bits
        self.edge_bits[p] = eb

    def _expected_part(self, res, arrays: dict, ctx: _Context) -> tuple:
        """(saturation, hop delay, service bits but the pod-driven ones, edge bits) of a sample: a
        function of expected values (shared arrays until the traffic model recomputes them), the
        effect arrays and the context, so computed once per combination of those objects."""
        key = (res.utilization, res.throttled_ratio, res.unreachable, res.svc_fail, res.edge_timeout_share, arrays, ctx)
        hit = self._expected_memo
        if hit is not None and all(a is b for a, b in zip(hit[0], key)):
            return hit[1]
        sat = np.where(res.utilization >= 1.0, 1.0 - 1.0 / np.maximum(res.utilization, 1e-9), 0.0)
        hop_ms = arrays["inbound_delay_ms"] + arrays["inbound_loss"] * 200.0
        bits = ctx.bits.copy()
        bits[res.throttled_ratio > 0.25] |= B_THROTTLED
        bits[sat > 0.01] |= B_SATURATED
        bits[res.unreachable > 0.5] |= B_UNREACHABLE
        bits[arrays["inbound_delay_ms"] > 0] |= B_NET_DELAY
        bits[arrays["inbound_loss"] > 0] |= B_NET_LOSS
        bits[arrays["added_ms"] > 0] |= B_SLOW_CODE
        eb = np.zeros(self.E, dtype=np.uint8)
        dst = self.compiled.edge_dst
        eb[res.edge_timeout_share > 0.01] |= E_TIMEOUT
        eb[(arrays["edge_fail"] > 0) & (ctx.route_kind == DNS)] |= E_DNS
        eb[(arrays["edge_fail"] > 0) & (ctx.route_kind == BLOCKED)] |= E_BLOCKED
        eb[res.unreachable[dst] > 0.01] |= E_REFUSED
        eb[(res.svc_fail[dst] - res.unreachable[dst]) > MIN_LOGGED_SHARE] |= E_UPSTREAM
        eb[arrays["inbound_loss"][dst] > 0] |= E_RESET
        eb[arrays["edge_mult"] > 1.0] |= E_RETRY
        out = (sat, hop_ms, bits, eb)
        self._expected_memo = (key, out)
        return out

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_pods_key"] = None  # keyed by a per-process counter: rescan after a copy
        state["_pod_memo"] = {}
        return state

    def _grow(self) -> None:
        def g(a: np.ndarray) -> np.ndarray:
            out = np.zeros((len(a) + self.GROW, *a.shape[1:]), dtype=a.dtype)
            out[: len(a)] = a
            return out

        self.times = g(self.times)
        for d in (self._svc, self._edge, self._rt):
            for k in d:
                d[k] = g(d[k])
        self.svc_bits, self.edge_bits, self.ctx_ref = g(self.svc_bits), g(self.edge_bits), g(self.ctx_ref)
        self._bind_arrays()

    def _bind_arrays(self) -> None:
        """Expose the per-sample arrays as attributes (`rec.svc_count[p, s]`), rebound after growth."""
        for d in (self._svc, self._edge, self._rt):
            self.__dict__.update(d)

    def _context(self, sim: Simulator) -> _Context:
        cl, eff = sim.cluster, sim.effects
        key = (eff.version, cl.version, len(cl.network_policies))
        if key == self._ctx_key and self.contexts:
            return self.contexts[-1]
        self._ctx_key = key
        c = self.compiled
        S = self.S
        ready: list[list[str]] = [[] for _ in range(S)]
        live: list[list[str]] = [[] for _ in range(S)]
        notready: list[list[str]] = [[] for _ in range(S)]
        mechs: list[dict[str, tuple[float, str]]] = [{} for _ in range(S)]
        mem_pods: list[tuple[str, int]] = []
        route_kind = np.zeros(self.E, dtype=np.int64)
        route_host: dict[int, str] = {}
        missing_env: dict[int, str] = {}
        readiness: dict[int, str] = {}
        bits = [0] * S  # Python ints while or-ing bits in one by one
        flags_on = set()
        values = cl.configmaps.get("flagd-config", {})
        for f in self.app.feature_flags:
            v = values.get(f.name, f.default)
            if v != f.default and v in f.variants:
                flags_on.add(f.name)
        # across rebuilds: a spec's behaviours are a function of the service's registered behaviours
        # and the spec fields they read; its readiness, of the readiness path and the flag values
        flag_state = tuple(values.items())
        if self._spec_memo_key != flag_state:
            self._spec_memo_key = flag_state
            self._readiness_memo.clear()
            self._pod_memo.clear()  # a pod's part depends on the flag values too
        behaviours_memo, readiness_memo = self._behaviours_memo, self._readiness_memo
        pod_memo = self._pod_memo
        pods, nodes, generation = cl.pods, cl.nodes, eff.generation
        for name in sorted(pods):
            pod = pods[name]
            node = nodes.get(pod.node or "")
            # a pod's part below depends on its fields (its last write; injections are edited in
            # place), its node's readiness, the behaviours of its service and the flag values (see above)
            pkey = (pod.__dict__.get("_stamp"), tuple(pod.injections), None if node is None else node.ready,
                    generation(pod.service))
            entry = pod_memo.get(name)
            if entry is None or entry[0] != pkey:
                entry = pod_memo[name] = (pkey, *self._pod_part(cl, pod, node, eff, readiness_memo, behaviours_memo))
            _, si, running, terminating, bad_path, found, has_mem = entry
            if running:
                live[si].append(name)
                (ready if pod.ready else notready)[si].append(name)
            if terminating:
                continue
            if bad_path is not None:
                readiness[si] = bad_path
                if running and not pod.ready:
                    bits[si] |= B_NOT_READY
            for mech, params, detail in found:
                self._note(mech, params, detail, si, mechs, bits, route_kind, route_host, missing_env, pod)
            if has_mem:
                mem_pods.append((name, si))
        if len(pod_memo) > 2 * len(cl.pods) + 64:  # forget pods that are gone
            for name in [n for n in pod_memo if n not in cl.pods]:
                del pod_memo[name]
        for flag in flags_on:
            for svc_name, mech, params in FLAG_BEHAVIOUR.get(flag, []):
                si = c.index.get(svc_name)
                if si is None:
                    continue
                f = next(x for x in self.app.feature_flags if x.name == flag)
                params = resolve_variant(params, f.variants[values.get(flag, f.default)])
                if mech == "code_error":
                    mechs[si][f"flag:{flag}"] = (float(params["error_ratio"]), flag)
                    bits[si] |= B_FLAG_ERROR
                elif mech == "config_wrong_address":
                    e = c.edge_index.get((svc_name, str(params["downstream"])))
                    if e is not None:
                        route_kind[e] = DNS
                        route_host[e] = f"{FLAG_ADDRESS.get(flag, 'badAddress')}:{self.addresses[e].rpartition(':')[2]}"
                elif mech == "code_memory_leak":
                    bits[si] |= B_MEM_LEAK
                    for name in live[si]:
                        mem_pods.append((name, si))
                elif mech == "cpu_stress":
                    bits[si] |= B_CPU_HOG
                elif mech == "consumer_delay":
                    bits[si] |= B_CONSUMER_SLOW
                elif mech == "code_retry_storm":
                    bits[si] |= B_RETRY_STORM
        for pol in cl.network_policies.values():
            e = c.edge_index.get((pol.source, pol.target))
            if e is not None:
                route_kind[e] = BLOCKED
        own_sources = [()] * S
        for si in range(S):
            if not mechs[si]:
                continue
            srcs = []
            for mech, (w, detail) in sorted(mechs[si].items()):
                if mech.startswith("flag:"):
                    srcs.append((FLAG, w, detail))
                elif mech == "code_error":
                    srcs.append((OWN_APP, w, ""))
                elif mech == "config_bad_value":
                    srcs.append((BAD_VALUE, w, detail))
                elif mech == "dependency_unavailable":
                    srcs.append((DEP_UNAVAIL, w, ""))
            own_sources[si] = tuple(srcs)
        ctx = _Context(ready_pods=tuple(map(tuple, ready)), live_pods=tuple(map(tuple, live)), notready_pods=tuple(map(tuple, notready)),
                       own_sources=tuple(own_sources), bits=np.array(bits, dtype=np.uint32), route_kind=route_kind, route_host=route_host,
                       missing_env=missing_env, readiness_path=readiness, flags_on=frozenset(flags_on), mem_pods=tuple(mem_pods))
        self.contexts.append(ctx)
        return ctx

    def _pod_part(self, cl, pod, node, eff, readiness_memo: dict, behaviours_memo: dict) -> tuple:
        """(service index, running, terminating, readiness path if its probe fails, behaviours found, memory grows)."""
        si = self.compiled.index[pod.service]
        running = pod.started and pod.waiting_reason is None and not pod.terminating and node is not None and node.ready
        if pod.terminating:
            return si, running, True, None, (), False
        spec = cl.spec_of(pod)
        rkey = (pod.service, spec.readiness_path)
        ok = readiness_memo.get(rkey)
        if ok is None:
            ok = readiness_memo[rkey] = self._readiness_ok(pod.service, spec, eff)
        bad_path = None if ok else (spec.readiness_path or "/healthz")
        skey = (pod.service, pod.revision)
        fields = (spec.code, spec.env, spec.image, eff.generation(pod.service))
        hit = behaviours_memo.get(skey)
        if hit is None or hit[0] != fields:
            hit = behaviours_memo[skey] = (fields, self._behaviours(pod.service, spec, eff))
        found = tuple(hit[1]) + tuple((i["mechanism"], i["params"], "") for i in pod.injections.values())
        has_mem = any(m in ("code_memory_leak", "memory_stress") for m, _, _ in found)
        return si, running, False, bad_path, found, has_mem

    def _readiness_ok(self, service: str, spec, eff) -> bool:
        try:
            return bool(eff.readiness_ok(service, spec))
        except Exception:  # the effects layer is being edited concurrently; readiness is a nice-to-have
            return spec.readiness_path == self.readiness_default.get(service)

    @staticmethod
    def _behaviours(service: str, spec, eff) -> list[tuple[str, dict, str]]:
        """(mechanism, params, detail) attached to the artifacts a pod's spec runs; detail = the env value."""
        out = []
        code = dict(spec.code)
        env = dict(spec.env)
        for (svc, kind, key, state), bs in eff.behaviours.items():
            if svc != service:
                continue
            if kind == "code" and code.get(key) == state or kind == "image" and spec.image == state:
                out += [(b.mechanism, b.params, "") for b in bs]
            elif kind == "env" and env.get(key) == state:
                out += [(b.mechanism, b.params, state or "") for b in bs]
            elif kind == "env" and state is None and key not in env:
                out += [(b.mechanism, {**b.params, "_key": key}, "") for b in bs]
        return out

    def _note(self, mech: str, params: dict, detail: str, si: int, mechs, bits, route_kind, route_host, missing_env, pod) -> None:
        c = self.compiled
        if mech in ("code_error", "config_bad_value", "dependency_unavailable"):
            w = float(params.get("error_ratio", 0.1))
            prev = mechs[si].get(mech)
            mechs[si][mech] = (max(w, prev[0]) if prev else w, detail if mech == "config_bad_value" else "")
            bits[si] |= {"code_error": B_APP_ERROR, "config_bad_value": B_BAD_VALUE, "dependency_unavailable": B_DEP_UNAVAIL}[mech]
        elif mech in ("code_crash",):
            bits[si] |= B_CRASH
        elif mech == "config_missing_env":
            bits[si] |= B_MISSING_ENV
            missing_env[si] = str(params.get("_key") or params.get("key") or "SERVICE_ADDR")
        elif mech == "code_memory_leak":
            bits[si] |= B_MEM_LEAK
        elif mech in ("code_cpu_hog", "cpu_stress"):
            bits[si] |= B_CPU_HOG
        elif mech == "code_retry_storm":
            bits[si] |= B_RETRY_STORM
        elif mech == "config_cache_ttl":
            bits[si] |= B_CACHE_OFF
        elif mech == "consumer_delay":
            bits[si] |= B_CONSUMER_SLOW
        elif mech == "config_wrong_address":
            e = c.edge_index.get((pod.service, str(params.get("downstream"))))
            if e is not None:
                route_kind[e] = DNS
                route_host[e] = detail or f"{params.get('downstream')}-unknown:{self.addresses[e].rpartition(':')[2]}"

    # ------------------------------------------------------------ lookups
    def check_app(self, app: object) -> None:
        name = getattr(app, "app", app)
        if name is not None and name != self.app_name:
            raise UnknownNameError("app of this simulator", str(name), [self.app_name])

    def service_index(self, service: str) -> int:
        i = self.compiled.index.get(service)
        if i is None:
            raise UnknownNameError(f"service of {self.app_name}", service, self.services)
        return i

    def sample_k(self, p: int) -> int:
        return int(round(self.times[p] / self.step_s))

    def position_of(self, k: int) -> int | None:
        return self._k_index.get(int(k))

    def positions(self, start_s: float, end_s: float) -> list[int]:
        """Samples whose 15 s window (t - step, t] overlaps [start_s, end_s], oldest first."""
        times = self.times[: self.n]
        lo = int(np.searchsorted(times, start_s, side="left"))
        hi = int(np.searchsorted(times, end_s + self.step_s, side="left"))
        return [p for p in range(lo, min(hi, self.n)) if times[p] - self.step_s < end_s]

    def context(self, p: int) -> _Context:
        return self.contexts[int(self.ctx_ref[p])]

    def symptoms(self, p: int, service: str) -> list[str]:
        """Names of the symptom kinds a service showed in sample p (for summaries and tests)."""
        b = int(self.svc_bits[p, self.service_index(service)])
        return [name for bit, name in SYMPTOM_BIT_NAMES.items() if b & bit]

    # ------------------------------------------------------------ causes and texts (shared with traces)
    def pick_own_cause(self, p: int, s: int, u: float) -> int:
        srcs = self.context(p).own_sources[s]
        if not srcs:
            return OWN_APP
        total = sum(w for _, w, _ in srcs)
        x = u * total
        for cause, w, _ in srcs:
            x -= w
            if x < 0:
                return cause
        return srcs[-1][0]

    def route_cause(self, p: int, e: int) -> int:
        k = int(self.context(p).route_kind[e])
        return k if k else BLOCKED

    def _own_detail(self, p: int, s: int, cause: int) -> str:
        for c_, _, detail in self.context(p).own_sources[s]:
            if c_ == cause:
                return detail
        return ""

    def own_error_text(self, p: int, s: int, cause: int | None, draw: _Draw | None = None) -> str:
        fam = self.family[s]
        if cause == FLAG:
            flag = self._own_detail(p, s, FLAG)
            text = FLAG_ERROR.get(flag, ("Unknown", "", None))[1] or _pick(OWN_APP_TEXT, fam) or "internal error"
            return text.replace("{pid}", PRODUCT_IDS[0]).replace("{{", "{").replace("}}", "}")
        if cause == BAD_VALUE:
            return _pick(BAD_VALUE_TEXT, fam).format(value=self._own_detail(p, s, BAD_VALUE) or "-")
        if cause == DEP_UNAVAIL:
            return _pick(UNAVAIL_TEXT, fam)
        if cause == SATURATED:
            return _pick(SATURATED_TEXT, fam).replace("{n}", str(int(self.svc_count[p, s] / self.step_s) + 1))
        return _pick(OWN_APP_TEXT, fam) or "internal error"

    def own_code(self, p: int, s: int, cause: int) -> str:
        if cause == FLAG:
            return FLAG_ERROR.get(self._own_detail(p, s, FLAG), ("Unknown",))[0]
        return GRPC_CODE.get(cause, "Unknown")

    def client_error_text(self, e: int, cause: int, detail: str = "", code: str = "Unknown", draw: _Draw | None = None,
                          p: int | None = None) -> str:
        """What the caller of edge e prints when a call fails with `cause` (names the callee)."""
        c = self.compiled
        s, d = int(c.edge_src[e]), int(c.edge_dst[e])
        fam, proto = self.family[s], self.protocols[e]
        table = PROTO_ERR.get(proto) if proto in PROTO_ERR else None
        if table is None and proto == "http" and fam == "go":
            table = {**CLIENT_ERR["go"], TIMEOUT: 'Post "http://{addr}{path}": context deadline exceeded (Client.Timeout exceeded while awaiting headers) calling {dst}',
                     REFUSED: 'Post "http://{addr}{path}": dial tcp {addr}: connect: connection refused',
                     DNS: 'Post "http://{host}{path}": dial tcp: lookup {hostname} on 10.96.0.10:53: no such host',
                     UPSTREAM: "{dst} returned HTTP {status}: {detail}"}
        if table is None:
            table = CLIENT_ERR.get(fam, CLIENT_ERR["go"])
        fmt = table.get(cause, CLIENT_ERR["go"][cause if cause in CLIENT_ERR["go"] else UPSTREAM])
        host = self.addresses[e]
        if cause == DNS and p is not None:
            host = self.context(p).route_host.get(e, host)
        elif cause == DNS:
            host = self._last_route_host(e) or host
        tms = float(self.edge_timeout[max(self.n - 1, 0), e]) if p is None else float(self.edge_timeout[p, e])
        vals = dict(dst=self.services[d], addr=self.addresses[e], host=host, hostname=host.rpartition(":")[0] or host,
                    port=self.addresses[e].rpartition(":")[2], tms=f"{tms:.0f}", ts=f"{tms / 1000:.3f}", detail=detail,
                    code=code, CODE=re.sub(r"(?<!^)(?=[A-Z])", "_", code).upper(), codenum=CODE_NUM.get(code, 2),
                    status=HTTP_STATUS.get(cause, 500) if cause != UPSTREAM else 500, path=self.edge_path[e],
                    verb="POST", op=self.client_op[e], pod="-")
        text = fmt.format_map(_Fill(draw or _Draw(np.random.default_rng([*self.entropy, 9, e, cause])), **vals))
        return text

    def _last_route_host(self, e: int) -> str | None:
        for ctx in reversed(self.contexts):
            if e in ctx.route_host:
                return ctx.route_host[e]
        return None

    def upstream_text(self, e: int, callee_text: str) -> str:
        return self.client_error_text(e, UPSTREAM, detail=callee_text, code="Unknown")

    def root_cause(self, p: int, d: int, depth: int = 0) -> tuple[int, int, int, str, str]:
        """Why calls to service d fail in sample p, followed to the origin: (forced kind, index, cause, text, code)."""
        hit = self._cause_cache.get((p, d))
        if hit is None:
            if len(self._cause_cache) > 100_000:
                self._cause_cache.clear()
            hit = self._cause_cache[(p, d)] = self._root_cause(p, d, depth)
        return hit

    def _root_cause(self, p: int, d: int, depth: int) -> tuple[int, int, int, str, str]:
        srcs = self.context(p).own_sources[d]
        own = float(self.own_err[p, d]) + float(self.saturated[p, d])
        best_e, best_w, best_c = -1, 0.0, UPSTREAM
        if depth < 4:
            for e in self.out_edges[d]:
                for cause, w in self._edge_components(p, e):
                    if w > best_w:
                        best_e, best_w, best_c = e, w, cause
        if own >= best_w * 0.5 or best_e < 0:
            if float(self.saturated[p, d]) > float(self.own_err[p, d]):
                cause = SATURATED
            else:
                cause = max(srcs, key=lambda x: x[1])[0] if srcs else OWN_APP
            return F_OWN, d, cause, self.own_error_text(p, d, cause), self.own_code(p, d, cause)
        if best_c == UPSTREAM:
            dd = int(self.compiled.edge_dst[best_e])
            fk, fi, fc, text, code = self.root_cause(p, dd, depth + 1)
            return fk, fi, fc, self.client_error_text(best_e, UPSTREAM, detail=text, code=code, p=p), "Unknown"
        if best_c == REFUSED:
            return F_EDGE, best_e, REFUSED, self.client_error_text(best_e, REFUSED, p=p), "Unavailable"
        return F_EDGE, best_e, best_c, self.client_error_text(best_e, best_c, p=p), GRPC_CODE.get(best_c, "Unknown")

    def _edge_components(self, p: int, e: int) -> list[tuple[int, float]]:
        """Failed calls per 15 s over edge e split by cause (the traffic model's factors)."""
        d = int(self.compiled.edge_dst[e])
        fail = float(self.edge_fail[p, e])
        if fail < MIN_LOGGED_SHARE:
            return []
        n = float(self.edge_rate[p, e]) * self.step_s * fail
        unreach = float(self.unreachable[p, d])
        parts = [(self.route_cause(p, e), float(self.edge_route[p, e])), (RESET, float(self.inbound_loss[p, d]) * 0.3),
                 (TIMEOUT, float(self.edge_tshare[p, e])), (REFUSED, unreach),
                 (UPSTREAM, max(0.0, float(self.svc_fail[p, d]) - unreach))]
        total = sum(w for _, w in parts)
        if total <= 0:
            return []
        return [(c_, n * w / total) for c_, w in parts if w > 0]

    def error_causes(self, p: int, s: int) -> list[tuple[float, int, int]]:
        """(failed requests per 15 s, cause, edge or -1) for service s in sample p."""
        out: list[tuple[float, int, int]] = []
        count = float(self.svc_count[p, s])
        if self.context(p).live_pods[s] or self.context(p).ready_pods[s]:
            own = float(self.own_err[p, s])
            if own > MIN_LOGGED_SHARE:
                srcs = self.context(p).own_sources[s] or ((OWN_APP, 1.0, ""),)
                total = sum(w for _, w, _ in srcs)
                out += [(count * own * w / total, cause, -1) for cause, w, _ in srcs]
            sat = float(self.saturated[p, s])
            if sat > MIN_LOGGED_SHARE:
                out.append((count * sat, SATURATED, -1))
        for e in self.out_edges[s]:
            out += [(w, cause, e) for cause, w in self._edge_components(p, e)]
        return out

    def roots_through(self, p: int, s: int | None = None, e: int | None = None) -> tuple[list[int], list[float]]:
        """Roots (request types, else the service's background root) whose requests reach s / edge e."""
        c = self.compiled
        rate = self.rt_rate[p].astype(np.float64)
        if e is not None:
            w = rate * c.edge_flow[:, e]
        elif s is not None:
            w = rate * (c.visits[:, s] > 0)
        else:
            w = rate.copy()
        idx = [int(i) for i in np.nonzero(w > 0)[0]]
        if idx:
            return idx, [float(w[i]) for i in idx]
        root_s = s if s is not None else int(c.edge_src[e]) if e is not None else c.entry
        return [self.R + root_s], [1.0]

    def draw_roots(self, p: int, s: int | None, n: int) -> list[int]:
        roots, w = self.roots_through(p, s)
        draw = _Draw(np.random.default_rng([*self.entropy, 3, self.sample_k(p), self.S if s is None else s]), n + 4)
        return [roots[draw.weighted(w)] for _ in range(n)]

    def forced_spec(self, p: int, cause: int, s: int, e: int) -> tuple[int, int, int]:
        """The (kind, index, cause) a trace must be conditioned on to show this failure."""
        if e < 0:
            return F_OWN, s, cause
        if cause == UPSTREAM:
            fk, fi, fc, _, _ = self.root_cause(p, int(self.compiled.edge_dst[e]))
            return fk, fi, fc
        return F_EDGE, e, cause

    def error_trace_specs(self, p: int, s: int, n: int) -> list[tuple[int, int, int, int]]:
        causes = self.error_causes(p, s)
        total = sum(w for w, _, _ in causes)
        if total < 0.5:
            return []
        draw = _Draw(np.random.default_rng([*self.entropy, 4, self.sample_k(p), s]), 4 * n + 4)
        out = []
        for _ in range(min(n, int(np.ceil(total)))):
            w, cause, e = causes[draw.weighted([x[0] for x in causes])]
            fk, fi, fc = self.forced_spec(p, cause, s, e)
            roots, rw = self.roots_through(p, s=s if e < 0 else None, e=e if e >= 0 else None)
            out.append((fk, fi, fc, roots[draw.weighted(rw)]))
        return out

    # ------------------------------------------------------------ log synthesis
    def lines(self, p: int, s: int, min_rank: int = 0) -> list[LogRecord]:
        """Log lines of service s in sample p (deterministic in (seed, service, sample)).

        INFO request lines come from their own stream, so skipping them (min_rank > 0) leaves the
        other lines unchanged."""
        ctx = self.context(p)
        evs = [ev for ev in self.events.get(p, ()) if ev[0] == s]
        if not ctx.live_pods[s] and not evs:
            return []
        k = self.sample_k(p)
        rng = np.random.default_rng([*self.entropy, 1, s, k])
        draw = _Draw(rng)
        fam = self.family[s]
        name = self.services[s]
        t1 = float(self.times[p])
        t0 = t1 - self.step_s
        bits = int(self.svc_bits[p, s])
        out: list[LogRecord] = []
        ready = ctx.ready_pods[s] or ctx.live_pods[s]
        native = NATIVE_LEVEL.get(fam, {})

        def emit(level: str, msg: str, pod: str | None = None, trace: str | None = None, **attrs) -> None:
            a = {"severity.text": native.get(level, level)}
            a.update(attrs)
            out.append(LogRecord(timestamp=round(t0 + draw() * self.step_s, 3), service=name,
                                 pod=pod or (draw.choice(ready) if ready else "-"), level=level, message=msg, trace_id=trace,
                                 attributes=a))

        count = float(self.svc_count[p, s])
        fail = float(self.svc_fail[p, s])
        # --- successful requests
        if ctx.ready_pods[s] and min_rank == 0:
            ok_rng = np.random.default_rng([*self.entropy, 5, s, k])
            main_draw, draw = draw, _Draw(ok_rng, 64)
            n_ok = min(MAX_OK_LINES, int(ok_rng.poisson(max(count * (1 - fail), 0.0) * OK_LINES_PER_REQUEST)))
            roots, w = self.roots_through(p, s)
            for j in range(n_ok):
                root = roots[draw.weighted(w)]
                tid = encode_trace_id(self.key, k, root, 900 + j, F_OK)
                msg, attrs = self._ok_line(p, s, root, draw)
                emit("INFO", msg, trace=tid, **attrs)
            draw = main_draw
        # --- failed requests, by cause
        causes = self.error_causes(p, s) if ctx.live_pods[s] else []
        total = sum(w for w, _, _ in causes)
        n_err = min(MAX_ERROR_LINES, int(rng.poisson(total * ERROR_LINES_PER_ERROR))) if total > 0 else 0
        for j in range(n_err):
            w, cause, e = causes[draw.weighted([x[0] for x in causes])]
            fk, fi, fc = self.forced_spec(p, cause, s, e)
            roots, rw = self.roots_through(p, s=s if e < 0 else None, e=e if e >= 0 else None)
            tid = encode_trace_id(self.key, k, roots[draw.weighted(rw)], 600 + j, fk, fi, fc)
            level, msg, attrs = self._error_line(p, s, cause, e, draw)
            if level:
                emit(level, msg, trace=tid, **attrs)
        # --- process-level symptoms
        for si, pod, reason in evs:
            if reason == "OOMKilled":
                emit("ERROR", _pick(OOM_TEXT, fam), pod=pod, **{"k8s.container.restart_count": 1, "exit.code": 137,
                                                                "k8s.container.last_terminated_reason": "OOMKilled"})
            elif bits & B_MISSING_ENV and s in ctx.missing_env:
                emit("ERROR", _pick(MISSING_ENV_TEXT, fam).format(key=ctx.missing_env[s]), pod=pod, **{"exit.code": 1})
            else:
                emit("ERROR", _pick(CRASH_TEXT, fam), pod=pod, **{"exit.code": 2 if fam == "go" else 1})
            if ctx.live_pods[s]:
                emit("INFO", STARTUP_TEXT.get(fam, "started").format_map(_Fill(draw, port=self.ports[s])), pod=pod)
        if bits & B_NOT_READY and s in ctx.readiness_path:
            for pod in ctx.notready_pods[s]:
                msg = _pick(READINESS_TEXT, fam).format_map(_Fill(draw, path=ctx.readiness_path[s], port=self.ports[s], clf=self.epoch.clf(t1)))
                emit("WARN" if fam not in ("nginx",) else "INFO", msg, pod=pod, **{"http.response.status_code": 404,
                                                                                   "user_agent.original": "kube-probe/1.29"})
        if bits & B_MEM_HIGH and draw() < 0.6:
            emit("WARN", _pick(MEM_HIGH_TEXT, fam).format_map(_Fill(draw)))
        if bits & (B_SLOW_CODE | B_SATURATED | B_THROTTLED | B_CPU_HOG) and ctx.ready_pods[s]:
            lat = float(self.own_lat[p, s])
            base = float(self.compiled.service_time_ms[s])
            if lat > 3 * base and lat > 200:
                for _ in range(min(3, int(rng.poisson(1.5)))):
                    ms = int(lat * (0.6 + draw()))
                    emit("WARN", _pick(SLOW_TEXT, fam).format_map(_Fill(draw, op=self.server_op[s], ms=str(ms), sec=f"{ms / 1000:.6f}")),
                         **{"duration_ms": ms})
        if bits & B_RETRY_STORM:
            for e in self.out_edges[s]:
                if self.edge_bits[p, e] & E_RETRY and draw() < 0.7:
                    emit("WARN", RETRY_TEXT.format_map(_Fill(draw, dst=self.services[int(self.compiled.edge_dst[e])],
                                                             detail="transient error, backing off")))
        if bits & B_CACHE_OFF:
            for e in self.out_edges[s]:
                if draw() < 0.8:
                    emit("INFO", CACHE_MISS_TEXT.format_map(_Fill(draw, dst=self.services[int(self.compiled.edge_dst[e])])))
                    break
        if bits & B_CONSUMER_LAG:
            emit("WARN", _pick(LAG_TEXT, fam).format_map(_Fill(draw, svc=name)))
        for flag in sorted(ctx.flags_on):
            for svc_name, level, msg in FLAG_LINES.get(flag, ()):
                if svc_name == name and draw() < 0.8:
                    emit(level, msg.format_map(_Fill(draw)))
        if name == "product-reviews" and self.flag_index and "llmRateLimitError" not in ctx.flags_on \
                and ctx.ready_pods[s] and draw() < 0.5:
            emit("INFO", "llmRateLimitError feature flag: False")
        out.sort(key=lambda r: r.timestamp)
        return out

    def _ok_line(self, p: int, s: int, root: int, draw: _Draw) -> tuple[str, dict]:
        fam = self.family[s]
        name = self.services[s]
        ms = max(1, int(float(self.svc_lat[p, s]) * (0.5 + draw())))
        if s == self.compiled.entry and root < self.R:
            verb, path = self.root_ops[root].split(" ", 1)
            path = _fill_path(path, draw)
            return self._access_line(fam, verb, path, 200, ms, draw, p), {"http.request.method": verb, "url.path": path,
                                                                          "http.response.status_code": 200, "duration_ms": ms}
        specific = SERVICE_INFO.get((name, fam))
        if specific:
            return specific[int(draw() * len(specific)) % len(specific)].format_map(_Fill(draw)), {"duration_ms": ms}
        tmpl = _pick(REQUEST_OK, fam) or REQUEST_OK["_"]
        if not tmpl:
            return f"{self.server_op[s]} ok", {"duration_ms": ms}
        return draw.choice(tmpl).format_map(_Fill(draw, op=self.server_op[s], ms=str(ms))), {"duration_ms": ms}

    def _access_line(self, fam: str, verb: str, path: str, status: int, ms: int, draw: _Draw, p: int, flags: str = "-",
                     upstream: str = "") -> str:
        t = float(self.times[p]) - self.step_s * draw()
        if fam == "envoy":
            return (f'[{self.epoch.iso(t)}] "{verb} {path} HTTP/1.1" {status} {flags} via_upstream - "-" 0 {int(200 + draw() * 4000)} {ms} '
                    f'{max(ms - 1, 0)} "-" "python-requests/2.31.0" "{draw.hexs(8)}-{draw.hexs(4)}-{draw.hexs(4)}-{draw.hexs(4)}-{draw.hexs(12)}" '
                    f'"{self.services[self.compiled.entry]}:{self.ports[self.compiled.entry]}" "{upstream or "10.244.1.7:8080"}"')
        if fam == "nginx":
            return (f'10.244.{int(draw() * 4)}.{2 + int(draw() * 250)} - - [{self.epoch.clf(t)}] "{verb} {path} HTTP/1.1" {status} '
                    f'{int(200 + draw() * 4000)} "-" "Mozilla/5.0 (X11; Linux x86_64)" rt={ms / 1000:.3f}')
        return f"{verb} {path} {status} {ms}ms"

    def _error_line(self, p: int, s: int, cause: int, e: int, draw: _Draw) -> tuple[str | None, str, dict]:
        fam = self.family[s]
        self.services[s]
        c = self.compiled
        if e < 0:  # the service's own failure
            text = self.own_error_text(p, s, cause)
            attrs = {"error.type": {FLAG: "flag", BAD_VALUE: "invalid_value", DEP_UNAVAIL: "unavailable", SATURATED: "overloaded"}.get(cause, "exception")}
            if cause == FLAG:
                flag = self._own_detail(p, s, FLAG)
                level = FLAG_ERROR.get(flag, ("", "", "ERROR"))[2]
                if level is None:
                    return None, "", {}
                text = FLAG_ERROR[flag][1].format_map(_Fill(draw))
                if fam == "node":
                    attrs["err.message"] = text
                return level, text, attrs
            if s == c.entry and fam in ("envoy", "nginx"):
                roots, w = self.roots_through(p, s)
                root = roots[draw.weighted(w)]
                verb, path = self.root_ops[root].split(" ", 1) if root < self.R else ("GET", "/")
                path = _fill_path(path, draw)
                return "WARN", self._access_line(fam, verb, path, 503, int(self.own_lat[p, s]), draw, p, "UO"), {"http.response.status_code": 503}
            return "ERROR", text, attrs
        d = int(c.edge_dst[e])
        dst = self.services[d]
        if cause == UPSTREAM:
            fk, fi, fc, detail, code = self.root_cause(p, d)
            if fk == F_OWN and fc == FLAG:
                flag = self._own_detail(p, fi, FLAG)
                detail = FLAG_CALLER_PREFIX.get(flag, "") + detail if fam != "go" else detail
                if fam == "go" and flag in FLAG_CALLER_PREFIX:
                    text = FLAG_CALLER_PREFIX[flag] + self.client_error_text(e, UPSTREAM, detail=detail, code=code, draw=draw, p=p)
                    return "ERROR", text, {"peer.service": dst, "rpc.grpc.status_code": CODE_NUM.get(code, 2)}
        else:
            detail, code = "", GRPC_CODE.get(cause, "Unknown")
        if fam in ("envoy", "nginx"):
            return "ERROR", self._proxy_error(p, s, e, cause, draw), {"peer.service": dst, "upstream.cluster": dst}
        msg = self.client_error_text(e, cause, detail=detail, code=code, draw=draw, p=p)
        prefix = CLIENT_PREFIX.get(fam, "")
        if prefix and self.protocols[e] not in ("redis",):
            msg = prefix.format(op=self._verb(e)) + msg
        attrs = {"peer.service": dst, "server.address": self.addresses[e] if cause != DNS else self.context(p).route_host.get(e, self.addresses[e])}
        if self.protocols[e] == "grpc":
            attrs["rpc.grpc.status_code"] = CODE_NUM.get(code if cause == UPSTREAM else GRPC_CODE.get(cause, "Unknown"), 2)
        return "ERROR", msg, attrs

    def _verb(self, e: int) -> str:
        d = self.services[int(self.compiled.edge_dst[e])]
        proto = self.protocols[e]
        if proto == "redis":
            return "access cart storage"
        if proto == "sql":
            return "query database"
        if proto in ("kafka", "amqp"):
            return "publish message"
        return f"call {d}"

    def _proxy_error(self, p: int, s: int, e: int, cause: int, draw: _Draw) -> str:
        fam = self.family[s]
        roots, w = self.roots_through(p, e=e)
        root = roots[draw.weighted(w)]
        verb, path = self.root_ops[root].split(" ", 1) if root < self.R else ("GET", "/")
        path = _fill_path(path, draw)
        addr = self.addresses[e] if cause != DNS else self.context(p).route_host.get(e, self.addresses[e])
        dst = self.services[int(self.compiled.edge_dst[e])]
        if fam == "envoy":
            flags = {TIMEOUT: "UT", REFUSED: "UF", DNS: "UF", BLOCKED: "UF", RESET: "UC", UPSTREAM: "-"}.get(cause, "-")
            status = {TIMEOUT: 504, UPSTREAM: 500}.get(cause, 503)
            ms = int(float(self.edge_timeout[p, e])) if cause == TIMEOUT else int(1 + draw() * 5)
            return self._access_line(fam, verb, path, status, ms, draw, p, flags, upstream=addr) + f" {dst}"
        why = {TIMEOUT: "upstream timed out (110: Connection timed out) while reading response header from upstream",
               REFUSED: "connect() failed (111: Connection refused) while connecting to upstream",
               DNS: f"{addr.rpartition(':')[0]} could not be resolved (3: Host not found)",
               BLOCKED: "upstream timed out (110: Connection timed out) while connecting to upstream",
               RESET: "recv() failed (104: Connection reset by peer) while reading response header from upstream",
               UPSTREAM: "upstream sent invalid response (502) while reading response header from upstream"}.get(cause, "upstream error")
        t = float(self.times[p]) - self.step_s * draw()
        return (f"{self.epoch.iso(t)[:19].replace('T', ' ').replace('-', '/')} [error] 29#29: *{int(draw() * 90000)} {why}, client: 10.244.0.1, "
                f'server: localhost, request: "{verb} {path} HTTP/1.1", upstream: "http://{addr}{path}", host: "{self.services[s]}:{self.ports[s]}"')


# ====================================================================== query
def search_logs(recorder: LogContextRecorder, app: object, service: str | None, start_s: float, end_s: float,
                query: str | None = None, level: str | None = None, limit: int = 200,
                with_positions: bool = False) -> list:
    """Log lines of `service` (None: every service) with start_s <= timestamp <= end_s.

    `query`: whitespace-separated terms (double quotes group a phrase), all must occur in the
    message, an attribute value or the pod name, case-insensitively; `-term` excludes. `level`:
    the minimum severity (DEBUG, INFO, WARN, ERROR). Both as `sre_marathon_gym.logquery` defines
    them for every backend. Returns the most recent `limit` matching lines in
    time order, like `kubectl logs --tail`.

    `with_positions=True` returns `(record, (k, s, i))` pairs instead: the sample key, the service
    index and the line's index among `recorder.lines(p, s, 0)` (every level generated, so the index
    is stable and the line can be found again, e.g. for citable log ids).
    """
    rec = recorder
    rec.check_app(app)
    need = logquery.min_rank(level)
    svcs = [rec.service_index(service)] if service is not None else list(range(rec.S))
    inc, exc = logquery.parse_query(query)
    out: list = []
    limit = max(0, int(limit))
    for p in reversed(rec.positions(start_s, end_s)):
        k = rec.sample_k(p) if with_positions else 0
        batch = []
        for s in svcs:
            for i, r in enumerate(rec.lines(p, s, 0 if with_positions else max(need, 0))):
                if not (start_s <= r.timestamp <= end_s) or logquery.rank(r.level) < need:
                    continue
                if not logquery.matches(inc, exc, r.message, r.attributes, r.pod):
                    continue
                batch.append((r, (k, s, i)) if with_positions else r)
        out.extend(batch)
        if len(out) >= limit:
            break
    if with_positions:
        out.sort(key=lambda x: (x[0].timestamp, x[0].service, x[0].pod))
    else:
        out.sort(key=lambda r: (r.timestamp, r.service, r.pod))
    return out[max(0, len(out) - limit):] if limit else []


__all__ = ["LogContextRecorder", "LogRecord", "search_logs", "entry_route"]
