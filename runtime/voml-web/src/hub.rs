//! What the engine and the connections share: the history a page joining now needs, the
//! pages connected, what they asked of the run and the answers on their way back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use voml_llvo::BackendEvent;

/// Bytes on their way to one page before it counts as too slow and is disconnected (it may
/// join again, and then gets the current picture). Counted in bytes, not lines: a burst of
/// small lines (a record's sound commands) is not a page falling behind.
const PAGE_BYTES: usize = 16 << 20;
/// What a line on its way counts for beyond its bytes (the queue's own memory).
const LINE_COST: usize = 64;
/// Keys waiting for the engine; more are dropped.
const MAX_EVENTS: usize = 256;

/// What a page joining gets: the batches that draw the current picture, and the channel on
/// which what follows arrives.
pub type Joined = (Vec<Arc<str>>, Inbox);

/// The hub's end of a page's queue.
struct Outbox {
    tx: Sender<Arc<str>>,
    queued: Arc<AtomicUsize>,
}

impl Outbox {
    /// Queues `line`; `false` when the page has gone or has more than [`PAGE_BYTES`] on
    /// their way (then it is dropped).
    fn offer(&self, line: &Arc<str>) -> bool {
        let cost = line.len() + LINE_COST;
        if self.queued.load(Ordering::Relaxed) + cost > PAGE_BYTES {
            return false;
        }
        self.queued.fetch_add(cost, Ordering::Relaxed);
        self.tx.send(line.clone()).is_ok()
    }
}

/// A page's end of its queue: what the run publishes after the page joined.
pub struct Inbox {
    rx: Receiver<Arc<str>>,
    queued: Arc<AtomicUsize>,
}

impl Inbox {
    fn took(&self, line: Arc<str>) -> Arc<str> {
        self.queued
            .fetch_sub(line.len() + LINE_COST, Ordering::Relaxed);
        line
    }

    /// The next line, if one is there.
    pub fn try_recv(&self) -> Result<Arc<str>, TryRecvError> {
        self.rx.try_recv().map(|l| self.took(l))
    }

    /// The next line, waiting at most `timeout` for it.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Arc<str>, RecvTimeoutError> {
        self.rx.recv_timeout(timeout).map(|l| self.took(l))
    }
}

/// The shared state of a served run.
pub struct Hub {
    /// Batches of JSON lines that, carried out in order, draw the current picture, each
    /// with its number (a compaction has the number of the last batch it replaced).
    history: Vec<(u64, Arc<str>)>,
    /// The number of the last batch published.
    last_batch: u64,
    history_bytes: usize,
    /// The history is compacted when it grows beyond this many bytes ...
    limit: usize,
    /// ... and beyond twice its size after the last compaction (a compacted picture larger
    /// than the limit is not compacted again at every batch).
    floor: usize,
    /// The latest status line, sent to a page that joins after the history.
    status: Option<Arc<str>>,
    /// The latest inspector line (the structures and their values), likewise.
    inspector: Option<Arc<str>>,
    /// Pages by their number.
    pages: Vec<(u64, Outbox)>,
    next_page: u64,
    events: Vec<BackendEvent>,
    /// Commands given to the driver, by ticket: the page that asked and its request's id.
    asked: HashMap<u64, (u64, u64)>,
    next_ticket: u64,
    compactions: u64,
}

impl Hub {
    /// A hub whose history is compacted beyond `limit` bytes.
    pub fn new(limit: usize) -> Hub {
        Hub {
            history: Vec::new(),
            last_batch: 0,
            history_bytes: 0,
            limit,
            floor: 0,
            status: None,
            inspector: None,
            pages: Vec::new(),
            next_page: 0,
            events: Vec::new(),
            asked: HashMap::new(),
            next_ticket: 0,
            compactions: 0,
        }
    }

    /// Appends a batch to the history and sends it to every page.
    pub(crate) fn publish(&mut self, batch: String) {
        let batch: Arc<str> = Arc::from(batch);
        self.history_bytes += batch.len();
        self.last_batch += 1;
        self.history.push((self.last_batch, batch.clone()));
        self.broadcast(&batch);
    }

    /// The number of the last batch published.
    pub(crate) fn last_batch(&self) -> u64 {
        self.last_batch
    }

    fn broadcast(&mut self, batch: &Arc<str>) {
        // A page that cannot keep up, or has gone, is dropped.
        self.pages.retain(|(_, page)| page.offer(batch));
    }

    pub(crate) fn over_limit(&self) -> bool {
        self.history_bytes > self.limit.max(self.floor.saturating_mul(2))
    }

    /// The history through batch `through` becomes `lines`, which draw what it drew (the
    /// pages connected have that already); the batches published since stay after them.
    pub(crate) fn replace_history_through(&mut self, through: u64, lines: String) {
        self.history.retain(|(n, _)| *n > through);
        self.floor = lines.len();
        self.history.insert(0, (through, Arc::from(lines)));
        self.history_bytes = self.history.iter().map(|(_, b)| b.len()).sum();
        self.compactions += 1;
    }

    pub(crate) fn set_status(&mut self, line: String) {
        let line: Arc<str> = Arc::from(line);
        self.status = Some(line.clone());
        self.broadcast(&line);
    }

    /// Lines only the pages connected now get (sound commands: what was played is not
    /// played again for a page that joins later).
    pub fn broadcast_now(&mut self, line: String) {
        self.broadcast(&Arc::from(line));
    }

    /// The structures of the visual object and their values, for the inspector: sent to
    /// every page, and kept for pages that join later.
    pub fn set_inspector(&mut self, line: String) {
        let line: Arc<str> = Arc::from(line);
        self.inspector = Some(line.clone());
        self.broadcast(&line);
    }

    /// A page joins: what draws the current picture (and the latest status and inspector),
    /// and the channel on which what follows arrives.
    pub fn join(&mut self) -> Joined {
        self.join_page().1
    }

    /// [`Hub::join`], with the page's number (for its commands).
    pub(crate) fn join_page(&mut self) -> (u64, Joined) {
        let (tx, rx) = mpsc::channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let page = self.next_page;
        self.next_page += 1;
        self.pages.push((
            page,
            Outbox {
                tx,
                queued: queued.clone(),
            },
        ));
        let mut first: Vec<Arc<str>> = self.history.iter().map(|(_, b)| b.clone()).collect();
        first.extend(self.status.clone());
        first.extend(self.inspector.clone());
        (page, (first, Inbox { rx, queued }))
    }

    /// Something a page asked of the run (a key).
    pub fn push_event(&mut self, event: BackendEvent) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        }
    }

    /// A command line from `page` (its request `id`) for the driver; `Err` when too many
    /// wait already.
    pub(crate) fn push_command(&mut self, page: u64, id: u64, line: String) -> Result<(), ()> {
        if self.events.len() >= MAX_EVENTS || self.asked.len() >= MAX_EVENTS {
            return Err(());
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.asked.insert(ticket, (page, id));
        self.events
            .push(BackendEvent::Command { from: ticket, line });
        Ok(())
    }

    /// The driver's answer to command `ticket`, to the page that asked (if still there).
    pub(crate) fn answer(&mut self, ticket: u64, outcome: Result<(), &str>) {
        let Some((page, id)) = self.asked.remove(&ticket) else {
            return;
        };
        let line = answer_line(id, outcome);
        if let Some((_, tx)) = self.pages.iter().find(|(p, _)| *p == page) {
            // A page too slow for its answer is dropped by the next broadcast anyway.
            let _ = tx.offer(&Arc::from(line));
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

/// The answer to a page's request `id`: `{"op": "answer", "id": ID, "ok": true}`, or with
/// `"ok": false` and the `message` saying why.
pub(crate) fn answer_line(id: u64, outcome: Result<(), &str>) -> String {
    // `op` first, as in the drawing commands' lines.
    match outcome {
        Ok(()) => format!(r#"{{"op":"answer","id":{id},"ok":true}}"#),
        Err(why) => format!(
            r#"{{"op":"answer","id":{id},"ok":false,"message":{}}}"#,
            serde_json::Value::String(why.to_string())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_goes_to_the_page_that_asked_and_commands_are_bounded() {
        let mut hub = Hub::new(usize::MAX);
        let (first, (_, first_rx)) = hub.join_page();
        let (second, (_, second_rx)) = hub.join_page();
        assert_ne!(first, second);
        hub.push_command(second, 7, "step".into()).unwrap();
        let events = hub.take_events();
        let [BackendEvent::Command { from, line }] = events.as_slice() else {
            panic!("{events:?}");
        };
        assert_eq!(line, "step");
        hub.answer(*from, Err("no \"such\" thing"));
        let answer = second_rx.try_recv().expect("the page that asked hears");
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["op"], "answer");
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["ok"], false);
        assert_eq!(answer["message"], "no \"such\" thing");
        assert!(
            first_rx.try_recv().is_err(),
            "another page heard the answer"
        );
        // Answered once only.
        hub.answer(*from, Ok(()));
        assert!(second_rx.try_recv().is_err());
        // Commands waiting are bounded; more are refused.
        for k in 0..MAX_EVENTS {
            hub.push_command(first, k as u64, "step".into()).unwrap();
        }
        assert!(hub.push_command(first, 0, "step".into()).is_err());
        // A late page gets the latest inspector line after the history.
        hub.set_inspector(r#"{"op":"inspector"}"#.into());
        let (joined, _) = hub.join();
        assert_eq!(joined.last().map(|l| &**l), Some(r#"{"op":"inspector"}"#));
    }

    /// A page is dropped when what waits for it passes its budget in bytes, not for a burst
    /// of small lines; what it reads frees its budget.
    #[test]
    fn a_page_is_dropped_for_the_bytes_waiting_for_it() {
        let mut hub = Hub::new(usize::MAX);
        let (_, inbox) = hub.join();
        // Ten thousand small lines (a burst of sound commands) wait: still connected.
        for k in 0..10_000 {
            hub.broadcast_now(format!("{{\"op\":\"sound\",\"n\":{k}}}"));
        }
        assert_eq!(hub.pages(), 1);
        for k in 0..10_000 {
            let line = inbox.try_recv().unwrap();
            assert_eq!(&*line, format!("{{\"op\":\"sound\",\"n\":{k}}}"));
        }
        // Big batches that nobody reads: dropped once they pass the budget ...
        let batch = "x".repeat(1 << 20);
        let fit = PAGE_BYTES / (batch.len() + LINE_COST);
        for _ in 0..fit {
            hub.publish(batch.clone());
        }
        assert_eq!(hub.pages(), 1, "dropped within the budget");
        // ... but reading one makes room for one more.
        assert_eq!(inbox.try_recv().unwrap().len(), batch.len());
        hub.publish(batch.clone());
        assert_eq!(hub.pages(), 1, "dropped though it read");
        hub.publish(batch.clone());
        assert_eq!(hub.pages(), 0, "kept beyond the budget");
        // The page hears it was dropped once it has read what was sent.
        for _ in 0..fit {
            inbox.try_recv().unwrap();
        }
        assert_eq!(inbox.try_recv(), Err(TryRecvError::Disconnected));
    }

    /// A compaction made on the raster thread replaces the batches it drew, and the batches
    /// published meanwhile stay after it.
    #[test]
    fn a_compaction_keeps_what_was_published_after_it() {
        let mut hub = Hub::new(1);
        for k in 1..=4 {
            hub.publish(format!("batch {k}\n"));
        }
        let through = hub.last_batch();
        hub.publish("batch 5\n".into());
        hub.replace_history_through(through, "picture\n".into());
        let (joined, _) = hub.join();
        let joined: Vec<&str> = joined.iter().map(|b| &**b).collect();
        assert_eq!(joined, ["picture\n", "batch 5\n"]);
        assert_eq!(hub.history_bytes(), "picture\nbatch 5\n".len());
        // Compacted again later: through the first compaction and what followed it.
        let through = hub.last_batch();
        hub.publish("batch 6\n".into());
        hub.replace_history_through(through, "picture 2\n".into());
        let (joined, _) = hub.join();
        let joined: Vec<&str> = joined.iter().map(|b| &**b).collect();
        assert_eq!(joined, ["picture 2\n", "batch 6\n"]);
        assert_eq!(hub.compactions(), 2);
    }
}
