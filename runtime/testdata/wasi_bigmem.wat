;; wasi_bigmem: a WASI command that declares 2048 pages (128 MiB) of memory
;; up front: over the default limit before it runs at all.
(module
  (memory (export "memory") 2048)
  (func (export "_start")))
