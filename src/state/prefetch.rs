//! A portable "bring this cache line closer" hint. A no-op where no instruction is known, and
//! under Miri (which runs no inline assembly).

/// Hints that the cache line holding `p` will be read soon. Never faults, whatever `p` is.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: PREFETCHT0 is a hint: it never faults and has no architectural effect, for any address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: PRFM is a hint: it never faults and has no architectural effect, for any address.
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, readonly, preserves_flags));
    }
    #[cfg(any(miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
    let _ = p;
}

/// Hints that the cache line holding `p` will be written soon: the line is fetched for ownership
/// (PREFETCHW), so the write does not wait for another core to give it up. Never faults.
#[inline(always)]
pub fn prefetch_write<T>(p: *const T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: PREFETCHW is a hint: it never faults and has no architectural effect, for any address
    // (processors without it decode it as a NOP). Written out because the baseline x86-64 target
    // lacks the `prfchw` feature, without which the intrinsic degrades to a read prefetch.
    unsafe {
        core::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, readonly, preserves_flags));
    }
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: PRFM is a hint: it never faults and has no architectural effect, for any address.
    unsafe {
        core::arch::asm!("prfm pstl1keep, [{0}]", in(reg) p, options(nostack, readonly, preserves_flags));
    }
    #[cfg(any(miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
    let _ = p;
}
