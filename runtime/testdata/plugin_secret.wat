;; plugin_secret: an Extism plugin that reads the secret API_TOKEN with
;; secret_get (packs:host/secrets, served only under a grant that reveals)
;; and outputs the value: what a tool that reveals a secret could do with
;; it, which the pipeline must mask. It ignores its input.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "packs:host/secrets" "secret_get" (func $secret_get (param i64) (result i64)))
  (memory 1)
  (data (i32.const 0) "API_TOKEN")
  (func (export "get") (result i32)
    (local $p i64) (local $i i32) (local $v i64)
    (local.set $p (call $alloc (i64.const 9)))
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (local.get $i) (i32.const 9)))
        (call $store_u8 (i64.add (local.get $p) (i64.extend_i32_u (local.get $i))) (i32.load8_u (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $more)))
    (local.set $v (call $secret_get (local.get $p)))
    (call $output_set (local.get $v) (call $length (local.get $v)))
    (i32.const 0)))
