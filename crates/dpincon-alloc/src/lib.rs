//! The allocator dpincon's processes run on, and its two settings.
//!
//! Building the conflict graph allocates and frees buffers of every size
//! (pair buffers, row records, the freeze's vectors) from several threads;
//! mimalloc handles that churn far better than the system malloc (with
//! it, the Python module's 10^6-row job peaked about 0.45 GiB higher).
//! Each final artifact (the CLI, the Python module) declares it:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: dpincon_alloc::Allocator = dpincon_alloc::Allocator;
//! ```
//!
//! and calls [`return_freed_memory_sooner`] at start. Only a process of
//! its own (the CLI) also calls [`disable_transparent_huge_pages`]; a
//! library built with the `module` feature leaves its host's page policy
//! alone and gives no huge-page advice on its own memory instead.

/// mimalloc, as `#[global_allocator]`.
pub use mimalloc::MiMalloc as Allocator;

/// mimalloc's `mi_option_purge_delay` (`mimalloc.h` of libmimalloc-sys
/// 0.1.49, v2 and v3 alike; the lock file pins the version).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Milliseconds mimalloc keeps freed memory before returning it to the OS
/// (its default is 1000). Finishing the graph frees the row records of
/// detection while it allocates the frozen rows, and memory freed within
/// the delay counts in RSS next to them: at 10^6 rows the peak was
/// 1.6 GiB with 1000 ms, 1.3 GiB with 100 ms.
const PURGE_DELAY_MS: std::ffi::c_long = 100;

/// Sets the purge delay to 100 ms (`PURGE_DELAY_MS`), unless the environment's
/// `MIMALLOC_PURGE_DELAY` says otherwise.
#[allow(unsafe_code)] // an allocator option: see SAFETY below
pub fn return_freed_memory_sooner() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option of the (statically linked)
        // allocator, which reads it at its next purge; no memory is touched.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
    }
}

/// Turns transparent huge pages off for this whole process (a process of
/// its own only). mimalloc asks for them on its arenas, and every first
/// touch of one then faults in and zeroes 2 MiB: a 10k-row job held ~30 MB
/// more (88 against 59 MiB peak RSS) and spent ~12% of its time in the
/// kernel clearing pages. Big jobs do not gain from them either: the
/// 10^6-row default job took 8.4–10.8 s (median 8.9 s) with them and
/// 8.5–10.4 s (median 9.0 s) without, 5 alternating runs each, with ~50 MB
/// more peak RSS.
#[allow(unsafe_code)] // prctl: see SAFETY below
pub fn disable_transparent_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes
    // nothing but this process's page-fault policy; failure (an old kernel)
    // leaves the default, which is only slower.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
