//! Heap accounting: the process's allocator counts the bytes that VO code holds, so that a
//! visual object that grows without bound is stopped at a ceiling with a located fault
//! instead of taking the machine's memory (or aborting the process when an allocation
//! fails).
//!
//! Every allocation and release made while a [`Meter`] is entered on the thread (that is,
//! while VO code runs) is charged to that meter; the watchdog compares it with the ceiling
//! and interrupts the engine when it is passed. Charges accumulate in a thread-local and are
//! published to the meter every [`GRAIN`] bytes, so an allocation costs no atomic operation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

struct Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Net bytes a thread charges before it publishes them to its meter.
pub const GRAIN: isize = 256 << 10;

/// The meter charged on this thread (null when no VO code runs on it), the net bytes
/// charged since it was entered, and the part of them already published.
#[derive(Clone, Copy)]
struct Charge {
    meter: *const AtomicIsize,
    net: isize,
    published: isize,
}

thread_local! {
    static CURRENT: Cell<Charge> = const {
        Cell::new(Charge { meter: std::ptr::null(), net: 0, published: 0 })
    };
}

#[inline]
fn charge(delta: isize) {
    let _ = CURRENT.try_with(|current| {
        let mut c = current.get();
        if c.meter.is_null() {
            return;
        }
        c.net += delta;
        if (c.net - c.published).abs() >= GRAIN {
            // SAFETY: a meter is entered only by `Meter::enter`, whose guard clears it
            // before the meter can be dropped (the guard borrows the meter).
            unsafe { &*c.meter }.fetch_add(c.net - c.published, Ordering::Relaxed);
            c.published = c.net;
        }
        current.set(c);
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            charge(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            charge(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        charge(-(layout.size() as isize));
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            charge(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// The net heap a visual object's code has taken (allocations less releases while it ran).
#[derive(Clone, Debug, Default)]
pub struct Meter(Arc<AtomicIsize>);

impl Meter {
    pub fn new() -> Meter {
        Meter::default()
    }

    /// Net bytes charged so far (up to [`GRAIN`] behind while code runs).
    pub fn bytes(&self) -> isize {
        self.0.load(Ordering::Relaxed)
    }

    /// Charges this thread's allocations to the meter until the guard is dropped.
    pub fn enter(&self) -> MeterGuard<'_> {
        let fresh = Charge {
            meter: Arc::as_ptr(&self.0),
            net: 0,
            published: 0,
        };
        let previous = CURRENT.with(|c| c.replace(fresh));
        MeterGuard {
            meter: self,
            previous,
        }
    }
}

pub struct MeterGuard<'a> {
    meter: &'a Meter,
    previous: Charge,
}

impl Drop for MeterGuard<'_> {
    fn drop(&mut self) {
        let done = CURRENT.with(|c| c.replace(self.previous));
        self.meter
            .0
            .fetch_add(done.net - done.published, Ordering::Relaxed);
    }
}

/// Runs `f` with its allocations charged to no meter: for what the runtime builds on the VO's
/// behalf while VO code runs and releases outside it (the list `(current-event)` returns),
/// which charged to the VO would count against it for ever once released.
pub fn uncharged<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(Charge);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let none = Charge {
        meter: std::ptr::null(),
        net: 0,
        published: 0,
    };
    let _restore = Restore(CURRENT.with(|c| c.replace(none)));
    f()
}

/// The most memory the process has had resident at once (Linux: `VmHWM`), in bytes.
pub fn peak_resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
