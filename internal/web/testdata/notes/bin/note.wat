;; note: a WASI command that writes "# Note" to note.md in the workspace
;; preopen and answers {"written":"note.md"}, to test artifacts.
(module
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $prestat (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $dir_name (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; 0: iovec; 8: count; 16: prestat; 24: opened fd; 32: "/workspace";
  ;; 48: "note.md"; 64: "# Note\n"; 80: the answer; 128: a preopen's name
  (data (i32.const 32) "/workspace")
  (data (i32.const 48) "note.md")
  (data (i32.const 64) "# Note\n")
  (data (i32.const 80) "{\22written\22:\22note.md\22}")
  (func $write (param $fd i32) (param $buf i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $buf))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))
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
  (func (export "_start")
    ;; oflags creat|trunc (9), rights fd_write (64)
    (drop (call $path_open (call $workspace) (i32.const 0) (i32.const 48) (i32.const 7)
      (i32.const 9) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 24)))
    (call $write (i32.load (i32.const 24)) (i32.const 64) (i32.const 7))
    (call $write (i32.const 1) (i32.const 80) (i32.const 21))))
