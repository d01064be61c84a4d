;; wasi_files: a WASI command that writes "hello" to /workspace/out.txt (a
;; preopen the runtime must provide) and then tries to create /pack/evil.txt
;; (read-only: must fail). It prints {"workspace":E1,"pack":E2} with the two
;; WASI errnos (0 is success).
(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $fd_prestat_dir_name (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; 100: "out.txt"; 110: "evil.txt"; 120: "hello"; 200: prestat; 300: dir name
  (data (i32.const 100) "out.txt")
  (data (i32.const 110) "evil.txt")
  (data (i32.const 120) "hello")
  (data (i32.const 400) "{\22workspace\22:0,\22pack\22:00}")
  ;; find the preopen named name (len) and return its fd, or -1
  (func $preopen (param $name i32) (param $len i32) (result i32)
    (local $fd i32) (local $i i32)
    (local.set $fd (i32.const 3))
    (block $none
      (loop $next
        (br_if $none (call $fd_prestat_get (local.get $fd) (i32.const 200)))
        (if (i32.eq (i32.load (i32.const 204)) (local.get $len))
          (then
            (drop (call $fd_prestat_dir_name (local.get $fd) (i32.const 300) (local.get $len)))
            (local.set $i (i32.const 0))
            (block $differ
              (loop $cmp
                (if (i32.eq (local.get $i) (local.get $len)) (then (return (local.get $fd))))
                (br_if $differ (i32.ne (i32.load8_u (i32.add (i32.const 300) (local.get $i)))
                                        (i32.load8_u (i32.add (local.get $name) (local.get $i)))))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $cmp)))))
        (local.set $fd (i32.add (local.get $fd) (i32.const 1)))
        (br $next)))
    (i32.const -1))
  (data (i32.const 500) "/workspace")
  (data (i32.const 520) "/pack")
  ;; create name (len) in dir fd, write "hello"; return the errno
  (func $create (param $dir i32) (param $name i32) (param $len i32) (result i32)
    (local $err i32)
    ;; oflags: creat|trunc = 1|8; rights: fd_write (1<<6)
    (local.set $err (call $path_open (local.get $dir) (i32.const 0) (local.get $name) (local.get $len)
      (i32.const 9) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 600)))
    (if (i32.eqz (local.get $err))
      (then
        (i32.store (i32.const 0) (i32.const 120))
        (i32.store (i32.const 4) (i32.const 5))
        (drop (call $fd_write (i32.load (i32.const 600)) (i32.const 0) (i32.const 1) (i32.const 8)))))
    (local.get $err))
  (func (export "_start")
    (local $e i32)
    (local.set $e (call $create (call $preopen (i32.const 500) (i32.const 10)) (i32.const 100) (i32.const 7)))
    (i32.store8 (i32.const 413) (i32.add (i32.const 48) (i32.rem_u (local.get $e) (i32.const 10))))
    (local.set $e (call $create (call $preopen (i32.const 520) (i32.const 5)) (i32.const 110) (i32.const 8)))
    (i32.store8 (i32.const 422) (i32.add (i32.const 48) (i32.div_u (local.get $e) (i32.const 10))))
    (i32.store8 (i32.const 423) (i32.add (i32.const 48) (i32.rem_u (local.get $e) (i32.const 10))))
    (i32.store (i32.const 0) (i32.const 400))
    (i32.store (i32.const 4) (i32.const 25))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
