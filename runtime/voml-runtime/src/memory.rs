//! Heap accounting: the process's allocator counts the bytes that VO code holds, so that a
//! visual object that grows without bound is stopped at a ceiling with a located fault
//! instead of taking the machine's memory (or aborting the process when an allocation
//! fails).
//!
//! Every allocation and release made while a [`Meter`] is entered on the thread (that is,
//! while VO code runs) is charged to that meter; the watchdog compares it with the ceiling
//! and interrupts the engine when it is passed. The process's live and peak heap are
//! counted as well, for tests and benchmarks.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::sync::Arc;

struct Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The meter charged on this thread, if VO code is running on it.
    static CURRENT: Cell<*const AtomicIsize> = const { Cell::new(std::ptr::null()) };
}

#[inline]
fn charge(delta: isize) {
    if delta >= 0 {
        let live = LIVE.fetch_add(delta as usize, Ordering::Relaxed) + delta as usize;
        if live > PEAK.load(Ordering::Relaxed) {
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
    } else {
        LIVE.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
    }
    let _ = CURRENT.try_with(|current| {
        let meter = current.get();
        if !meter.is_null() {
            // SAFETY: a meter is entered only by `Meter::enter`, whose guard clears it
            // before the meter can be dropped (the guard borrows the meter).
            unsafe { &*meter }.fetch_add(delta, Ordering::Relaxed);
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            charge(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            charge(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        charge(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            charge(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes the process holds on its heap now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The most bytes the process held on its heap at once so far.
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed).max(live())
}

/// The net heap a visual object's code has taken (allocations less releases while it ran).
#[derive(Clone, Debug, Default)]
pub struct Meter(Arc<AtomicIsize>);

impl Meter {
    pub fn new() -> Meter {
        Meter::default()
    }

    /// Net bytes charged so far.
    pub fn bytes(&self) -> isize {
        self.0.load(Ordering::Relaxed)
    }

    /// Charges this thread's allocations to the meter until the guard is dropped.
    pub fn enter(&self) -> MeterGuard<'_> {
        let previous = CURRENT.with(|c| c.replace(Arc::as_ptr(&self.0)));
        MeterGuard {
            _meter: self,
            previous,
        }
    }
}

pub struct MeterGuard<'a> {
    _meter: &'a Meter,
    previous: *const AtomicIsize,
}

impl Drop for MeterGuard<'_> {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}
