;; rows: a WASI command that answers a fixed list of records (tests the
;; table view of a result).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "{\22services\22:[{\22service\22:\22checkout-api\22,\22errors\22:40,\22first\22:\2214:03\22,\22last\22:\2214:10\22},{\22service\22:\22worker\22,\22errors\22:21,\22first\22:\2214:03\22,\22last\22:\2214:10\22},{\22service\22:\22nginx\22,\22errors\22:77,\22first\22:\2214:03\22,\22last\22:\2214:11\22}],\22window\22:\2213:30-14:30\22}")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 234))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
