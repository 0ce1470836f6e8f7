"""The version of fastndcg (read by the build from this file)."""

__version__ = "0.1.0"
