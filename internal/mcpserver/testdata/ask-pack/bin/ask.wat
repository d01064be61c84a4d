;; plugin_ask: an Extism plugin that puts its input, as is, to the person
;; with ask (packs:host/ask) and outputs the answer: the request JSON in,
;; the answer JSON out.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "packs:host/ask" "ask" (func $ask (param i64) (result i64)))
  (memory 1)
  (func (export "ask") (result i32)
    (local $n i64) (local $p i64) (local $i i64) (local $v i64)
    (local.set $n (call $input_length))
    (local.set $p (call $alloc (local.get $n)))
    (block $done
      (loop $more
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $p) (local.get $i)) (call $input_load_u8 (local.get $i)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $more)))
    (local.set $v (call $ask (local.get $p)))
    (call $output_set (local.get $v) (call $length (local.get $v)))
    (i32.const 0)))
