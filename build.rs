//! Links the page's wasm with its relocations kept (`--emit-relocs`, wasm-ld): trainplan-bundle reads
//! them to split the module at its `wasm_split` points (src/components/deferred.rs,
//! tools/bundle/src/split.rs). Only the page's bin, and only for wasm: the launch-file reader and
//! every native build link as before.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-bin=trainplan-web=--emit-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
