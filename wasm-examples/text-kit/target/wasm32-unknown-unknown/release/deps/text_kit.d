/work/main/wasm-examples/text-kit/target/wasm32-unknown-unknown/release/deps/text_kit.wasm: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs src/abi.rs

/work/main/wasm-examples/text-kit/target/wasm32-unknown-unknown/release/deps/libtext_kit.rlib: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs src/abi.rs

/work/main/wasm-examples/text-kit/target/wasm32-unknown-unknown/release/deps/text_kit.d: src/lib.rs src/case.rs src/diff.rs src/json.rs src/text.rs src/abi.rs

src/lib.rs:
src/case.rs:
src/diff.rs:
src/json.rs:
src/text.rs:
src/abi.rs:
