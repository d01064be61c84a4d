/work/main/wasm-examples/text-kit/target/debug/deps/libtext_kit.so: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs

/work/main/wasm-examples/text-kit/target/debug/deps/libtext_kit.rlib: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs

/work/main/wasm-examples/text-kit/target/debug/deps/text_kit.d: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs

src/lib.rs:
src/case.rs:
src/diff.rs:
src/json.rs:
src/text.rs:
