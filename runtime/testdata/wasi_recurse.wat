;; wasi_recurse: a WASI command that recurses 10 million calls deep through
;; a function with 32 locals, then returns. Without a stack limit, wazero
;; grows its stack to its own ceiling (about 100 MB, and a copy) before it
;; traps; the stack limit must stop it far sooner.
(module
  (func $down (param $n i32) (result i32)
    (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $down (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))
  (func (export "_start")
    (drop (call $down (i32.const 10000000)))))
