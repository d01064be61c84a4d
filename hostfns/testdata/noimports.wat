;; A module with nothing to rename. Rebuild: go generate ./hostfns
(module
  (memory (export "memory") 1)
  (func (export "add") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1))))
