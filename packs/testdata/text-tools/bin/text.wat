;; A stand-in module for the text-tools test pack: packs/ only checks that a
;; tool's .wasm exists inside the pack and starts with the WebAssembly magic.
;; Rebuild with: wat2wasm text.wat -o text.wasm
(module
  (memory (export "memory") 1)
  (func (export "upper") (result i32) i32.const 0)
  (func (export "_start")))
