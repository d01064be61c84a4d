;; plugin_init: an Extism plugin with a reactor initializer and state.
;;   _initialize  counts its runs
;;   count        outputs that count as one digit: the runtime must run the
;;                initializer exactly once, before the call
;;   bump         adds one to a counter and outputs it: in a fresh instance
;;                per call, every call sees 1
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (global $inits (mut i32) (i32.const 0))
  (global $bumps (mut i32) (i32.const 0))
  (func $digit (param $d i32)
    (local $p i64)
    (local.set $p (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $p) (i32.add (i32.const 48) (local.get $d)))
    (call $output_set (local.get $p) (i64.const 1)))
  (func (export "_initialize")
    (global.set $inits (i32.add (global.get $inits) (i32.const 1))))
  (func (export "count") (result i32)
    (call $digit (global.get $inits))
    (i32.const 0))
  (func (export "bump") (result i32)
    (global.set $bumps (i32.add (global.get $bumps) (i32.const 1)))
    (call $digit (global.get $bumps))
    (i32.const 0)))
