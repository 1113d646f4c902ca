"""The package's version, in the foundation so that what records it (bundles, run records, the MCP
server) needs no import of the package root, which imports the environments."""

__version__ = "0.1.0"
