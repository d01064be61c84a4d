;; wasi_echo: a WASI command that copies stdin to stdout and logs one line
;; to stderr. The runtime's trivial WASI tool.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; 0..8: iovec {buf, len}; 8: n read/written; 16..: "echo: ok\n"; 1024..: buffer
  (data (i32.const 16) "echo: ok\n")
  (func $write (param $fd i32) (param $buf i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $buf))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "_start")
    (local $n i32)
    (block $eof
      (loop $more
        (i32.store (i32.const 0) (i32.const 1024))
        (i32.store (i32.const 4) (i32.const 60000))
        (br_if $eof (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (local.set $n (i32.load (i32.const 8)))
        (br_if $eof (i32.eqz (local.get $n)))
        (call $write (i32.const 1) (i32.const 1024) (local.get $n))
        (br $more)))
    (call $write (i32.const 2) (i32.const 16) (i32.const 9))))
