;; plugin: a trivial Extism plugin written by hand against the kernel
;; functions of extism:host/env. Its exports exercise the runtime:
;;   echo   the input becomes the output (the benchmarks' trivial tool)
;;   fail   sets the error "plugin says no" and returns 1
;;   big    outputs 2 MiB (past the default 1 MiB output limit)
;;   loop   never returns (the time limit must stop it)
;;   grow   grows its memory until refused, then traps
;;   trap   executes unreachable
;;   rc     returns 7 without setting an error
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "plugin says no")

  (func (export "echo") (result i32)
    (local $n i64) (local $p i64) (local $i i64)
    (local.set $n (call $input_length))
    (local.set $p (call $alloc (local.get $n)))
    (block $done
      (loop $more
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (if (i64.le_u (i64.add (local.get $i) (i64.const 8)) (local.get $n))
          (then
            (call $store_u64 (i64.add (local.get $p) (local.get $i)) (call $input_load_u64 (local.get $i)))
            (local.set $i (i64.add (local.get $i) (i64.const 8))))
          (else
            (call $store_u8 (i64.add (local.get $p) (local.get $i)) (call $input_load_u8 (local.get $i)))
            (local.set $i (i64.add (local.get $i) (i64.const 1)))))
        (br $more)))
    (call $output_set (local.get $p) (local.get $n))
    (i32.const 0))

  (func (export "fail") (result i32)
    (local $p i64) (local $i i32)
    (local.set $p (call $alloc (i64.const 14)))
    (loop $more
      (call $store_u8 (i64.add (local.get $p) (i64.extend_i32_u (local.get $i))) (i32.load8_u (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (i32.const 14))))
    (call $error_set (local.get $p))
    (i32.const 1))

  (func (export "big") (result i32)
    (call $output_set (call $alloc (i64.const 2097152)) (i64.const 2097152))
    (i32.const 0))

  (func (export "loop") (result i32)
    (loop $forever (br $forever))
    (i32.const 0))

  (func (export "grow") (result i32)
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    unreachable)

  (func (export "trap") (result i32)
    unreachable)

  (func (export "rc") (result i32)
    (i32.const 7)))
