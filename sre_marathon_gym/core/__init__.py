"""The foundation: errors, time, safe regexes, CPU-independent math, Kubernetes quantities, plain
tables, the log query language, the recorded run's schema, argument types and deprecation aliases.

Every other layer builds on these, so they import nothing of the package but each other.
"""
