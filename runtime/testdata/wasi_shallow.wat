;; wasi_shallow: a WASI command that recurses 1,000 calls deep, grows its
;; table by 1,000 elements and exits 0: well within every limit.
(module
  (table $t 1 funcref)
  (func $down (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $down (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))
  (func (export "_start")
    (if (i32.ne (call $down (i32.const 1000)) (i32.const 1000)) (then unreachable))
    (if (i32.eq (table.grow $t (ref.null func) (i32.const 1000)) (i32.const -1)) (then unreachable))))
