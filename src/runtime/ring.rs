//! Bounded lock-free single-producer/single-consumer ring: the only way shards exchange events.
//!
//! Invariants (the type's contract; every `unsafe` below relies on them):
//! - `head` is written only by the consumer, `tail` only by the producer; both only grow (wrapping
//!   `usize`), and `tail - head <= capacity` at all times.
//! - Slots `[head, tail)` (mod capacity) hold initialised values owned by the consumer side; slots
//!   outside it are free and owned by the producer.
//! - Indices are published with `Release` and read with `Acquire`, so a slot's contents are visible
//!   before the index that hands it over.
//!
//! Both sides cache the other side's index and publish their own once per batch (`flush`/`release`),
//! so the hot path touches shared cache lines once per batch, not per event. The ring never blocks and
//! never allocates after construction: a full ring is "no credit", and the producer decides what to do.
//! Only `Copy` values travel, so no destructor ever has to run for slots left in a dropped ring.

use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How many slots ahead of the one written a push asks for ownership of.
const WRITE_AHEAD: usize = 16;

struct Ring<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
    head: CachePadded<AtomicUsize>,
    tail: CachePadded<AtomicUsize>,
}

// SAFETY: slots are handed between exactly one producer and one consumer through the Release/Acquire
// protocol on `head`/`tail` described in the module doc; `T: Send` values cross threads that way only.
unsafe impl<T: Send> Sync for Ring<T> {}
// SAFETY: as above; the ring owns only `Copy` data and atomics.
unsafe impl<T: Send> Send for Ring<T> {}

/// Creates a ring holding `capacity` values (rounded up to a power of two, at least 2).
pub fn ring<T: Copy + Send>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let cap = capacity.max(2).next_power_of_two();
    let slots = (0..cap)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let ring = Arc::new(Ring {
        slots,
        mask: cap - 1,
        head: CachePadded::new(AtomicUsize::new(0)),
        tail: CachePadded::new(AtomicUsize::new(0)),
    });
    (
        Producer {
            ring: ring.clone(),
            tail: 0,
            published: 0,
            head_cache: 0,
            cap,
        },
        Consumer {
            ring,
            head: 0,
            released: 0,
            tail_cache: 0,
        },
    )
}

/// One cache line of its own: the producer writes `tail` per event, and sides of different rings
/// sit next to each other in the vectors that hold them (a shard's rings to every other shard), so
/// sharing a line with another thread's side would cost a transfer per event.
#[repr(align(64))]
pub struct Producer<T> {
    ring: Arc<Ring<T>>,
    /// Next slot to write (may be ahead of the published tail).
    tail: usize,
    published: usize,
    head_cache: usize,
    cap: usize,
}

impl<T: Copy + Send> Producer<T> {
    /// Free slots, refreshing the consumer's index only if the cached view says the ring is full.
    #[inline]
    pub fn free(&mut self) -> usize {
        let free = self.cap - self.tail.wrapping_sub(self.head_cache);
        if free > 0 {
            return free;
        }
        self.head_cache = self.ring.head.load(Ordering::Acquire);
        self.cap - self.tail.wrapping_sub(self.head_cache)
    }

    /// Free slots after refreshing the consumer's index.
    #[inline]
    pub fn free_fresh(&mut self) -> usize {
        self.head_cache = self.ring.head.load(Ordering::Acquire);
        self.cap - self.tail.wrapping_sub(self.head_cache)
    }

    /// Writes `v` without publishing it; `Err(v)` when the ring is full (no credit).
    #[inline]
    pub fn push(&mut self, v: T) -> Result<(), T> {
        if self.free() == 0 {
            return Err(v);
        }
        let slot = &self.ring.slots[self.tail & self.ring.mask];
        // SAFETY: `free() > 0` means slot `tail` lies outside `[head, tail)`, so the consumer does not
        // read it until we publish a tail past it; we are the only producer.
        unsafe { (*slot.get()).write(v) };
        // The consumer read the slots ahead last time round, on its core: ask for them now so a
        // later push does not stall on the transfer. A hint only; the slot may still be in use.
        let ahead = &self.ring.slots[self.tail.wrapping_add(WRITE_AHEAD) & self.ring.mask];
        crate::state::prefetch::prefetch_write(ahead.get());
        if std::mem::size_of::<T>() > 64 {
            crate::state::prefetch::prefetch_write((ahead.get() as *const u8).wrapping_add(64));
        }
        self.tail = self.tail.wrapping_add(1);
        Ok(())
    }

    /// Publishes everything pushed so far to the consumer.
    #[inline]
    pub fn flush(&mut self) {
        if self.published != self.tail {
            self.ring.tail.store(self.tail, Ordering::Release);
            self.published = self.tail;
        }
    }

    /// True when the consumer has taken everything ever pushed (pushed values count even if unpublished).
    #[inline]
    pub fn is_drained(&mut self) -> bool {
        self.free_fresh() == self.cap
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }
}

/// One cache line of its own, as [`Producer`].
#[repr(align(64))]
pub struct Consumer<T> {
    ring: Arc<Ring<T>>,
    head: usize,
    released: usize,
    tail_cache: usize,
}

impl<T: Copy + Send> Consumer<T> {
    /// Values ready to read, refreshing the producer's index only when the cached view is exhausted.
    #[inline]
    pub fn available(&mut self) -> usize {
        let n = self.tail_cache.wrapping_sub(self.head);
        if n > 0 {
            return n;
        }
        self.tail_cache = self.ring.tail.load(Ordering::Acquire);
        self.tail_cache.wrapping_sub(self.head)
    }

    /// The next value, if any (not yet consumed: call `advance`).
    #[inline]
    pub fn peek(&mut self) -> Option<&T> {
        if self.available() == 0 {
            return None;
        }
        let slot = &self.ring.slots[self.head & self.ring.mask];
        // SAFETY: `available() > 0` means slot `head` is inside `[head, tail)` as published with Release
        // and read with Acquire: it is initialised and the producer will not touch it until we release.
        Some(unsafe { (*slot.get()).assume_init_ref() })
    }

    /// Up to `max` published values from the next one on, as one contiguous slice (it stops at the
    /// end of the slot array; the rest follows in the next call). Consume them with `advance_by`.
    #[inline]
    pub fn readable(&mut self, max: usize) -> &[T] {
        self.readable_from(0, max)
    }

    /// Like `readable`, but from the value `skip` places after the next one (for a message whose
    /// tail wraps around the end of the slot array). Empty when fewer than `skip + 1` are ready.
    #[inline]
    pub fn readable_from(&mut self, skip: usize, max: usize) -> &[T] {
        let mut avail = self.tail_cache.wrapping_sub(self.head);
        if avail <= skip {
            self.tail_cache = self.ring.tail.load(Ordering::Acquire);
            avail = self.tail_cache.wrapping_sub(self.head);
        }
        if avail <= skip {
            return &[];
        }
        let at = self.head.wrapping_add(skip) & self.ring.mask;
        let n = (avail - skip).min(max).min(self.ring.slots.len() - at);
        // SAFETY: slots `at .. at + n` are the ring positions `head + skip .. head + skip + n`, all
        // inside `[head, tail)` as published (Release) and observed (Acquire): initialised, and the
        // producer does not reuse them before we release. `n` stops at the end of the array, so
        // the range is contiguous; `UnsafeCell<MaybeUninit<T>>` has the layout of `T`.
        unsafe {
            let first = self.ring.slots.as_ptr().add(at) as *const T;
            std::slice::from_raw_parts(first, n)
        }
    }

    /// Consumes the next `n` values (publication is deferred to `release`). Never past what has
    /// been seen published: a larger `n` consumes only those, so no unwritten slot is ever read.
    #[inline]
    pub fn advance_by(&mut self, n: usize) {
        let n = n.min(self.tail_cache.wrapping_sub(self.head));
        self.head = self.head.wrapping_add(n);
    }

    /// Consumes the value returned by the last `peek` (publication is deferred to `release`); a
    /// no-op when nothing was seen published.
    #[inline]
    pub fn advance(&mut self) {
        self.advance_by(1);
    }

    /// Pops one value (not published until `release`).
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let v = *self.peek()?;
        self.advance();
        Some(v)
    }

    /// Returns consumed slots to the producer (gives credit back).
    #[inline]
    pub fn release(&mut self) {
        if self.released != self.head {
            self.ring.head.store(self.head, Ordering::Release);
            self.released = self.head;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_ring_refuses_and_credit_returns_only_on_release() {
        let (mut p, mut c) = ring::<u64>(4);
        for i in 0..4 {
            p.push(i).unwrap();
        }
        assert_eq!(p.push(9), Err(9));
        assert_eq!(c.pop(), None, "unpublished values are invisible");
        p.flush();
        assert_eq!(c.pop(), Some(0));
        assert_eq!(p.push(9), Err(9), "credit comes back only on release");
        c.release();
        assert_eq!(p.push(4), Ok(()));
        p.flush();
        let rest: Vec<u64> = std::iter::from_fn(|| c.pop()).collect();
        assert_eq!(rest, vec![1, 2, 3, 4]);
    }

    #[test]
    fn advancing_past_what_was_published_consumes_only_that() {
        // A safe caller asking for more than is there must never move `head` past `tail`: the
        // next reads would hand out slots nobody wrote (uninitialised memory).
        let (mut p, mut c) = ring::<u64>(8);
        c.advance_by(5);
        c.advance();
        assert_eq!(c.available(), 0);
        for i in 0..3 {
            p.push(i).unwrap();
        }
        p.flush();
        assert_eq!(c.readable(8), &[0, 1, 2]);
        c.advance_by(usize::MAX);
        assert_eq!(c.readable(8), &[] as &[u64]);
        c.release();
        assert_eq!(p.free_fresh(), 8, "credit for exactly the three consumed");
        p.push(7).unwrap();
        p.flush();
        // Not yet seen by the consumer, so an advance does not consume it either.
        c.advance_by(2);
        assert_eq!(
            c.pop(),
            Some(7),
            "an advance skipped a value it had not seen"
        );
        c.advance_by(3);
        p.push(8).unwrap();
        p.flush();
        assert_eq!(c.pop(), Some(8));
    }

    #[test]
    fn readable_slices_stop_at_the_wrap_and_at_max() {
        let (mut p, mut c) = ring::<u64>(4);
        for i in 0..3 {
            p.push(i).unwrap();
        }
        p.flush();
        assert_eq!(c.readable(2), &[0, 1]);
        c.advance_by(2);
        c.release();
        for i in 3..6 {
            p.push(i).unwrap();
        }
        p.flush();
        // The consumer's cached view still ends at 3: it refreshes only once that is used up.
        assert_eq!(c.readable(10), &[2]);
        c.advance_by(1);
        // Positions 3 is the end of the slot array; 4, 5 wrap to its start.
        assert_eq!(c.readable(10), &[3]);
        c.advance_by(1);
        assert_eq!(c.readable(10), &[4, 5]);
        c.advance_by(2);
        assert!(c.readable(10).is_empty());
    }

    #[test]
    fn two_threads_transfer_everything_in_order() {
        let (mut p, mut c) = ring::<u64>(64);
        // Miri interprets every step; a few thousand values still wrap the ring many times.
        const N: u64 = if cfg!(miri) { 2_000 } else { 200_000 };
        let t = std::thread::spawn(move || {
            let mut i = 0;
            while i < N {
                match p.push(i) {
                    Ok(()) => i += 1,
                    Err(_) => {
                        p.flush();
                        std::hint::spin_loop();
                    }
                }
                if i % 7 == 0 {
                    p.flush();
                }
            }
            p.flush();
        });
        let mut want = 0;
        while want < N {
            while let Some(v) = c.pop() {
                assert_eq!(v, want);
                want += 1;
            }
            c.release();
        }
        t.join().unwrap();
    }
}
