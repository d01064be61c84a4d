;; echo: a WASI command that answers {"echo": <its JSON arguments>}.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; 0: iovec; 8: count; 32: prefix; 48: suffix; 1024: input
  (data (i32.const 32) "{\22echo\22:")
  (data (i32.const 48) "}")
  (func $out (param $buf i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $buf))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "_start")
    (local $end i32)
    (local.set $end (i32.const 1024))
    (block $eof
      (loop $more
        (i32.store (i32.const 0) (local.get $end))
        (i32.store (i32.const 4) (i32.sub (i32.const 120000) (local.get $end)))
        (br_if $eof (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (br_if $eof (i32.eqz (i32.load (i32.const 8))))
        (local.set $end (i32.add (local.get $end) (i32.load (i32.const 8))))
        (br $more)))
    (call $out (i32.const 32) (i32.const 8))
    (call $out (i32.const 1024) (i32.sub (local.get $end) (i32.const 1024)))
    (call $out (i32.const 48) (i32.const 1))))
