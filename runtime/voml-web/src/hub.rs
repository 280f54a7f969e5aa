//! What the engine and the connections share: the history a page joining now needs, the
//! pages connected, and what they asked of the run.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;

use voml_llvo::BackendEvent;

/// Batches on their way to one page before it counts as too slow and is disconnected (it
/// may join again, and then gets the current picture).
const PAGE_QUEUE: usize = 256;
/// Keys waiting for the engine; more are dropped.
const MAX_EVENTS: usize = 256;

/// The shared state of a served run.
pub struct Hub {
    /// Batches of JSON lines that, carried out in order, draw the current picture.
    history: Vec<Arc<str>>,
    history_bytes: usize,
    /// The history is compacted when it grows beyond this many bytes ...
    limit: usize,
    /// ... and beyond twice its size after the last compaction (a compacted picture larger
    /// than the limit is not compacted again at every batch).
    floor: usize,
    /// The latest status line, sent to a page that joins after the history.
    status: Option<Arc<str>>,
    pages: Vec<SyncSender<Arc<str>>>,
    events: Vec<BackendEvent>,
    compactions: u64,
}

impl Hub {
    /// A hub whose history is compacted beyond `limit` bytes.
    pub fn new(limit: usize) -> Hub {
        Hub {
            history: Vec::new(),
            history_bytes: 0,
            limit,
            floor: 0,
            status: None,
            pages: Vec::new(),
            events: Vec::new(),
            compactions: 0,
        }
    }

    /// Appends a batch to the history and sends it to every page.
    pub(crate) fn publish(&mut self, batch: String) {
        let batch: Arc<str> = Arc::from(batch);
        self.history_bytes += batch.len();
        self.history.push(batch.clone());
        self.broadcast(&batch);
    }

    fn broadcast(&mut self, batch: &Arc<str>) {
        // A page that cannot keep up, or has gone, is dropped.
        self.pages
            .retain(|page| match page.try_send(batch.clone()) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            });
    }

    pub(crate) fn over_limit(&self) -> bool {
        self.history_bytes > self.limit.max(self.floor.saturating_mul(2))
    }

    /// The history becomes `lines`, which draw what the old one drew (the pages connected
    /// have that already).
    pub(crate) fn replace_history(&mut self, lines: String) {
        self.history_bytes = lines.len();
        self.floor = lines.len();
        self.history = vec![Arc::from(lines)];
        self.compactions += 1;
    }

    pub(crate) fn set_status(&mut self, line: String) {
        let line: Arc<str> = Arc::from(line);
        self.status = Some(line.clone());
        self.broadcast(&line);
    }

    /// A page joins: what draws the current picture (and the latest status), and the
    /// channel on which what follows arrives.
    pub fn join(&mut self) -> (Vec<Arc<str>>, Receiver<Arc<str>>) {
        let (tx, rx) = mpsc::sync_channel(PAGE_QUEUE);
        self.pages.push(tx);
        let mut first = self.history.clone();
        first.extend(self.status.clone());
        (first, rx)
    }

    /// Something a page asked of the run (a key).
    pub fn push_event(&mut self, event: BackendEvent) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        }
    }

    pub(crate) fn take_events(&mut self) -> Vec<BackendEvent> {
        std::mem::take(&mut self.events)
    }

    /// The history's size in bytes.
    pub fn history_bytes(&self) -> usize {
        self.history_bytes
    }

    /// How many times the history was compacted.
    pub fn compactions(&self) -> u64 {
        self.compactions
    }

    /// Pages connected now.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }
}
