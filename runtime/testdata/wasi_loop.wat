;; wasi_loop: a WASI command that never ends. The time limit must stop it.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (br $forever))))
