//! Live input: records from producers that connect to a socket (TCP, or a Unix socket), one
//! connection per monitored process, merged in timestamp order.
//!
//! Each connection is read on its own thread, into the same bounded channel: when the visual
//! object is slower than the producers, the readers wait, the sockets' buffers fill and the
//! producers slow down; nothing is dropped. A producer's bad lines (garbage, a line longer than
//! the reader takes, a line cut short when it disconnects) are reported with its name and line
//! number and skipped; the others are not disturbed.
//!
//! **Order.** Records of different producers are delivered in timestamp order: a record waits
//! until every connected producer has sent one at least as late (each producer's own records
//! are taken to come in order), or until it has waited the reordering window (wall time).
//! So a producer that falls silent holds the others back by at most the window. A record that
//! arrives after a later one was delivered is still delivered, at once, and counted as late.
//!
//! **Hosts that vanish.** A TCP producer whose host goes away without closing its connection
//! (a crash of the machine, a cable pulled) would be waited for as long as the run lasts. The
//! system is asked to probe every connection that has been silent for [`KEEPALIVE_IDLE`]
//! ([`KEEPALIVE_INTERVAL`] apart, [`KEEPALIVE_PROBES`] of them): a connection whose probes all
//! go unanswered fails, the failure is reported with the producer's name, and the run goes on
//! without it.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufReader, Read};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use voml_trace::{ReadOptions, Record, TraceReader};

use crate::source::{read_records, stop_requested, Batch, Share, Source};

/// How long a producer's TCP connection stays silent before the system probes whether its
/// host is still there.
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
/// Time between two probes of a silent connection.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// Probes left unanswered before a connection counts as lost: a vanished host is noticed about
/// `KEEPALIVE_IDLE + KEEPALIVE_PROBES * KEEPALIVE_INTERVAL` (25 s) after it last spoke.
pub const KEEPALIVE_PROBES: u32 = 3;

/// Asks the system to probe `stream` when it falls silent (see the module documentation).
fn keep_alive(stream: &std::net::TcpStream) -> std::io::Result<()> {
    let probes = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    socket2::SockRef::from(stream).set_tcp_keepalive(&probes)
}

/// Where to listen.
#[derive(Clone, Debug, PartialEq)]
pub enum ListenAddr {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket's path.
    Unix(PathBuf),
}

impl ListenAddr {
    /// Reads `tcp://HOST:PORT`, `tcp://:PORT` or `:PORT` (loopback), or `unix:PATH`.
    pub fn parse(text: &str) -> Result<ListenAddr, String> {
        if let Some(path) = text.strip_prefix("unix:") {
            let path = path.trim_start_matches("//");
            if path.is_empty() {
                return Err("`unix:` needs a socket path, e.g. unix:/tmp/voml.sock".into());
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        let rest = text.strip_prefix("tcp://").unwrap_or(text);
        let rest = if rest.starts_with(':') {
            format!("127.0.0.1{rest}")
        } else {
            rest.to_string()
        };
        let addr = rest
            .to_socket_addrs()
            .map_err(|e| format!("`{text}` is not an address to listen on ({e}); write tcp://127.0.0.1:PORT or unix:PATH"))?
            .next()
            .ok_or_else(|| format!("`{text}` names no address"))?;
        Ok(ListenAddr::Tcp(addr))
    }
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenAddr::Tcp(a) => write!(f, "tcp://{a}"),
            ListenAddr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// How a live source behaves.
#[derive(Clone, Debug)]
pub struct ListenOptions {
    /// End after this many producers have connected and closed; `None`: run until stopped.
    pub producers: Option<usize>,
    /// How long a record may wait for earlier ones from other producers.
    pub reorder_window: Duration,
    /// How trace lines are read.
    pub read: ReadOptions,
}

impl Default for ListenOptions {
    fn default() -> ListenOptions {
        ListenOptions {
            producers: None,
            reorder_window: Duration::from_millis(100),
            read: ReadOptions::default(),
        }
    }
}

/// What the merger has seen, for the summary of a live run.
#[derive(Clone, Default)]
pub struct LiveCounts {
    pub(crate) connected: Arc<AtomicU64>,
    pub(crate) late: Arc<AtomicU64>,
}

impl LiveCounts {
    /// Producers that connected.
    pub fn connected(&self) -> u64 {
        self.connected.load(Ordering::Relaxed)
    }

    /// Records delivered after a later one (they arrived after the reordering window).
    pub fn late(&self) -> u64 {
        self.late.load(Ordering::Relaxed)
    }
}

/// What a connection's reader (or a NATS consumer) tells the merger.
pub(crate) enum Event {
    Opened(u32, String),
    Items(Batch),
    Closed(u32),
}

/// Batches on their way from the connections to the merger before readers wait.
pub(crate) const INBOX: usize = 64;
/// Records held for ordering before the window is applied even while records keep
/// arriving (a producer that is connected but silent must not make memory grow).
const MAX_HELD: usize = 1 << 16;

impl Source {
    /// Listens at `addr` and delivers what producers send (see the module documentation).
    /// Returns the source, the address really listened on (a port 0 becomes the port the
    /// system chose) and the counts a summary can show.
    pub fn listen(
        addr: &ListenAddr,
        options: ListenOptions,
    ) -> std::io::Result<(Source, ListenAddr, LiveCounts)> {
        let (inbox_tx, inbox_rx) = mpsc::sync_channel::<Event>(INBOX);
        let (tx, rx) = mpsc::sync_channel(16);
        let (back, back_rx) = mpsc::sync_channel(18);
        let counts = LiveCounts::default();
        let (name, bound) = match addr {
            ListenAddr::Tcp(a) => {
                let listener = TcpListener::bind(a)?;
                let bound = ListenAddr::Tcp(listener.local_addr()?);
                listener.set_nonblocking(true)?;
                let (options, counts) = (options.clone(), counts.clone());
                spawn("voml-accept", move || {
                    accept(
                        || match listener.accept() {
                            Ok((stream, peer)) => {
                                stream.set_nonblocking(false).ok()?;
                                // (A connection the system will not probe is still read.)
                                let _ = keep_alive(&stream);
                                Some(Ok((
                                    Box::new(stream) as Box<dyn Read + Send>,
                                    format!("tcp://{peer}"),
                                )))
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
                            Err(e) => Some(Err(e)),
                        },
                        inbox_tx,
                        options,
                        counts,
                    )
                })?;
                (bound.to_string(), bound)
            }
            ListenAddr::Unix(path) => {
                // A socket file left by an earlier run is replaced; anything else is not.
                if std::fs::symlink_metadata(path).is_ok_and(|m| {
                    use std::os::unix::fs::FileTypeExt;
                    m.file_type().is_socket()
                }) {
                    let _ = std::fs::remove_file(path);
                }
                let listener = UnixListener::bind(path)?;
                listener.set_nonblocking(true)?;
                let (options, counts) = (options.clone(), counts.clone());
                let label = format!("unix:{}", path.display());
                let next = std::sync::atomic::AtomicU64::new(1);
                spawn("voml-accept", move || {
                    accept(
                        || match listener.accept() {
                            Ok((stream, _)) => {
                                stream.set_nonblocking(false).ok()?;
                                let n = next.fetch_add(1, Ordering::Relaxed);
                                Some(Ok((
                                    Box::new(stream) as Box<dyn Read + Send>,
                                    format!("{label}#{n}"),
                                )))
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
                            Err(e) => Some(Err(e)),
                        },
                        inbox_tx,
                        options,
                        counts,
                    )
                })?;
                (addr.to_string(), addr.clone())
            }
        };
        let window = options.reorder_window;
        let expected = options.producers;
        let merge_counts = counts.clone();
        spawn("voml-merge", move || {
            merge(inbox_rx, tx, back_rx, window, expected, merge_counts)
        })?;
        let source = Source::from_channel(name, rx, back, Share::default())
            .live_from_producers(counts.clone());
        Ok((source, bound, counts))
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
}

/// Accepts connections until `producers` have come (or a stop is asked for), reading each on
/// a thread of its own.
fn accept(
    mut next: impl FnMut() -> Option<std::io::Result<(Box<dyn Read + Send>, String)>>,
    inbox: SyncSender<Event>,
    options: ListenOptions,
    counts: LiveCounts,
) {
    let mut accepted = 0usize;
    while options.producers.is_none_or(|n| accepted < n) && !stop_requested() {
        match next() {
            // Nothing yet, or a connection that failed before it was accepted.
            None | Some(Err(_)) => std::thread::sleep(Duration::from_millis(10)),
            Some(Ok((stream, name))) => {
                accepted += 1;
                counts.connected.fetch_add(1, Ordering::Relaxed);
                let id = accepted as u32;
                let inbox = inbox.clone();
                let read = options.read;
                let _ = spawn("voml-producer", move || {
                    if inbox.send(Event::Opened(id, name.clone())).is_err() {
                        return;
                    }
                    let reader =
                        TraceReader::new(BufReader::with_capacity(1 << 16, stream), name, read)
                            .cut_last_line_is_bad();
                    // Each producer's reader allocates its own records (none come back).
                    let (_none, nothing_back) = mpsc::sync_channel::<Batch>(0);
                    read_records(
                        reader,
                        id,
                        |batch| inbox.send(Event::Items(batch)).is_ok(),
                        &nothing_back,
                        |_| {},
                    );
                    let _ = inbox.send(Event::Closed(id));
                });
            }
        }
    }
}

/// A record waiting for its turn.
struct Held {
    from: u32,
    record: Record,
    since: Instant,
}

/// Merges the producers' records in timestamp order (see the module documentation) and
/// hands them to the driver in batches. Ends when every reader has gone (the acceptor has
/// stopped and the last connection closed), or at a stop.
pub(crate) fn merge(
    inbox: Receiver<Event>,
    tx: SyncSender<Batch>,
    back: Receiver<Batch>,
    window: Duration,
    expected: Option<usize>,
    counts: LiveCounts,
) {
    // Waiting records by (timestamp, producer, arrival); the latest timestamp of each open
    // producer; producers opened so far.
    let mut held: BTreeMap<(OrdF64, u32, u64), Held> = BTreeMap::new();
    let mut opened = 0usize;
    let mut latest: HashMap<u32, f64> = HashMap::new();
    let mut arrival = 0u64;
    let mut delivered_up_to = f64::NEG_INFINITY;
    let mut out = Batch::default();
    let mut ended = false;
    loop {
        // Batches the driver has finished with are not reused here; just let them go.
        while back.try_recv().is_ok() {}
        let wait = held
            .values()
            .map(|h| h.since + window)
            .min()
            .map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_millis(50))
            .min(Duration::from_millis(50));
        // Take everything that has arrived before deciding what may go: a record must not
        // go out by its window while what would precede it waits in the inbox.
        let mut first = Some(inbox.recv_timeout(wait));
        let mut quiet = false;
        loop {
            let event = match first.take() {
                Some(Ok(e)) => e,
                Some(Err(RecvTimeoutError::Timeout)) => {
                    quiet = true;
                    break;
                }
                Some(Err(RecvTimeoutError::Disconnected)) => {
                    ended = true;
                    break;
                }
                None => match inbox.try_recv() {
                    Ok(e) => e,
                    Err(mpsc::TryRecvError::Empty) => {
                        quiet = true;
                        break;
                    }
                    Err(mpsc::TryRecvError::Disconnected) => {
                        ended = true;
                        break;
                    }
                },
            };
            match event {
                Event::Opened(id, name) => {
                    opened += 1;
                    latest.insert(id, f64::NEG_INFINITY);
                    out.names.push((id, name));
                }
                Event::Closed(id) => {
                    latest.remove(&id);
                }
                Event::Items(batch) => {
                    let now = Instant::now();
                    for (from, item) in batch.items {
                        match item {
                            Err(e) => out.items.push((from, Err(e))),
                            Ok(record) => {
                                let ts = record.timestamp().unwrap_or(f64::NEG_INFINITY);
                                if let Some(l) = latest.get_mut(&from) {
                                    *l = l.max(ts);
                                }
                                arrival += 1;
                                held.insert(
                                    (OrdF64(ts), from, arrival),
                                    Held {
                                        from,
                                        record,
                                        since: now,
                                    },
                                );
                            }
                        }
                    }
                    // Hand over what may go before taking more: the driver's pace must reach
                    // the producers.
                    if out.items.len() >= 4096 || held.len() >= 8192 {
                        break;
                    }
                }
            }
        }
        let stopping = ended || stop_requested();
        // Release what no open producer can still precede (while producers are still
        // expected to connect, that is nothing), and, when nothing is arriving, what has
        // waited its window.
        let awaited = expected.is_some_and(|n| opened < n);
        let floor = if awaited {
            f64::NEG_INFINITY
        } else {
            latest.values().copied().fold(f64::INFINITY, f64::min)
        };
        let now = Instant::now();
        loop {
            let size = held.len();
            let Some(entry) = held.first_entry() else {
                break;
            };
            let (OrdF64(ts), _, _) = *entry.key();
            let waited = now >= entry.get().since + window;
            let crowded = size > MAX_HELD;
            let release =
                stopping || ts <= floor || (waited && (quiet || crowded)) || size > 4 * MAX_HELD;
            if !release {
                break;
            }
            let h = entry.remove();
            if ts < delivered_up_to {
                counts.late.fetch_add(1, Ordering::Relaxed);
            }
            delivered_up_to = delivered_up_to.max(ts);
            out.items.push((h.from, Ok(h.record)));
        }
        if !out.is_empty() && tx.send(std::mem::take(&mut out)).is_err() {
            return;
        }
        if stopping && held.is_empty() {
            return;
        }
    }
}

/// A timestamp as a key: records without one sort first.
#[derive(Clone, Copy)]
struct OrdF64(f64);

impl PartialEq for OrdF64 {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for OrdF64 {}

impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_written() {
        assert_eq!(
            ListenAddr::parse("tcp://127.0.0.1:9000").unwrap(),
            ListenAddr::Tcp("127.0.0.1:9000".parse().unwrap())
        );
        assert_eq!(
            ListenAddr::parse(":9000").unwrap(),
            ListenAddr::Tcp("127.0.0.1:9000".parse().unwrap())
        );
        assert_eq!(
            ListenAddr::parse("tcp://:0").unwrap(),
            ListenAddr::Tcp("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(
            ListenAddr::parse("unix:/tmp/v.sock").unwrap(),
            ListenAddr::Unix("/tmp/v.sock".into())
        );
        assert!(ListenAddr::parse("unix:").is_err());
        assert!(ListenAddr::parse("tcp://nonsense").is_err());
    }
}
