;; asknote: an Extism plugin that writes "# Note\n" to note.md in the
;; workspace preopen (WASI), then asks the person a yes/no question
;; (packs:host/ask) and outputs the answer. A test does something in the
;; workspace while the question is open: in the middle of the call.
(module
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $prestat (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $dir_name (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "packs:host/ask" "ask" (func $ask (param i64) (result i64)))
  (memory (export "memory") 1)
  ;; 0: iovec; 8: count; 16: prestat; 24: opened fd; 32: "/workspace";
  ;; 48: "note.md"; 64: "# Note\n"; 128: a preopen's name; 256: the question
  (data (i32.const 32) "/workspace")
  (data (i32.const 48) "note.md")
  (data (i32.const 64) "# Note\n")
  (data (i32.const 256) "{\22message\22:\22Keep the note?\22,\22schema\22:{\22type\22:\22object\22,\22properties\22:{}}}")
  ;; the fd of the /workspace preopen, or -1
  (func $workspace (result i32)
    (local $fd i32)
    (local.set $fd (i32.const 3))
    (block $none
      (loop $next
        (br_if $none (call $prestat (local.get $fd) (i32.const 16)))
        (if (i32.eq (i32.load (i32.const 20)) (i32.const 10))
          (then
            (drop (call $dir_name (local.get $fd) (i32.const 128) (i32.const 10)))
            (if (i64.eq (i64.load (i32.const 128)) (i64.load (i32.const 32)))
              (then (return (local.get $fd))))))
        (local.set $fd (i32.add (local.get $fd) (i32.const 1)))
        (br $next)))
    (i32.const -1))
  (func (export "run") (result i32)
    (local $p i64) (local $i i64) (local $v i64)
    ;; oflags creat|trunc (9), rights fd_write (64)
    (drop (call $path_open (call $workspace) (i32.const 0) (i32.const 48) (i32.const 7)
      (i32.const 9) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 24)))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 7))
    (drop (call $fd_write (i32.load (i32.const 24)) (i32.const 0) (i32.const 1) (i32.const 8)))
    (drop (call $fd_close (i32.load (i32.const 24))))
    ;; the question (71 bytes at 256) into a block
    (local.set $p (call $alloc (i64.const 71)))
    (block $done
      (loop $more
        (br_if $done (i64.ge_u (local.get $i) (i64.const 71)))
        (call $store_u8 (i64.add (local.get $p) (local.get $i))
          (i32.load8_u (i32.add (i32.const 256) (i32.wrap_i64 (local.get $i)))))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $more)))
    (local.set $v (call $ask (local.get $p)))
    (call $output_set (local.get $v) (call $length (local.get $v)))
    (i32.const 0)))
