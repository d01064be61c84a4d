;; kernel: imports every Extism kernel function go-sdk forwards, with its
;; signatures, and echoes its input through them (kernel_test.go).
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "input_set" (func $input_set (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_offset" (func $input_offset (result i64)))
  (import "extism:host/env" "output_length" (func $output_length (result i64)))
  (import "extism:host/env" "output_offset" (func $output_offset (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "length_unsafe" (func $length_unsafe (param i64) (result i64)))
  (import "extism:host/env" "reset" (func $reset))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (import "extism:host/env" "error_get" (func $error_get (result i64)))
  (import "extism:host/env" "memory_bytes" (func $memory_bytes (result i64)))
  (memory (export "memory") 1)

  ;; echo: the input back, copied a byte at a time into a new block, each
  ;; byte read back through load_u8; traps when a kernel answer is wrong.
  (func (export "echo") (result i32)
    (local $n i64) (local $p i64) (local $i i64) (local $b i32)
    (local.set $n (call $input_length))
    (if (i32.and (i64.ne (local.get $n) (i64.const 0)) (i64.eqz (call $input_offset))) (then unreachable))
    (if (i64.eqz (call $memory_bytes)) (then unreachable))
    (if (i64.ne (call $error_get) (i64.const 0)) (then unreachable))
    (local.set $p (call $alloc (local.get $n)))
    (if (i64.ne (local.get $n) (i64.const 0))
      (then
        (if (i64.ne (call $length (local.get $p)) (local.get $n)) (then unreachable))
        (if (i64.ne (call $length_unsafe (local.get $p)) (local.get $n)) (then unreachable))))
    (block $done
      (loop $more
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $b (call $input_load_u8 (local.get $i)))
        (call $store_u8 (i64.add (local.get $p) (local.get $i)) (local.get $b))
        (if (i32.ne (call $load_u8 (i64.add (local.get $p) (local.get $i))) (local.get $b)) (then unreachable))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $more)))
    (call $output_set (local.get $p) (local.get $n))
    (if (i64.ne (call $output_offset) (local.get $p)) (then unreachable))
    (if (i64.ne (call $output_length) (local.get $n)) (then unreachable))
    (i32.const 0))

  ;; fail: sets the error "no" (a block the kernel frees with reset).
  (func (export "fail") (result i32)
    (local $p i64)
    (local.set $p (call $alloc (i64.const 2)))
    (call $store_u8 (local.get $p) (i32.const 110))
    (call $store_u8 (i64.add (local.get $p) (i64.const 1)) (i32.const 111))
    (call $error_set (local.get $p))
    (i32.const 1))

  ;; scratch: allocates and frees a block, then resets the kernel
  ;; (input_set and reset exist for the host; a guest may call them).
  (func (export "scratch") (result i32)
    (call $free (call $alloc (i64.const 16)))
    (call $input_set (i64.const 0) (i64.const 0))
    (call $reset)
    (i32.const 0)))
