;; wasi_bigtable: a WASI command whose table declares 16M elements (128 MiB
;; in wazero) up front. The table limit must refuse it before it is made.
(module
  (table 16777216 funcref)
  (func (export "_start")))
