;; plugin_http: an Extism plugin that passes its input, an Extism HTTP request
;; ({"url": ..., "method": ...}), to http_request and outputs the response
;; body. It imports http_request from extism:host/env as every PDK does; the
;; runtime moves that import to the audited network host functions.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "http_request" (func $http_request (param i64 i64) (result i64)))
  (func (export "get") (result i32)
    (local $n i64) (local $p i64) (local $i i64) (local $body i64)
    (local.set $n (call $input_length))
    (local.set $p (call $alloc (local.get $n)))
    (block $done
      (loop $more
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $p) (local.get $i)) (call $input_load_u8 (local.get $i)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $more)))
    (local.set $body (call $http_request (local.get $p) (i64.const 0)))
    (call $output_set (local.get $body) (call $length (local.get $body)))
    (i32.const 0)))
