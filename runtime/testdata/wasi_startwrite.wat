;; wasi_startwrite: a WASI command whose start section appends "x\n" to
;; /workspace/start.log. A start section runs when the module is
;; instantiated, so a pool that pre-instantiates would run it before the call
;; is approved: the runtime must not let it touch anything then. _start
;; prints {} and exits 0.
(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $fd_prestat_dir_name (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; 100: "start.log"; 120: "x\n"; 130: "{}"; 200: prestat; 300: dir name; 500: "/workspace"
  (data (i32.const 100) "start.log")
  (data (i32.const 120) "x\n")
  (data (i32.const 130) "{}")
  (data (i32.const 500) "/workspace")
  (func $workspace (result i32)
    (local $fd i32) (local $i i32)
    (local.set $fd (i32.const 3))
    (block $none
      (loop $next
        (br_if $none (call $fd_prestat_get (local.get $fd) (i32.const 200)))
        (if (i32.eq (i32.load (i32.const 204)) (i32.const 10))
          (then
            (drop (call $fd_prestat_dir_name (local.get $fd) (i32.const 300) (i32.const 10)))
            (local.set $i (i32.const 0))
            (block $differ
              (loop $cmp
                (if (i32.eq (local.get $i) (i32.const 10)) (then (return (local.get $fd))))
                (br_if $differ (i32.ne (i32.load8_u (i32.add (i32.const 300) (local.get $i)))
                                        (i32.load8_u (i32.add (i32.const 500) (local.get $i)))))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $cmp)))))
        (local.set $fd (i32.add (local.get $fd) (i32.const 1)))
        (br $next)))
    (i32.const -1))
  (func $append
    ;; oflags creat = 1; rights fd_write (1<<6); fdflags append = 1
    (if (i32.eqz (call $path_open (call $workspace) (i32.const 0) (i32.const 100) (i32.const 9)
          (i32.const 1) (i64.const 64) (i64.const 0) (i32.const 1) (i32.const 600)))
      (then
        (i32.store (i32.const 0) (i32.const 120))
        (i32.store (i32.const 4) (i32.const 2))
        (drop (call $fd_write (i32.load (i32.const 600)) (i32.const 0) (i32.const 1) (i32.const 8)))
        (drop (call $fd_close (i32.load (i32.const 600)))))))
  (start $append)
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 130))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
