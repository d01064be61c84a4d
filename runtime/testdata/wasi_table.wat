;; wasi_table: a WASI command that grows a table by 1M elements at a time
;; (8 MiB each in wazero) up to 32M elements (256 MiB), and traps when a
;; growth is refused. The table limit must refuse it long before.
(module
  (table $t 1 externref)
  (func (export "_start")
    (local $i i32)
    (loop $more
      (if (i32.eq (table.grow $t (ref.null extern) (i32.const 1048576)) (i32.const -1))
        (then unreachable))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (i32.const 32))))))
