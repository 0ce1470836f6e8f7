"""Rows in, layouts out: Arrow tables, Parquet sources and TREC files (pyarrow lives here)."""
