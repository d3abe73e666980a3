//! The Python package `dpincon` (its extension module `dpincon._dpincon`):
//! `measure` runs the engine's job on a file, an S3 object, a PostgreSQL
//! source or any object with `__arrow_c_stream__` (pyarrow, Polars,
//! pandas, DuckDB), read batch by batch without a copy, with the GIL
//! released while the job runs; and the audits: a `Suite` from TOML or a
//! dict, run as `dpincon-cli audit` runs it, with the same reports and
//! history. The design is in the crate's README.
//!
//! Everything Python is behind the `python` feature, which maturin turns
//! on: the workspace's own builds compile this crate empty and need no
//! Python.

#[cfg(feature = "python")]
mod audit;
#[cfg(feature = "python")]
mod interrupt;
#[cfg(feature = "python")]
mod module;

// The module's Rust allocations (the job's table, graph and buffers) go to
// mimalloc, as the CLI's do: with the system malloc a 10^6-row job peaked
// about 0.45 GiB higher than the CLI's on the same table (see the README's
// figures). Python's own allocations, and a DataFrame's buffers (freed by
// their producer's release callback), are not ours and are untouched.
#[cfg(feature = "python")]
#[global_allocator]
static ALLOCATOR: dpincon_alloc::Allocator = dpincon_alloc::Allocator;

/// The extension module: the job ([`module`]), then the audits ([`audit`]).
#[cfg(feature = "python")]
#[pyo3::pymodule]
fn _dpincon(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    // The CLI's purge delay; the host's huge-page policy is left alone.
    dpincon_alloc::return_freed_memory_sooner();
    module::register(m)?;
    audit::register(m)
}
