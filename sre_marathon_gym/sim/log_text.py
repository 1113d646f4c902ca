"""What processes print: log line templates and text tables, per language family.

Apart from the synthesis (`log_lines`) and the cause attribution (`log_causes`) because these are
data, and the largest part of it: per family (`FAMILY` maps a service's language to one), the error
a client prints when a call fails with a given cause, what a service prints for its own failures,
at startup, when slow, OOM-killed or crashing, request lines, and the lines and errors the
OpenTelemetry demo's feature flags produce. Only symptoms, never fault ids or artifacts.

Fields: {dst} callee, {addr} callee host:port, {host} address dialled, {port}, {tms}/{ts} timeout,
{detail} callee's error text, {code} gRPC code, {status} HTTP status, {op} operation, {path} route,
{ms} duration, plus generated ones ({uid}, {pid}, {n}, {txn}, {ip}, {rid}, ...: `log_draw.Fill`).
"""

from __future__ import annotations

from .causes import BAD_VALUE, BLOCKED, DEP_UNAVAIL, DNS, FLAG, REFUSED, RESET, SATURATED, TIMEOUT, UPSTREAM

# language -> the family the tables below are keyed by; how some families spell the levels
FAMILY = {
    "Go": "go",
    "Java": "java",
    "Kotlin": "java",
    "Nacos": "java",
    "C#": "dotnet",
    "JavaScript": "node",
    "TypeScript": "node",
    "Python": "python",
    "C++": "cpp",
    "Rust": "rust",
    "Ruby": "ruby",
    "PHP": "php",
    "Elixir": "elixir",
    "Envoy": "envoy",
    "nginx": "nginx",
    "Redis": "redis",
    "Valkey": "redis",
    "PostgreSQL": "postgres",
    "MySQL": "mysql",
    "Kafka": "kafka",
    "RabbitMQ": "rabbitmq",
}
NATIVE_LEVEL = {
    "dotnet": {"INFO": "Information", "WARN": "Warning", "ERROR": "Error"},
    "python": {"INFO": "INFO", "WARN": "WARNING", "ERROR": "ERROR"},
    "node": {"INFO": "info", "WARN": "warn", "ERROR": "error"},
}

# ---------------------------------------------------------------- a call failed (the caller prints)
CLIENT_ERR: dict[str, dict[int, str]] = {
    "go": {
        TIMEOUT: "rpc error: code = DeadlineExceeded desc = context deadline exceeded calling {dst}",
        REFUSED: (
            'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while '
            'dialing: dial tcp {addr}: connect: connection refused"'
        ),
        DNS: (
            "rpc error: code = Unavailable desc = name resolver error: dial tcp: lookup {hostname} on "
            "10.96.0.10:53: no such host"
        ),
        BLOCKED: "rpc error: code = DeadlineExceeded desc = dial tcp {addr}: i/o timeout",
        RESET: (
            "rpc error: code = Unavailable desc = error reading from server: read tcp "
            "10.244.{n}.{n2}:{eport}->{addr}: read: connection reset by peer"
        ),
        UPSTREAM: "rpc error: code = {code} desc = {detail}",
    },
    "java": {
        TIMEOUT: (
            "org.springframework.web.client.ResourceAccessException: I/O error on {verb} request "
            'for "http://{addr}{path}": Read timed out'
        ),
        REFUSED: (
            "org.springframework.web.client.ResourceAccessException: I/O error on {verb} request "
            'for "http://{addr}{path}": Connection refused (Connection refused)'
        ),
        DNS: (
            "org.springframework.web.client.ResourceAccessException: I/O error on {verb} request for "
            '"http://{host}{path}": {hostname}; nested exception is java.net.UnknownHostException: '
            "{hostname}"
        ),
        BLOCKED: (
            "org.springframework.web.client.ResourceAccessException: I/O error on {verb} request "
            'for "http://{addr}{path}": connect timed out'
        ),
        RESET: "java.net.SocketException: Connection reset (calling {dst} at {addr})",
        UPSTREAM: (
            "org.springframework.web.client.HttpServerErrorException$InternalServerError: "
            '{status} : [{{"status":{status},"error":"{detail}","path":"{path}"}}]'
        ),
    },
    "dotnet": {
        TIMEOUT: (
            'Grpc.Core.RpcException: Status(StatusCode="DeadlineExceeded", Detail="Deadline '
            'Exceeded") calling {dst}'
        ),
        REFUSED: (
            'Grpc.Core.RpcException: Status(StatusCode="Unavailable", Detail="Error connecting '
            'to subchannel.", DebugException="System.Net.Sockets.SocketException: Connection '
            'refused ({addr})")'
        ),
        DNS: (
            'Grpc.Core.RpcException: Status(StatusCode="Unavailable", Detail="Error connecting to '
            'subchannel.", DebugException="System.Net.Sockets.SocketException: Name or service not '
            'known ({host})")'
        ),
        BLOCKED: (
            'Grpc.Core.RpcException: Status(StatusCode="DeadlineExceeded", Detail="Deadline '
            'Exceeded") connecting to {addr}'
        ),
        RESET: (
            'Grpc.Core.RpcException: Status(StatusCode="Unavailable", Detail="Error starting '
            "gRPC call. HttpRequestException: An error occurred while sending the request. "
            'IOException: Connection reset by peer ({addr})")'
        ),
        UPSTREAM: ('Grpc.Core.RpcException: Status(StatusCode="{code}", Detail="{detail}") calling {dst}'),
    },
    "node": {
        TIMEOUT: "Error: 4 DEADLINE_EXCEEDED: Deadline exceeded after {ts}s calling {dst}",
        REFUSED: (
            "Error: 14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED {addr}"
        ),
        DNS: (
            "Error: 14 UNAVAILABLE: Name resolution failed for target dns:{host}: getaddrinfo "
            "ENOTFOUND {hostname}"
        ),
        BLOCKED: "Error: 4 DEADLINE_EXCEEDED: Deadline exceeded: connect ETIMEDOUT {addr}",
        RESET: "Error: 14 UNAVAILABLE: read ECONNRESET (calling {dst} at {addr})",
        UPSTREAM: "Error: {codenum} {CODE}: {detail}",
    },
    "python": {
        TIMEOUT: (
            "<_InactiveRpcError of RPC that terminated with: status = "
            'StatusCode.DEADLINE_EXCEEDED details = "Deadline Exceeded" calling {dst}>'
        ),
        REFUSED: (
            "<_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE "
            'details = "failed to connect to all addresses; last error: UNKNOWN: ipv4:{addr}: '
            'Failed to connect to remote host: Connection refused">'
        ),
        DNS: (
            "<_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE "
            'details = "DNS resolution failed for {host}: C-ares status is not ARES_SUCCESS '
            'qtype=A name={hostname}: Domain name not found">'
        ),
        BLOCKED: (
            "<_InactiveRpcError of RPC that terminated with: status = "
            'StatusCode.DEADLINE_EXCEEDED details = "Deadline Exceeded" connecting to {addr}>'
        ),
        RESET: (
            "<_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE "
            'details = "Socket closed" calling {dst}>'
        ),
        UPSTREAM: (
            "<_InactiveRpcError of RPC that terminated with: status = StatusCode.{CODE} "
            'details = "{detail}" calling {dst}>'
        ),
    },
    "cpp": {
        TIMEOUT: "RPC to {dst} failed: Deadline Exceeded",
        REFUSED: "RPC to {dst} failed: failed to connect to all addresses ({addr}): Connection refused",
        DNS: "RPC to {dst} failed: DNS resolution failed for {host}",
        BLOCKED: "RPC to {dst} failed: Deadline Exceeded (connect {addr})",
        RESET: "RPC to {dst} failed: Socket closed",
        UPSTREAM: "RPC to {dst} failed: {detail}",
    },
    "rust": {
        TIMEOUT: "error sending request for url (http://{addr}{path}): operation timed out",
        REFUSED: (
            "error sending request for url (http://{addr}{path}): error trying to connect: tcp "
            "connect error: Connection refused (os error 111)"
        ),
        DNS: (
            "error sending request for url (http://{host}{path}): error trying to connect: dns "
            "error: failed to lookup address information: Name or service not known"
        ),
        BLOCKED: (
            "error sending request for url (http://{addr}{path}): error trying to connect: tcp "
            "connect error: Connection timed out (os error 110)"
        ),
        RESET: (
            "error sending request for url (http://{addr}{path}): connection error: Connection "
            "reset by peer (os error 104)"
        ),
        UPSTREAM: (
            "HTTP status server error ({status} Internal Server Error) for url "
            "(http://{addr}{path}): {detail}"
        ),
    },
    "ruby": {
        TIMEOUT: "Net::ReadTimeout with #<TCPSocket:(closed)> calling {dst}",
        REFUSED: (
            "Errno::ECONNREFUSED: Failed to open TCP connection to {addr} (Connection refused - "
            'connect(2) for "{hostname}" port {port})'
        ),
        DNS: (
            "SocketError: Failed to open TCP connection to {host} (getaddrinfo: Name or service not known)"
        ),
        BLOCKED: "Net::OpenTimeout: execution expired connecting to {addr}",
        RESET: "Errno::ECONNRESET: Connection reset by peer calling {dst}",
        UPSTREAM: "{dst} returned {status}: {detail}",
    },
    "php": {
        TIMEOUT: (
            "cURL error 28: Operation timed out after {tms} milliseconds with 0 bytes received "
            "(see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for http://{addr}{path}"
        ),
        REFUSED: (
            "cURL error 7: Failed to connect to {hostname} port {port}: Connection refused for "
            "http://{addr}{path}"
        ),
        DNS: "cURL error 6: Could not resolve host: {hostname} for http://{host}{path}",
        BLOCKED: "cURL error 28: Connection timed out after {tms} milliseconds for http://{addr}{path}",
        RESET: "cURL error 56: Recv failure: Connection reset by peer for http://{addr}{path}",
        UPSTREAM: (
            "Server error: `{verb} http://{addr}{path}` resulted in a `{status} Internal Server "
            "Error` response: {detail}"
        ),
    },
    "elixir": {
        TIMEOUT: "** (Mint.TransportError) timeout calling {dst}",
        REFUSED: "** (Mint.TransportError) connection refused ({addr})",
        DNS: "** (Mint.TransportError) non-existing domain ({hostname})",
        BLOCKED: "** (Mint.TransportError) timeout connecting to {addr}",
        RESET: "** (Mint.TransportError) socket closed ({addr})",
        UPSTREAM: "request to {dst} failed with {status}: {detail}",
    },
}
# plain HTTP from Go (net/http) rather than gRPC
GO_HTTP_ERR: dict[int, str] = {
    **CLIENT_ERR["go"],
    TIMEOUT: (
        'Post "http://{addr}{path}": context deadline exceeded (Client.Timeout exceeded while awaiting '
        "headers) calling {dst}"
    ),
    REFUSED: 'Post "http://{addr}{path}": dial tcp {addr}: connect: connection refused',
    DNS: 'Post "http://{host}{path}": dial tcp: lookup {hostname} on 10.96.0.10:53: no such host',
    UPSTREAM: "{dst} returned HTTP {status}: {detail}",
}
# datastore / broker clients: the protocol decides the wording more than the language
PROTO_ERR: dict[str, dict[int, str]] = {
    "redis": {
        TIMEOUT: (
            "Timeout performing {rcmd} (1000ms), inst: 1, qu: 0, qs: 12, aw: False, rs: "
            "ReadAsync, ws: Idle, in: 0, serverEndpoint: {addr}, mc: 1/1/0, mgr: 10 of 10 "
            "available, clientName: {pod}"
        ),
        REFUSED: (
            "connection refused: {addr} (It was not possible to connect to the redis server(s). "
            "UnableToConnect on {addr}/Interactive)"
        ),
        DNS: (
            "It was not possible to connect to the redis server(s). "
            "UnableToResolvePhysicalConnection on {host}/Interactive: No such host is known"
        ),
        BLOCKED: (
            "It was not possible to connect to the redis server(s). ConnectTimeout on {addr}/Interactive"
        ),
        RESET: (
            "No connection is active/available to service this operation: {rcmd} cart:{uid}; "
            "SocketFailure on {addr}/Interactive, Connection reset by peer"
        ),
        UPSTREAM: "{detail} (redis {addr})",
    },
    "sql": {
        TIMEOUT: "query on {dst} failed: canceling statement due to statement timeout ({tms} ms)",
        REFUSED: "dial tcp {addr}: connect: connection refused",
        DNS: "dial tcp: lookup {hostname} on 10.96.0.10:53: no such host",
        BLOCKED: "dial tcp {addr}: i/o timeout",
        RESET: "read tcp 10.244.{n}.{n2}:{eport}->{addr}: read: connection reset by peer",
        UPSTREAM: "{detail}",
    },
    "kafka": {
        TIMEOUT: (
            "kafka: Failed to deliver 1 messages: kafka server: Request exceeded the "
            "user-specified time limit in the request ({dst} {addr})"
        ),
        REFUSED: (
            "kafka: client has run out of available brokers to talk to: dial tcp {addr}: "
            "connect: connection refused"
        ),
        DNS: (
            "kafka: client has run out of available brokers to talk to: dial tcp: lookup "
            "{hostname}: no such host"
        ),
        BLOCKED: ("kafka: client has run out of available brokers to talk to: dial tcp {addr}: i/o timeout"),
        RESET: "kafka: broker {addr} disconnected: write: connection reset by peer",
        UPSTREAM: "kafka server: {detail}",
    },
    "amqp": {
        TIMEOUT: (
            "org.springframework.amqp.AmqpTimeoutException: "
            "java.util.concurrent.TimeoutException publishing to {addr}"
        ),
        REFUSED: (
            "org.springframework.amqp.AmqpConnectException: java.net.ConnectException: "
            "Connection refused ({addr})"
        ),
        DNS: "org.springframework.amqp.AmqpIOException: java.net.UnknownHostException: {hostname}",
        BLOCKED: (
            "org.springframework.amqp.AmqpConnectException: java.net.SocketTimeoutException: "
            "connect timed out ({addr})"
        ),
        RESET: (
            "org.springframework.amqp.AmqpIOException: java.net.SocketException: Connection reset ({addr})"
        ),
        UPSTREAM: "{detail}",
    },
}
CLIENT_PREFIX = {
    "go": "failed to {op}: ",
    "java": "[{op}] call failed: ",
    "dotnet": "{op} failed: ",
    "node": "{op} failed: ",
    "python": "{op} failed: ",
    "cpp": "",
    "rust": "",
    "ruby": "",
    "php": "",
    "elixir": "",
}
# proxies (the entry point): envoy's response flags and status, nginx's error log
ENVOY_FLAGS = {TIMEOUT: "UT", REFUSED: "UF", DNS: "UF", BLOCKED: "UF", RESET: "UC", UPSTREAM: "-"}
ENVOY_STATUS = {TIMEOUT: 504, UPSTREAM: 500}
NGINX_ERR = {
    TIMEOUT: "upstream timed out (110: Connection timed out) while reading response header from upstream",
    REFUSED: "connect() failed (111: Connection refused) while connecting to upstream",
    DNS: "{hostname} could not be resolved (3: Host not found)",
    BLOCKED: "upstream timed out (110: Connection timed out) while connecting to upstream",
    RESET: "recv() failed (104: Connection reset by peer) while reading response header from upstream",
    UPSTREAM: "upstream sent invalid response (502) while reading response header from upstream",
}
# ---------------------------------------------------------------- the service's own failures and state
ERROR_TYPE = {FLAG: "flag", BAD_VALUE: "invalid_value", DEP_UNAVAIL: "unavailable", SATURATED: "overloaded"}
OWN_APP_TEXT = {
    "go": "internal error: runtime error: index out of range [3] with length 3",
    "java": ('java.lang.NullPointerException: Cannot invoke "java.util.List.size()" because "items" is null'),
    "dotnet": ("System.NullReferenceException: Object reference not set to an instance of an object."),
    "node": "TypeError: Cannot read properties of undefined (reading 'units')",
    "python": "AttributeError: 'NoneType' object has no attribute 'id'",
    "cpp": "std::out_of_range: map::at",
    "rust": "called `Option::unwrap()` on a `None` value",
    "ruby": "NoMethodError: undefined method `[]' for nil:NilClass",
    "php": "TypeError: Unsupported operand types: string * int",
    "elixir": "** (FunctionClauseError) no function clause matching",
    "nginx": "upstream prematurely closed connection",
    "envoy": "upstream reset",
    "redis": "ERR internal error",
    "postgres": ('ERROR: could not read block 42 in file "base/16384/2619": read only 0 of 8192 bytes'),
    "mysql": "ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction",
    "kafka": (
        "NOT_ENOUGH_REPLICAS: Messages are rejected since there are fewer in-sync replicas than required"
    ),
    "rabbitmq": "channel error: PRECONDITION_FAILED - unknown delivery tag",
}
BAD_VALUE_TEXT = {
    "go": 'strconv.ParseInt: parsing "{value}": invalid syntax',
    "java": 'java.lang.NumberFormatException: For input string: "{value}"',
    "dotnet": "System.FormatException: The input string '{value}' was not in a correct format.",
    "node": 'RangeError: Invalid value "{value}"',
    "python": "ValueError: invalid literal for int() with base 10: '{value}'",
    "_": 'invalid value "{value}"',
}
UNAVAIL_TEXT = {
    "redis": "LOADING Redis is loading the dataset in memory",
    "postgres": "FATAL: the database system is in recovery mode",
    "mysql": "ERROR 1040 (HY000): Too many connections",
    "kafka": (
        "LEADER_NOT_AVAILABLE: There is no leader for this topic-partition as we are in "
        "the middle of a leadership election"
    ),
    "rabbitmq": (
        "connection.close: CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'"
    ),
    "_": "service temporarily unavailable: backend returned 503",
}
SATURATED_TEXT = {
    "java": (
        "java.util.concurrent.RejectedExecutionException: Thread pool is EXHAUSTED! (active: {n}, queue: 100)"
    ),
    "go": "resource exhausted: too many in-flight requests ({n})",
    "dotnet": "System.InvalidOperationException: request queue limit reached ({n})",
    "node": "Error: 8 RESOURCE_EXHAUSTED: server overloaded ({n} pending)",
    "python": "grpc: RESOURCE_EXHAUSTED: too many concurrent RPCs ({n})",
    "nginx": "worker_connections are not enough",
    "envoy": "upstream overflow",
    "postgres": "FATAL: sorry, too many clients already",
    "mysql": "ERROR 1040 (HY000): Too many connections",
    "redis": "ERR max number of clients reached",
    "_": "request rejected: server busy ({n} queued)",
}
SLOW_TEXT = {
    "go": "slow request: {op} took {ms}ms",
    "java": "[{op}] Slow response: {ms} ms",
    "dotnet": "{op} took {ms} ms, longer than expected",
    "node": "request {op} took {ms}ms",
    "python": "{op} slow: {ms} ms",
    "postgres": "LOG: duration: {ms} ms  statement: SELECT * FROM products WHERE id = $1",
    "mysql": "# Query_time: {sec}  Lock_time: 0.000012 Rows_sent: 1  Rows_examined: 4096",
    "redis": "slowlog: {rcmd} took {us} microseconds",
    "_": "{op} completed in {ms} ms (slow)",
}
STARTUP_TEXT = {
    "go": 'starting to listen on tcp: "[::]:{port}"',
    "java": "Started Application in {sec} seconds (process running for {sec2})",
    "dotnet": "Now listening on: http://[::]:{port}",
    "node": "gRPC server started on 0.0.0.0:{port}",
    "python": "server started, listening on port {port}",
    "cpp": "Server listening on port: {port}",
    "rust": "listening on 0.0.0.0:{port}",
    "ruby": "Listening on http://0.0.0.0:{port}",
    "php": "Server running at http://0.0.0.0:{port}",
    "elixir": "Running Phoenix endpoint with cowboy using http://0.0.0.0:{port}",
    "envoy": "starting main dispatch loop",
    "nginx": "start worker processes",
    "redis": "Ready to accept connections tcp",
    "postgres": "LOG: database system is ready to accept connections",
    "mysql": (
        "ready for connections. Version: '8.0.36'  socket: '/var/run/mysqld/mysqld.sock'  port: {port}"
    ),
    "kafka": "[KafkaServer id=1] started (kafka.server.KafkaServer)",
    "rabbitmq": "Server startup complete; 4 plugins started.",
}
# flagd's file sync when its mounted ConfigMap changes (Kubernetes swaps the symlink: a REMOVE
# event), open-feature/flagd core/pkg/sync/file; the line names the file, never the flag changed
FLAGD_RELOAD = "flagd-reload"  # the log context's event for it
FLAGD_RELOAD_TEXT = "filepath event: /etc/flagd/demo.flagd.json REMOVE"
FLAGD_RELOAD_ATTRS = {"component": "sync", "sync": "filepath"}
OOM_TEXT = {
    "go": "fatal error: runtime: out of memory",
    "java": "java.lang.OutOfMemoryError: Java heap space",
    "dotnet": (
        "Unhandled exception. System.OutOfMemoryException: Exception of type "
        "'System.OutOfMemoryException' was thrown."
    ),
    "node": "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
    "python": "MemoryError",
    "ruby": "failed to allocate memory (NoMemoryError)",
    "php": "PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted",
    "redis": "Can't save in background: fork: Cannot allocate memory",
    "_": "out of memory: allocation failed",
}
MEM_HIGH_TEXT = {
    "java": "GC overhead: pause Full GC (Allocation Failure) {n2}M->{n2}M, {ms}ms",
    "go": "memory usage {pct}% of limit, GC running continuously",
    "dotnet": "GC heap size {pct}% of container limit",
    "node": "<--- Last few GCs ---> Mark-Compact (reduce) {ms} ms: average mu = 0.12",
    "python": "memory usage high: rss {pct}% of limit",
    "_": "memory usage {pct}% of limit",
}
CRASH_TEXT = {
    "go": (
        "panic: runtime error: invalid memory address or nil pointer dereference\n[signal "
        "SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x8a3c2f]"
    ),
    "java": (
        'Exception in thread "main" java.lang.IllegalStateException: Failed to execute CommandLineRunner'
    ),
    "dotnet": ("Unhandled exception. System.InvalidOperationException: Sequence contains no elements"),
    "node": (
        "TypeError: Cannot read properties of null (reading 'map')\n    at "
        "process.processTicksAndRejections (node:internal/process/task_queues:95:5)"
    ),
    "python": (
        'Traceback (most recent call last):\n  File "/app/server.py", line 88, in '
        "<module>\nTypeError: 'NoneType' object is not subscriptable"
    ),
    "_": "process exited after an unhandled error (exit code 1)",
}
MISSING_ENV_TEXT = {
    "go": 'panic: environment variable "{key}" not set',
    "java": (
        "java.lang.IllegalArgumentException: Could not resolve placeholder '{key}' in value \"${{{key}}}\""
    ),
    "dotnet": "System.ArgumentNullException: Value cannot be null. (Parameter '{key}')",
    "node": "Error: environment variable {key} is required",
    "python": "KeyError: '{key}'",
    "_": "missing required environment variable {key}",
}
READINESS_TEXT = {
    "go": 'http: "GET {path}" 404 page not found',
    "java": "No mapping for GET {path}",
    "dotnet": "Request finished HTTP/1.1 GET http://{ip}:{port}{path} - 404 0 - {ms}ms",
    "node": "GET {path} 404",
    "python": '"GET {path} HTTP/1.1" 404 -',
    "nginx": '{ip} - - [{clf}] "GET {path} HTTP/1.1" 404 153 "-" "kube-probe/1.29"',
    "_": "GET {path} -> 404 Not Found",
}
REQUEST_OK = {
    "go": ["{op} request served in {ms}ms", "request complete: {op}"],
    "java": ["[{op}][Request handled][{ms} ms]", "{op}: success"],
    "dotnet": ["Request finished {op} - 200 - {ms}ms"],
    "node": ["{op} handled in {ms}ms"],
    "python": ["{op} handled in {ms} ms"],
    "cpp": ["{op} successful"],
    "rust": ["{op} finished in {ms}ms"],
    "ruby": ["Completed {op} in {ms}ms"],
    "php": ["{op} completed"],
    "elixir": ["Sent 200 in {ms}ms"],
    "redis": [],
    "postgres": [],
    "mysql": [],
    "kafka": [],
    "rabbitmq": [],
    "_": ["{op} ok"],
}
# a consumer whose broker is gone: its client's connection errors (Kafka's Java client, librdkafka under
# Confluent.Kafka, Spring AMQP), keyed by (protocol, language family)
BROKER_GONE_TEXT = {
    ("kafka", "java"): (
        "[Consumer clientId={svc}-0, groupId={svc}] Connection to node -1 ({addr_slash}) could not be "
        "established. Broker may not be available."
    ),
    ("kafka", "dotnet"): (
        "%3|rdkafka#consumer-1| [thrd:{addr}/bootstrap]: {addr}/bootstrap: Connect to ipv4#{ip}:{port} "
        "failed: Connection refused (after 0ms in state CONNECT)"
    ),
    ("kafka", "_"): "kafka: client has run out of available brokers to talk to: dial tcp {addr}: connect: "
    "connection refused",
    ("amqp", "_"): (
        "Consumer raised exception, processing can restart if the connection factory supports it. "
        "Exception summary: org.springframework.amqp.AmqpConnectException: java.net.ConnectException: "
        "Connection refused"
    ),
}
RETRY_TEXT = "retrying call to {dst} (attempt {attempt}): {detail}"
CACHE_MISS_TEXT = "cache miss for {pid}, fetching from {dst}"
LAG_TEXT = {
    "java": "Consumer group {svc} is lagging: {lag} records behind on orders-0",
    "_": "consumer lag {lag} records on orders",
}

# service-specific lines seen in the real applications (opentelemetry-demo 2.2, online-boutique)
SERVICE_INFO: dict[tuple[str, str], list[str]] = {
    ("checkout", "go"): [
        "[PlaceOrder] user_id={uid} user_currency={cur}",
        "payment went through (transaction_id: {txn})",
        "order placed",
        'order confirmation email sent to "someone@example.com"',
        "sending to postProcessor",
        "Successful to write message. offset: {n3}, duration: {ms}ms",
    ],
    ("product-catalog", "go"): ["Product Found"],
    ("cart", "dotnet"): [
        "GetCartAsync called with userId={uid}",
        "AddItemAsync called with userId={uid}, productId={pid}, quantity={n}",
        "EmptyCartAsync called with userId={uid}",
    ],
    ("payment", "node"): ["Charge request received.", "Transaction complete."],
    ("currency", "cpp"): ["Convert conversion successful", "GetSupportedCurrencies successful"],
    ("quote", "php"): ["Calculated quote"],
    ("shipping", "rust"): ["Requesting quote", "Sending Quote", "Tracking ID Created"],
    ("email", "ruby"): ["Order confirmation email sent"],
    ("recommendation", "python"): ["Receive ListRecommendations for product ids:['{pid}', '{pid2}']"],
    ("product-reviews", "python"): [
        "Receive GetProductReviews for product id:{pid}",
        "Receive GetAverageProductReviewScore for product id:{pid}",
    ],
    ("ad", "java"): [
        "Targeted ad request received for [telescopes]",
        "Non-targeted ad request received, preparing random response.",
    ],
    ("accounting", "dotnet"): ['Order details: {{"OrderId": "{uid}", "ShippingTrackingId": "{txn}"}}.'],
    ("fraud-detection", "java"): ["Consumed record with orderId: {uid}, and updated total count to: {n3}"],
    ("frontend", "go"): ["request complete", "request started"],
    ("checkoutservice", "go"): [
        '[PlaceOrder] user_id="{uid}" user_currency="{cur}"',
        "payment went through (transaction_id: {txn})",
        'order confirmation email sent to "someone@example.com"',
    ],
    ("cartservice", "dotnet"): [
        "GetCartAsync called with userId={uid}",
        "AddItemAsync called with userId={uid}, productId={pid}, quantity={n}",
    ],
    ("currencyservice", "node"): ["conversion request successful", "Getting supported currencies..."],
    ("paymentservice", "node"): ["Transaction processed: visa ending 0454 Amount: {cur}{n}.{n2}"],
    ("emailservice", "python"): [
        ("A request to send order confirmation email to someone@example.com has been received.")
    ],
    ("recommendationservice", "python"): ["[Recv ListRecommendations] product_ids=['{pid}', '{pid2}']"],
    ("shippingservice", "go"): [
        "[GetQuote] received request",
        "[GetQuote] completed request",
        "[ShipOrder] received request",
    ],
    ("adservice", "java"): ["received ad request (context_words=[clothing, accessories])"],
}
# Astronomy Shop flags: (service whose process logs, level, message) while the flag is on; and
# (gRPC code, error text) callers see when the flag makes the service fail (reference §4.3)
FLAG_LINES: dict[str, list[tuple[str, str, str]]] = {
    "adManualGc": [
        ("ad", "WARN", "Feature Flag adManualGc enabled, performing a manual gc now"),
        ("ad", "INFO", "Triggering a manual garbage collection, next one in {n} seconds."),
        ("ad", "INFO", "The artificially triggered GCs took: {ms} ms"),
    ],
    "adHighCpu": [("ad", "INFO", "High CPU-Load problempattern enabled")],
    "kafkaQueueProblems": [
        (
            "checkout",
            "INFO",
            "Warning: FeatureFlag 'kafkaQueueProblems' is activated, overloading queue now.",
        ),
        ("checkout", "INFO", "Done with #{n3} messages for overload simulation."),
        ("fraud-detection", "INFO", "FeatureFlag 'kafkaQueueProblems' is enabled, sleeping 1 second"),
    ],
    "recommendationCacheFailure": [
        ("recommendation", "INFO", "get_product_list: cache miss"),
        ("recommendation", "INFO", "get_product_list: cache hit"),
    ],
    "llmRateLimitError": [
        ("product-reviews", "INFO", "llmRateLimitError feature flag: True"),
        ("product-reviews", "INFO", "Invoking mock LLM with model: astronomy-llm-rate-limit"),
    ],
    "llmInaccurateResponse": [
        ("product-reviews", "INFO", "Returning an inaccurate response for product_id: {pid}")
    ],
}
# flag -> (gRPC code, text callers see, level the service logs it at)
FLAG_ERROR: dict[str, tuple[str, str, str | None]] = {
    "productCatalogFailure": ("Internal", "Error: Product Catalog Fail Feature Flag Enabled", None),
    "paymentFailure": ("Unknown", "Payment request failed. Invalid token. app.loyalty.level=gold", "WARN"),
    "cartFailure": (
        "FailedPrecondition",
        (
            "Can't access cart storage. StackExchange.Redis.RedisConnectionException: It was not "
            "possible to connect to the redis server(s). UnableToConnect on "
            "badhost:1234/Interactive"
        ),
        "ERROR",
    ),
    "adFailure": (
        "Unavailable",
        "GetAds Failed with status Status{{code=UNAVAILABLE, description=null, cause=null}}",
        "WARN",
    ),
    "llmRateLimitError": (
        "Unknown",
        (
            "Caught Exception: Error code: 429 - {{'error': {{'message': 'Rate limit "
            "exceeded', 'type': 'rate_limit_error'}}}}"
        ),
        "ERROR",
    ),
    "llmInaccurateResponse": ("OK", "Returning an inaccurate response for product_id: {pid}", None),
}
FLAG_CALLER_PREFIX = {
    "productCatalogFailure": 'failed to get product #"OLJCESPC7Z": ',
    "paymentFailure": "failed to charge card: could not charge the card: ",
}
FLAG_ADDRESS = {"paymentUnreachable": "badAddress"}
# values generated into lines (`log_draw.Fill`)
PRODUCT_IDS = (
    "OLJCESPC7Z",
    "66VCHSJNUP",
    "1YMWWN1N4O",
    "L9ECAV7KIM",
    "2ZYFJ3GM2N",
    "0PUK6V6EV0",
    "LS4PSXUNUM",
    "9SIQT8TOJO",
    "6E92ZMYYFZ",
    "HQTGWGPNH4",
)
CURRENCIES = ("USD", "EUR", "CAD", "JPY", "GBP", "TRY")


def pick(table: dict, family: str):
    """The family's entry of a text table, else its default ("_"; None when there is none)."""
    return table.get(family, table.get("_"))


__all__ = [
    "BAD_VALUE_TEXT",
    "BROKER_GONE_TEXT",
    "CACHE_MISS_TEXT",
    "CLIENT_ERR",
    "CLIENT_PREFIX",
    "CRASH_TEXT",
    "CURRENCIES",
    "ENVOY_FLAGS",
    "ENVOY_STATUS",
    "ERROR_TYPE",
    "FAMILY",
    "FLAG_ADDRESS",
    "FLAG_CALLER_PREFIX",
    "FLAG_ERROR",
    "FLAG_LINES",
    "FLAGD_RELOAD",
    "FLAGD_RELOAD_ATTRS",
    "FLAGD_RELOAD_TEXT",
    "GO_HTTP_ERR",
    "LAG_TEXT",
    "MEM_HIGH_TEXT",
    "MISSING_ENV_TEXT",
    "NATIVE_LEVEL",
    "NGINX_ERR",
    "OOM_TEXT",
    "OWN_APP_TEXT",
    "PRODUCT_IDS",
    "PROTO_ERR",
    "READINESS_TEXT",
    "REQUEST_OK",
    "RETRY_TEXT",
    "SATURATED_TEXT",
    "SERVICE_INFO",
    "SLOW_TEXT",
    "STARTUP_TEXT",
    "UNAVAIL_TEXT",
    "pick",
]
