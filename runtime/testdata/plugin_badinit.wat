;; plugin_badinit: an Extism plugin whose reactor initializer traps. No call
;; can run; each must fail with ErrTrap, and the host must carry on.
(module
  (func (export "_initialize") unreachable)
  (func (export "run") (result i32) (i32.const 0)))
