;; spin: a WASI command that never ends, to test the time limit.
(module
  (memory (export "memory") 1)
  (func (export "_start") (loop $forever (br $forever))))
