//! Where records come from: a trace read on its own thread (a file, standard input, any
//! stream), handed to the driver in batches through a bounded channel, so that reading and
//! parsing run beside the visual object's code and a slow visual object slows the reader
//! rather than filling memory. The driver hands each batch back when it is done with it, and
//! the reader parses new records into the old ones: after the first few batches, reading
//! allocates nothing per record (and no memory moves from one thread's allocator to the
//! other's).

use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use voml_trace::{ReadOptions, Record, TraceError, TraceReader};

/// Records (or bad lines) read in one go.
type Batch = Vec<Result<Record, TraceError>>;

/// Most items in one batch.
const BATCH: usize = 1024;
/// Most batches read ahead of the driver.
const AHEAD: usize = 16;

/// What [`Source::next`] found.
pub enum Next<'a> {
    /// A record, or a line that is not one.
    Item(Result<&'a Record, &'a TraceError>),
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
    rx: Receiver<Batch>,
    /// Batches done with, back to the reader.
    back: SyncSender<Batch>,
    batch: Batch,
    /// The next item of `batch`.
    pos: usize,
    share: Share,
    live: bool,
    ended: bool,
}

impl Source {
    /// Reads a trace file, named by its path in messages.
    pub fn file(path: &Path, options: ReadOptions) -> std::io::Result<Source> {
        let file = std::fs::File::open(path)?;
        let total = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        let mut source = Source::reader(path.display().to_string(), file, options);
        source.share.total = total;
        Ok(source)
    }

    /// Reads standard input (named `-`). It counts as live: it may pause while its producer
    /// runs.
    pub fn stdin(options: ReadOptions) -> Source {
        let mut source = Source::reader("-".to_string(), std::io::stdin(), options);
        source.live = true;
        source
    }

    /// Reads any stream, naming it `name` in messages.
    pub fn reader(name: String, input: impl Read + Send + 'static, options: ReadOptions) -> Source {
        let (tx, rx) = mpsc::sync_channel(AHEAD);
        let (back, back_rx) = mpsc::sync_channel(AHEAD + 2);
        let share = Share::default();
        let counted = Counted {
            inner: input,
            read: share.read.clone(),
        };
        let thread_name = name.clone();
        // If the thread cannot be started the channel is closed at once: the source ends
        // empty, and the caller reports zero records.
        let _ = std::thread::Builder::new()
            .name("voml-trace-reader".into())
            .spawn(move || read(thread_name, counted, options, tx, back_rx));
        Source {
            name,
            rx,
            back,
            batch: Vec::new(),
            pos: 0,
            share,
            live: false,
            ended: false,
        }
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

    /// The next record or bad line. With `wait`, gives [`Next::Idle`] when nothing arrives
    /// within it; without, waits as long as it takes.
    pub fn next(&mut self, wait: Option<Duration>) -> Next<'_> {
        if self.pos >= self.batch.len() {
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
                    if self.batch.is_empty() {
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
        Next::Item(self.batch[self.pos - 1].as_ref())
    }
}

/// The reader thread: parses lines and sends them in batches. A batch goes out when it is
/// full, or as soon as the next line is not already buffered, so that a live producer's
/// records are not held back waiting for more. Ends when the input ends or the driver has
/// gone.
fn read<R: Read>(
    name: String,
    input: Counted<R>,
    options: ReadOptions,
    tx: SyncSender<Batch>,
    back: Receiver<Batch>,
) {
    let mut reader = TraceReader::new(BufReader::with_capacity(1 << 16, input), name, options);
    // Records the driver is done with, to parse into again.
    let mut spare: Vec<Record> = Vec::new();
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        if spare.is_empty() {
            while let Ok(mut done) = back.try_recv() {
                spare.extend(done.drain(..).filter_map(Result::ok));
            }
        }
        let Some(item) = reader.next_reusing(spare.pop()) else {
            break;
        };
        batch.push(item);
        let buffered = reader.get_ref().buffer();
        let line_ready = memchr_newline(buffered);
        if batch.len() >= BATCH || !line_ready {
            if tx.send(std::mem::take(&mut batch)).is_err() {
                return;
            }
            batch.reserve(BATCH);
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(batch);
    }
}

fn memchr_newline(bytes: &[u8]) -> bool {
    bytes.contains(&b'\n')
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
                Next::Item(Ok(r)) => records.push(r.clone()),
                Next::Item(Err(e)) => bad.push(e.clone()),
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
            Next::Item(Ok(r)) => r.timestamp(),
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
