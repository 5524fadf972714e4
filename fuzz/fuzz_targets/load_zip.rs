//! Arbitrary bytes as an `.sb3` container: zip parsing, entry limits and the
//! bounded reads must hold for any bytes (seeded with real sb3 files).
#![no_main]

use clowder_vm::project::{LoadLimits, load};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = LoadLimits { max_uncompressed_bytes: 64 << 20, ..LoadLimits::default() };
    let mut bytes = data.to_vec();
    // Always take the zip path.
    if !bytes.starts_with(b"PK") {
        bytes.splice(0..0, *b"PK");
    }
    let _ = load(&bytes, "fuzz.sb3", &limits);
});
