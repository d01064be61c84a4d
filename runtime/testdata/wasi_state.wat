;; wasi_state: plugin_state as a WASI command. _start prints four
;; characters: memory, global and table ("0" untouched, "1" changed by an
;; earlier call), then "0" + the number of open file descriptors; then it
;; changes each (it opens the workspace directory and leaves it open). A
;; fresh instance per call prints the same every time.
(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $fdstat (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $fd_prestat_dir_name (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (type $ret (func (result i32)))
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 0))
  (table $t 1 funcref)
  (elem (i32.const 0) $zero)
  (elem declare func $one)
  ;; 0: iovec; 100: "."; 200: prestat; 300: dir name; 500: "/workspace";
  ;; 600: opened fd; 700: fdstat; 800: output; 1000: the memory cell
  (data (i32.const 100) ".")
  (data (i32.const 500) "/workspace")
  (func $zero (type $ret) (i32.const 0))
  (func $one (type $ret) (i32.const 1))
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
  (func $open_fds (result i32)
    (local $fd i32) (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eq (local.get $fd) (i32.const 64)))
        (if (i32.eqz (call $fdstat (local.get $fd) (i32.const 700)))
          (then (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (local.set $fd (i32.add (local.get $fd) (i32.const 1)))
        (br $next)))
    (local.get $n))
  (func (export "_start")
    (i32.store8 (i32.const 800) (i32.add (i32.const 48) (i32.load8_u (i32.const 1000))))
    (i32.store8 (i32.const 801) (i32.add (i32.const 48) (global.get $g)))
    (i32.store8 (i32.const 802) (i32.add (i32.const 48) (call_indirect (type $ret) (i32.const 0))))
    (i32.store8 (i32.const 803) (i32.add (i32.const 48) (call $open_fds)))
    (i32.store8 (i32.const 1000) (i32.const 1))
    (global.set $g (i32.const 1))
    (table.set $t (i32.const 0) (ref.func $one))
    (drop (call $path_open (call $workspace) (i32.const 0) (i32.const 100) (i32.const 1)
      (i32.const 2) (i64.const 16384) (i64.const 0) (i32.const 0) (i32.const 600)))
    (i32.store (i32.const 0) (i32.const 800))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
