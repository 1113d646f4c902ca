"""Why a call failed: the cause codes log lines and traces share, and the status codes each one shows.

Apart from both because they must agree: an error log line carries the id of a trace *forced* to
fail the way the line says, and the id packs the cause (4 bits) and the forced kind (2 bits), so
`log_lines`, `log_causes` and `traces` read the same codes from here.
"""

from __future__ import annotations

# outcome causes (4 bits in a trace id): the service's own failures, then the call's
OWN_APP, BAD_VALUE, DEP_UNAVAIL, SATURATED, FLAG, TIMEOUT, REFUSED, DNS, BLOCKED, RESET, UPSTREAM = range(11)
CAUSE_NAMES = (
    "app_error",
    "bad_value",
    "unavailable",
    "saturated",
    "flag",
    "timeout",
    "refused",
    "dns",
    "blocked",
    "reset",
    "upstream",
)
OWN_CAUSES = frozenset({OWN_APP, BAD_VALUE, DEP_UNAVAIL, SATURATED, FLAG})
# forced kinds (2 bits): what a trace is conditioned on (nothing, an edge's or a service's failure, success)
F_NONE, F_EDGE, F_OWN, F_OK = range(4)

GRPC_CODE = {
    TIMEOUT: "DeadlineExceeded",
    REFUSED: "Unavailable",
    DNS: "Unavailable",
    BLOCKED: "DeadlineExceeded",
    RESET: "Unavailable",
    OWN_APP: "Unknown",
    BAD_VALUE: "InvalidArgument",
    DEP_UNAVAIL: "Unavailable",
    SATURATED: "ResourceExhausted",
    FLAG: "Internal",
}
HTTP_STATUS = {
    TIMEOUT: 504,
    REFUSED: 503,
    DNS: 502,
    BLOCKED: 504,
    RESET: 502,
    OWN_APP: 500,
    BAD_VALUE: 500,
    DEP_UNAVAIL: 503,
    SATURATED: 503,
    FLAG: 500,
}
# gRPC status code numbers by name (`rpc.grpc.status_code`, node's "Error: 14 UNAVAILABLE")
CODE_NUM = {
    "OK": 0,
    "Canceled": 1,
    "Unknown": 2,
    "InvalidArgument": 3,
    "DeadlineExceeded": 4,
    "NotFound": 5,
    "ResourceExhausted": 8,
    "FailedPrecondition": 9,
    "Internal": 13,
    "Unavailable": 14,
}

__all__ = [
    "BAD_VALUE",
    "BLOCKED",
    "CAUSE_NAMES",
    "CODE_NUM",
    "DEP_UNAVAIL",
    "DNS",
    "FLAG",
    "F_EDGE",
    "F_NONE",
    "F_OK",
    "F_OWN",
    "GRPC_CODE",
    "HTTP_STATUS",
    "OWN_APP",
    "OWN_CAUSES",
    "REFUSED",
    "RESET",
    "SATURATED",
    "TIMEOUT",
    "UPSTREAM",
]
