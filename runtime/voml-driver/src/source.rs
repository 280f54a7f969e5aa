//! Where records come from: a trace read on its own thread (a file, standard input, any
//! stream, in any format `voml_trace` reads: told by content unless forced), handed to the
//! driver in batches through a bounded channel, so that reading and parsing run beside the
//! visual object's code and a slow visual object slows the reader rather than filling memory. The driver hands each batch back when it is done with it, and
//! the reader parses new records into the old ones: after the first few batches, reading
//! allocates nothing per record (and no memory moves from one thread's allocator to the
//! other's).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use crate::listen::LiveCounts;
use voml_trace::{Format, FormatReader, Interest, ReadOptions, Record, RecordSource, TraceError};

/// Records (or bad lines) read in one go, each with the producer it came from, and the
/// names of producers that appeared since the last batch.
#[derive(Default)]
pub(crate) struct Batch {
    pub(crate) items: Vec<(u32, Result<Record, TraceError>)>,
    pub(crate) names: Vec<(u32, String)>,
}

impl Batch {
    pub(crate) fn with_capacity(n: usize) -> Batch {
        Batch {
            items: Vec::with_capacity(n),
            names: Vec::new(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty() && self.names.is_empty()
    }
}

/// Set when the run is asked to stop (an interrupt, a termination signal): sources end as at
/// the end of their input, so that what was accepted is processed and the outputs written.
static STOP: AtomicBool = AtomicBool::new(false);

/// Asks every source to end as if its input had ended.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked for.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Most items in one batch. Each batch handed over may wake the driver's thread (a system
/// call and a context switch, some microseconds on a virtual machine): batches of 4096
/// records took a tenth off the CPU time of a count over a 38 MB trace against 1024. A live
/// producer's records go out as soon as no more are buffered, whatever this size.
const BATCH: usize = 4096;
/// Most batches read ahead of the driver (16,384 records).
const AHEAD: usize = 4;

/// What [`Source::next`] found.
pub enum Next<'a> {
    /// A record, or a line that is not one, and the name of where it came from (a file, a
    /// producer on a socket).
    Item(&'a str, Result<&'a Record, &'a TraceError>),
    /// Nothing arrived in the time given.
    Idle,
    /// The input has ended.
    End,
}

/// How much of a trace file has been read: bytes so far, and the file's size when known.
#[derive(Clone, Default)]
pub struct Share {
    read: Arc<AtomicU64>,
    total: Option<u64>,
}

impl Share {
    /// Bytes read so far and the size of the whole, when the input is a file.
    pub fn get(&self) -> (u64, Option<u64>) {
        (self.read.load(Ordering::Relaxed), self.total)
    }
}

/// A trace being read on its own thread.
pub struct Source {
    name: String,
    /// Where records come from, by producer number.
    names: Vec<String>,
    rx: Receiver<Batch>,
    /// Batches done with, back to the reader.
    back: SyncSender<Batch>,
    batch: Batch,
    /// The next item of `batch`.
    pos: usize,
    share: Share,
    live: bool,
    /// What the producers of live input did (connections, sockets or NATS).
    counts: Option<LiveCounts>,
    ended: bool,
    /// What the reader thread parses whole, when told ([`Source::narrow`]).
    interest: InterestSlot,
}

/// Shared with the reader thread, which looks at it between batches.
type InterestSlot = Arc<Mutex<Option<Arc<Interest>>>>;

impl Source {
    /// Reads a trace file, named by its path in messages, in the format its first bytes
    /// tell.
    pub fn file(path: &Path, options: ReadOptions) -> std::io::Result<Source> {
        Source::file_as(path, options, None)
    }

    /// Reads a trace file in `format` (`None`: the format its first bytes tell).
    pub fn file_as(
        path: &Path,
        options: ReadOptions,
        format: Option<Format>,
    ) -> std::io::Result<Source> {
        let file = std::fs::File::open(path)?;
        let total = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        let mut source = Source::reader_as(
            path.display().to_string(),
            file,
            options,
            format,
            Some(path.to_path_buf()),
        );
        source.share.total = total;
        Ok(source)
    }

    /// Reads standard input (named `-`). It counts as live: it may pause while its producer
    /// runs.
    pub fn stdin(options: ReadOptions) -> Source {
        Source::stdin_as(options, None)
    }

    /// Reads standard input in `format` (`None`: the format its first bytes tell).
    pub fn stdin_as(options: ReadOptions, format: Option<Format>) -> Source {
        Source::reader_as("-".to_string(), std::io::stdin(), options, format, None).live()
    }

    /// Reads any stream, naming it `name` in messages, in the format its first bytes tell.
    pub fn reader(name: String, input: impl Read + Send + 'static, options: ReadOptions) -> Source {
        Source::reader_as(name, input, options, None, None)
    }

    /// Reads any stream in `format` (`None`: the format its first bytes tell); `path`, for a
    /// file, is where a Paraver trace's `.pcf` is looked for.
    pub fn reader_as(
        name: String,
        input: impl Read + Send + 'static,
        options: ReadOptions,
        format: Option<Format>,
        path: Option<PathBuf>,
    ) -> Source {
        let (tx, rx) = mpsc::sync_channel(AHEAD);
        let (back, back_rx) = mpsc::sync_channel(AHEAD + 2);
        let share = Share::default();
        let counted = Counted {
            inner: input,
            read: share.read.clone(),
        };
        let thread_name = name.clone();
        let interest = InterestSlot::default();
        let told = interest.clone();
        // If the thread cannot be started the channel is closed at once: the source ends
        // empty, and the caller reports zero records.
        let _ = std::thread::Builder::new()
            .name("voml-trace-reader".into())
            .spawn(move || {
                let reader = FormatReader::from_input(
                    counted,
                    thread_name,
                    options,
                    format,
                    path.as_deref(),
                );
                let tune = |reader: &mut FormatReader<_>| {
                    if let Ok(slot) = told.try_lock() {
                        reader.set_interest(slot.clone());
                    }
                };
                read_records(reader, 0, |batch| tx.send(batch).is_ok(), &back_rx, tune);
            });
        let mut source = Source::from_channel(name, rx, back, share);
        source.interest = interest;
        source
    }

    /// Tells the reader which records need parsing whole: records `interest` does not want
    /// are parsed only up to their timestamp from the next batch on (those read before are
    /// whole). Only for a visual object that sees no other record: one without condition
    /// parts, which is not replaced while it runs. PICL traces only; other formats' readers
    /// read every record whole.
    pub fn narrow(&self, interest: Option<Interest>) {
        if let Ok(mut slot) = self.interest.lock() {
            *slot = interest.map(Arc::new);
        }
    }

    /// A source fed by another thread through `rx` (batches go back through `back`).
    pub(crate) fn from_channel(
        name: String,
        rx: Receiver<Batch>,
        back: SyncSender<Batch>,
        share: Share,
    ) -> Source {
        Source {
            names: vec![name.clone()],
            name,
            rx,
            back,
            batch: Batch::default(),
            pos: 0,
            share,
            live: false,
            counts: None,
            ended: false,
            interest: InterestSlot::default(),
        }
    }

    /// Marks the source as live (its input may pause while its producers run).
    pub(crate) fn live(mut self) -> Source {
        self.live = true;
        self
    }

    /// Marks the source as live input from producers, which `counts` counts.
    pub(crate) fn live_from_producers(self, counts: LiveCounts) -> Source {
        Source {
            counts: Some(counts),
            ..self.live()
        }
    }

    /// What is said of the producers at the end of a run, for live input from producers:
    /// how many there were, and how many records came too late to be put in order.
    pub fn producers_note(&self) -> Option<String> {
        let counts = self.counts.as_ref()?;
        let late = match counts.late() {
            0 => String::new(),
            1 => "; 1 record came after a later one had gone on (beyond the reordering window) and was taken out of order".to_string(),
            n => format!("; {n} records came after later ones had gone on (beyond the reordering window) and were taken out of order"),
        };
        Some(format!(
            "{} producer(s) connected{late}",
            counts.connected()
        ))
    }

    /// The name records are located by in messages (a path, `-`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How much of the input has been read.
    pub fn share(&self) -> Share {
        self.share.clone()
    }

    /// True when the input may pause while its producer runs (standard input, sockets).
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// The same records for `n` visual objects: the input is read once, on its own thread,
    /// and every record (and bad line) goes to each of the `n` sources, in the same order.
    /// The slowest reader sets the pace (the channels are bounded); a source dropped early
    /// (its run ended) is left out from then on.
    pub fn fan_out(self, n: usize) -> Vec<Source> {
        let name = self.name.clone();
        let share = self.share.clone();
        let live = self.live;
        // (Only the first tells of the producers, as only the first tells of bad lines.)
        let mut counts = self.counts.clone();
        let mut senders = Vec::with_capacity(n);
        let mut sources = Vec::with_capacity(n);
        for _ in 0..n {
            let (tx, rx) = mpsc::sync_channel(AHEAD);
            // Batches come back only to be dropped: each copy is made anew.
            let (back, _back_rx) = mpsc::sync_channel(1);
            senders.push(tx);
            let mut source = Source::from_channel(name.clone(), rx, back, share.clone());
            source.live = live;
            source.counts = counts.take();
            sources.push(source);
        }
        let _ = std::thread::Builder::new()
            .name("voml-fan-out".into())
            .spawn(move || fan_out(self, senders));
        sources
    }

    /// The next record or bad line. With `wait`, gives [`Next::Idle`] when nothing arrives
    /// within it; without, waits as long as it takes.
    pub fn next(&mut self, wait: Option<Duration>) -> Next<'_> {
        if self.pos >= self.batch.items.len() {
            if self.ended {
                return Next::End;
            }
            let batch = match wait {
                None => self.rx.recv().map_err(|_| ()),
                Some(w) if w.is_zero() => match self.rx.try_recv() {
                    Ok(b) => Ok(b),
                    Err(TryRecvError::Empty) => return Next::Idle,
                    Err(TryRecvError::Disconnected) => Err(()),
                },
                Some(w) => match self.rx.recv_timeout(w) {
                    Ok(b) => Ok(b),
                    Err(RecvTimeoutError::Timeout) => return Next::Idle,
                    Err(RecvTimeoutError::Disconnected) => Err(()),
                },
            };
            match batch {
                Ok(batch) => {
                    let done = std::mem::replace(&mut self.batch, batch);
                    self.pos = 0;
                    // The reader may have ended: then the batch is simply dropped.
                    let _ = self.back.try_send(done);
                    for (id, name) in self.batch.names.drain(..) {
                        let id = id as usize;
                        if self.names.len() <= id {
                            self.names.resize(id + 1, String::new());
                        }
                        self.names[id] = name;
                    }
                    if self.batch.items.is_empty() {
                        return Next::Idle;
                    }
                }
                Err(()) => {
                    self.ended = true;
                    return Next::End;
                }
            }
        }
        self.pos += 1;
        let (from, item) = &self.batch.items[self.pos - 1];
        let name = self.names.get(*from as usize).map_or("", String::as_str);
        Next::Item(name, item.as_ref())
    }
}

/// The fan-out thread: copies what `source` gives to every sender still listening. A batch
/// goes out when it is full or when the input pauses, as the reader's do.
fn fan_out(mut source: Source, mut senders: Vec<SyncSender<Batch>>) {
    // Producer names, numbered as the copies know them.
    let mut ids: Vec<String> = Vec::new();
    let mut batch = Batch::with_capacity(BATCH);
    let send = |batch: &mut Batch, senders: &mut Vec<SyncSender<Batch>>| {
        if batch.is_empty() {
            return;
        }
        senders.retain(|tx| {
            let copy = Batch {
                items: batch.items.clone(),
                names: batch.names.clone(),
            };
            tx.send(copy).is_ok()
        });
        batch.items.clear();
        batch.names.clear();
    };
    loop {
        if senders.is_empty() {
            return;
        }
        match source.next(Some(Duration::from_millis(20))) {
            Next::End => break,
            Next::Idle => send(&mut batch, &mut senders),
            Next::Item(from, item) => {
                let id = match ids.iter().position(|n| n == from) {
                    Some(id) => id,
                    None => {
                        ids.push(from.to_string());
                        batch.names.push((ids.len() as u32 - 1, from.to_string()));
                        ids.len() - 1
                    }
                };
                batch
                    .items
                    .push((id as u32, item.cloned().map_err(Clone::clone)));
                if batch.items.len() >= BATCH {
                    send(&mut batch, &mut senders);
                }
            }
        }
    }
    send(&mut batch, &mut senders);
}

/// Reads records from `reader` as producer `from` and hands them over in batches (`send`
/// answers false when nobody listens any more). A batch goes out when it is full, or as
/// soon as the next record is not already buffered, so that a live producer's records are
/// not held back waiting for more. Records the driver is done with come back through `back`
/// to be parsed into again. Ends at the end of the input, or when a stop is requested.
pub(crate) fn read_records<S: RecordSource>(
    mut reader: S,
    from: u32,
    mut send: impl FnMut(Batch) -> bool,
    back: &Receiver<Batch>,
    mut tune: impl FnMut(&mut S),
) {
    // A batch that came back is filled again in place: its records are parsed where they
    // are, without moving them anywhere.
    let fresh = |back: &Receiver<Batch>| match back.try_recv() {
        Ok(mut done) => {
            done.names.clear();
            done
        }
        Err(_) => Batch::with_capacity(BATCH),
    };
    let mut batch = fresh(back);
    let mut filled = 0;
    // What the reader was told before it began counts from the first record.
    tune(&mut reader);
    loop {
        match batch.items.get_mut(filled) {
            // A record of a batch that came back: the next one is parsed where it is.
            Some((source, Ok(record))) => match reader.next_into(record) {
                None => break,
                Some(Ok(())) => *source = from,
                Some(Err(e)) => batch.items[filled] = (from, Err(e)),
            },
            slot => {
                let Some(item) = reader.next_reusing(None) else {
                    break;
                };
                match slot {
                    Some(slot) => *slot = (from, item),
                    None => batch.items.push((from, item)),
                }
            }
        }
        filled += 1;
        if filled >= BATCH || !reader.next_is_buffered() {
            batch.items.truncate(filled);
            if !send(std::mem::replace(&mut batch, fresh(back))) {
                return;
            }
            filled = 0;
            if stop_requested() {
                return;
            }
            tune(&mut reader);
        }
    }
    batch.items.truncate(filled);
    if !batch.is_empty() {
        send(batch);
    }
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(source: &mut Source) -> (Vec<Record>, Vec<TraceError>) {
        let (mut records, mut bad) = (Vec::new(), Vec::new());
        loop {
            match source.next(None) {
                Next::Item(_, Ok(r)) => records.push(r.clone()),
                Next::Item(_, Err(e)) => bad.push(e.clone()),
                Next::Idle => {}
                Next::End => return (records, bad),
            }
        }
    }

    #[test]
    fn every_record_and_bad_line_arrives_in_order() {
        let mut text = String::new();
        for i in 0..5000 {
            if i % 1000 == 7 {
                text.push_str("garbage\n");
            } else {
                text.push_str(&format!("-3 1 {i}.0 0\n"));
            }
        }
        let mut source = Source::reader(
            "t.trf".into(),
            std::io::Cursor::new(text),
            ReadOptions::default(),
        );
        let (records, bad) = all(&mut source);
        assert_eq!(records.len(), 4995);
        assert_eq!(bad.len(), 5);
        assert_eq!(bad[0].line, 8);
        assert_eq!(bad[0].source_name, "t.trf");
        let ts: Vec<f64> = records.iter().filter_map(|r| r.timestamp()).collect();
        assert!(ts.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(source.share().get().0, text_len(5000));
    }

    /// Batches come back to the reader and are parsed into again: over many batches, every
    /// record is exactly its line (nothing left over from the record parsed there before,
    /// longer or shorter), and bad lines keep their places.
    #[test]
    fn records_parsed_into_returned_batches_are_their_lines() {
        let n = BATCH * 6 + 17;
        let line = |i: usize| match i % 5 {
            0 => format!("-3 {} {i}.5 1 2 3 4 5 6 7\n", i % 7),
            1 => format!("-4 {} {i}.25 9\n", i % 7),
            2 if i % 1001 == 2 => "-3 x 1.0\n".to_string(),
            _ => format!("-3 {} {i} \"s{i}\" 8\n", i % 7),
        };
        let text: String = (0..n).map(line).collect();
        let mut source = Source::reader(
            "t.trf".into(),
            std::io::Cursor::new(text),
            ReadOptions::default(),
        );
        let (records, bad) = all(&mut source);
        let expected: Vec<Record> = (0..n)
            .filter(|i| !(i % 5 == 2 && i % 1001 == 2))
            .map(|i| voml_trace::parse_line(&line(i), i as u64 + 1).unwrap())
            .collect();
        assert_eq!(
            bad.len(),
            (0..n).filter(|i| i % 5 == 2 && i % 1001 == 2).count()
        );
        assert!(!bad.is_empty());
        assert_eq!(records.len(), expected.len());
        for (got, want) in records.iter().zip(&expected) {
            assert_eq!(got, want);
        }
    }

    fn text_len(n: usize) -> u64 {
        (0..n)
            .map(|i| {
                if i % 1000 == 7 {
                    8
                } else {
                    format!("-3 1 {i}.0 0\n").len() as u64
                }
            })
            .sum()
    }

    /// A producer that writes a record and then pauses: the record reaches the driver
    /// while the producer is still paused, not when more lines have piled up.
    #[test]
    fn a_live_record_is_not_held_back_for_a_full_batch() {
        let (mut writer, reader) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut source = Source::reader("live".into(), reader, ReadOptions::default());
        use std::io::Write;
        writer.write_all(b"-3 1 0.5 2\n").unwrap();
        let got = match source.next(Some(Duration::from_secs(10))) {
            Next::Item(_, Ok(r)) => r.timestamp(),
            _ => None,
        };
        assert_eq!(got, Some(0.5));
        assert!(matches!(
            source.next(Some(Duration::from_millis(50))),
            Next::Idle
        ));
        drop(writer);
        assert!(matches!(
            source.next(Some(Duration::from_secs(10))),
            Next::End
        ));
    }
}
