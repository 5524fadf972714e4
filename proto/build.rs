//! Generates the gRPC code from `proto/clowder/v1/clowder.proto`.
//!
//! protoc comes from the `protoc-bin-vendored` crate so a fresh machine needs no
//! system package; a `PROTOC` environment variable still wins.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()?;
        // SAFETY: build scripts are single-threaded; nothing else reads the
        // environment concurrently.
        unsafe { std::env::set_var("PROTOC", protoc) };
    }
    println!("cargo:rerun-if-changed=proto/clowder/v1/clowder.proto");
    tonic_prost_build::configure().compile_protos(&["proto/clowder/v1/clowder.proto"], &["proto"])?;
    Ok(())
}
