;; A module importing one of everything RewriteImports must carry over:
;; Extism host functions it renames, one it keeps, a packs namespace, and
;; table, memory and global imports. Rebuild: go generate ./hostfns
(module
  (type $req (func (param i64 i64) (result i64)))
  (import "extism:host/env" "http_request" (func $http_request (type $req)))
  (import "extism:host/env" "http_status_code" (func $http_status (result i32)))
  (import "extism:host/env" "http_headers" (func $http_headers (result i64)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (import "extism:host/env" "get_log_level" (func $get_log_level (result i32)))
  (import "extism:host/env" "config_get" (func $config_get (param i64) (result i64)))
  (import "packs:host/exec" "exec" (func $exec (param i64) (result i64)))
  (import "env" "table" (table 2 funcref))
  (import "env" "memory" (memory 1 4))
  (import "env" "flag" (global $flag (mut i32)))
  (func (export "run") (result i32)
    (drop (call $http_request (i64.const 0) (i64.const 0)))
    (drop (call $alloc (i64.const 8)))
    (call $log_info (i64.const 0))
    (global.get $flag)))
