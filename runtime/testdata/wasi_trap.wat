;; wasi_trap: a WASI command that executes unreachable.
(module
  (memory (export "memory") 1)
  (func (export "_start") unreachable))
