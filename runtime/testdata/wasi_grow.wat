;; wasi_grow: a WASI command that grows its memory one page at a time and
;; traps when a growth is refused. The memory limit must stop it.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    unreachable))
