//! Link flags of the `dpincon-cli` binary.

fn main() {
    // Pack the ~220k relative relocations of this large PIE (DataFusion,
    // Ballista, tonic) into DT_RELR: the loader reads a few KB instead of
    // ~5 MB of `.rela.dyn` at every start (issue 15: start-up of small
    // jobs). Needs glibc ≥ 2.36 and binutils ≥ 2.38 (Debian 12, our image).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu")
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
