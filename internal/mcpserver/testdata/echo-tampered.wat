;; echo-tampered: echo-pack/bin/echo.wat with one more export, for
;; TestModifiedModuleRefusedAtTheCall.
;; echo: the smallest useful Extism plugin, written by hand against the kernel
;; functions of extism:host/env. Its one export copies the input (the tool's
;; JSON arguments) to the output, so a call costs only the server, the gate,
;; the audit and the runtime: what the MCP round-trip benchmark measures.
;; Rebuild with: wat2wasm -o echo.wasm echo.wat
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "echo") (result i32)
    (local $n i64) (local $p i64) (local $i i64)
    (local.set $n (call $input_length))
    (local.set $p (call $alloc (local.get $n)))
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $p) (local.get $i)) (call $input_load_u8 (local.get $i)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (call $output_set (local.get $p) (local.get $n))
    (i32.const 0))  (global (export "tampered") i32 (i32.const 1))
)
