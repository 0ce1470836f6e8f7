"""The metric itself, independent of where the data comes from and of how it is computed.

options (the vocabulary and its parsers) -> coerce (arrays in, checked) -> grouping (query
ids to offsets) -> layout (the CSR every backend reads) -> plan (options meet the data) ->
definition (create, score, finish) and aggregate (means and tools' rules).
"""
