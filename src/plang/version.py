"""plang's version (read by the disk cache's keys and by packaging)."""

__version__ = "0.1.0"
