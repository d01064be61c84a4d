/work/main/wasm-examples/text-kit/target/debug/deps/text_kit-6a0ca3aae1359db9: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs

/work/main/wasm-examples/text-kit/target/debug/deps/text_kit-6a0ca3aae1359db9.d: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs

src/lib.rs:
src/case.rs:
src/diff.rs:
src/json.rs:
src/text.rs:
