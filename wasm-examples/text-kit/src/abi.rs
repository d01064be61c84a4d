//! The Extism kernel ABI by hand. An Extism host links every plugin against
//! the module "extism:host/env", whose memory lives outside the plugin's
//! linear memory: the plugin reads its input and writes its output a word at
//! a time through these imports, addressing the host's memory by u64 offsets.
//! README.md documents each function; the signatures match go-sdk v1.7.1
//! (host.go) and go-pdk v1.1.3 (internal/memory).

#[link(wasm_import_module = "extism:host/env")]
extern "C" {
    /// Length in bytes of the call's input.
    fn input_length() -> u64;
    /// Eight input bytes at offset (a multiple of 8), little-endian.
    fn input_load_u64(offset: u64) -> u64;
    /// One input byte at offset.
    fn input_load_u8(offset: u64) -> u32;
    /// Reserves length bytes of host memory; returns their offset.
    fn alloc(length: u64) -> u64;
    /// Writes eight bytes at offset in host memory.
    fn store_u64(offset: u64, value: u64);
    /// Writes one byte at offset in host memory.
    fn store_u8(offset: u64, value: u32);
    /// Makes the block at offset, of length bytes, the call's output.
    fn output_set(offset: u64, length: u64);
    /// Makes the block at offset (a string) the call's error.
    fn error_set(offset: u64);
}

fn read_input() -> Vec<u8> {
    // SAFETY: the imports only read host memory within the input's bounds,
    // which input_length reports; we never go past it.
    unsafe {
        let n = input_length();
        let mut buf = Vec::with_capacity(n as usize);
        let words = n / 8;
        for i in 0..words {
            buf.extend_from_slice(&input_load_u64(i * 8).to_le_bytes());
        }
        for i in words * 8..n {
            buf.push(input_load_u8(i) as u8);
        }
        buf
    }
}

/// Copies bytes into a fresh block of host memory and returns its offset.
fn to_host(bytes: &[u8]) -> u64 {
    // SAFETY: we write only inside the block that alloc just returned.
    unsafe {
        let offset = alloc(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        let mut at = offset;
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            store_u64(at, u64::from_le_bytes(w));
            at += 8;
        }
        for &b in chunks.remainder() {
            store_u8(at, b as u32);
            at += 1;
        }
        offset
    }
}

/// Runs one tool over the input; the return value is the Extism status
/// (0 success, 1 failure with the error set).
fn call(tool: fn(&[u8]) -> crate::ToolResult) -> i32 {
    match tool(&read_input()) {
        Ok(out) => {
            let offset = to_host(out.as_bytes());
            // SAFETY: offset and length describe the block to_host filled.
            unsafe { output_set(offset, out.len() as u64) };
            0
        }
        Err(msg) => {
            let offset = to_host(msg.as_bytes());
            // SAFETY: offset is a block to_host filled with the message.
            unsafe { error_set(offset) };
            1
        }
    }
}

#[no_mangle]
pub extern "C" fn stats() -> i32 {
    call(crate::stats)
}

#[no_mangle]
pub extern "C" fn slugify() -> i32 {
    call(crate::slugify)
}

#[no_mangle]
pub extern "C" fn convert_case() -> i32 {
    call(crate::convert_case)
}

#[no_mangle]
pub extern "C" fn diff_stats() -> i32 {
    call(crate::diff_stats)
}
