;; notify: an Extism plugin, written by hand against the kernel functions
;; of extism:host/env, that tells the person's client how it is doing. Its
;; export "work" logs one line at each of debug, info and warn, reports
;; progress twice ({"progress": 1, "total": 2, "message": "half way"}, then
;; {"progress": 2, "total": 2}), and returns {"done": true}. Its export
;; "tick" only reports {"progress": 1} and returns {"done": true}.
;; Rebuild with: wat2wasm -o notify.wasm notify.wat
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "log_debug" (func $log_debug (param i64)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (import "extism:host/env" "log_warn" (func $log_warn (param i64)))
  (import "packs:host/progress" "progress" (func $progress (param i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "debug: counting")       ;; 15 bytes
  (data (i32.const 32) "info: step one")       ;; 14 bytes
  (data (i32.const 64) "warn: almost done")    ;; 17 bytes
  (data (i32.const 96) "{\"progress\": 1, \"total\": 2, \"message\": \"half way\"}") ;; 50 bytes
  (data (i32.const 160) "{\"progress\": 2, \"total\": 2}") ;; 27 bytes
  (data (i32.const 192) "{\"done\": true}")      ;; 14 bytes
  (data (i32.const 224) "{\"progress\": 1}")     ;; 15 bytes
  ;; block copies len bytes at ptr into a fresh Extism memory block.
  (func $block (param $ptr i32) (param $len i32) (result i64)
    (local $off i64) (local $i i32)
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $off))
  (func (export "work") (result i32)
    (call $log_debug (call $block (i32.const 0) (i32.const 15)))
    (call $log_info (call $block (i32.const 32) (i32.const 14)))
    (call $progress (call $block (i32.const 96) (i32.const 50)))
    (call $log_warn (call $block (i32.const 64) (i32.const 17)))
    (call $progress (call $block (i32.const 160) (i32.const 27)))
    (call $output_set (call $block (i32.const 192) (i32.const 14)) (i64.const 14))
    (i32.const 0))
  (func (export "tick") (result i32)
    (call $progress (call $block (i32.const 224) (i32.const 15)))
    (call $output_set (call $block (i32.const 192) (i32.const 14)) (i64.const 14))
    (i32.const 0)))
