"""The foundation: errors, time, safe regexes, CPU-independent math, Kubernetes quantities, plain
tables, the log query language, the recorded run's schema and deprecation aliases.

May import: nothing of the package but each other (every other layer builds on these).
"""
