//! Records through NATS JetStream: a [`Source`] that consumes the records producers
//! published on a subject (`voml run --nats URL --subject S`), and a [`Publisher`] that
//! publishes them (`voml send TRACE --nats URL --subject S`), so that producers on many
//! machines feed visual objects on many others through one server, without losing a record
//! when a visual object is slow, restarts, or the server restarts.
//!
//! **The stream.** Everything a run's producers publish goes to one JetStream stream, named
//! after the run's subject `S` (`VOML_` and `S` with its dots as `_`), holding the subjects
//! `S.>` in files (it outlives a server restart). Producers and consumers create it if it is
//! not there. Each producer publishes on `S.NAME`, its own name: batches of PICL lines, each
//! message with a `Nats-Msg-Id` (`NAME-N`) so that the server keeps one copy of a message
//! the producer sent again, then an end message (header `Voml-End: K`, K the number of
//! messages before it). A producer sends each message only when the last one was stored
//! (the server's acknowledgement), and sends it again until it is, for up to a minute: a
//! server restart delays it and loses nothing. After three sends without an
//! acknowledgement it connects again (a client does not always recover from a restart by
//! itself); the message keeps its id, so it is stored once.
//!
//! **Consuming.** Each visual object has a durable pull consumer of its own (a unique
//! name), reading the stream from its first message, with explicit acknowledgements: a
//! message is acknowledged once its records are handed to the driver (one that came before
//! its turn waits unacknowledged, so the server's bound on unacknowledged messages bounds
//! what waits), and one not acknowledged (delivered on a connection that died, or while the
//! server went away) is delivered again after `ACK_WAIT` (10 s). A visual object that is
//! slow makes the messages wait in the stream (it pulls no more than its driver takes); one
//! that restarts (a new consumer) reads the run from its beginning again, and so, being
//! deterministic, reaches the same state. Across a server restart the client reconnects and
//! the consumer goes on from its acknowledgement floor. A connection that dies without a
//! word is noticed within three unanswered pings (`PING_INTERVAL`, 4 s) and made again. The
//! consumer is deleted when the run ends (an abandoned one after an hour).
//!
//! **Order.** The stream keeps each producer's messages in the order it published them (it
//! publishes one at a time), but a message delivered again comes after later ones: each
//! producer's messages are taken by their number, a message that comes early held until
//! those before it have come, a copy of one taken dropped, and the producer ends when the
//! K messages its end counts have all been taken (see `order.rs`); one that never comes is
//! given up on after `GAP_PATIENCE` (30 s), with a warning that names it. Records of
//! different producers are merged as `--listen` merges connections: in timestamp order, a record
//! waiting until every producer not yet ended has sent one at least as late, or for the
//! reordering window. A record later than one delivered already is delivered at once, and
//! counted as late.

use std::collections::{HashMap, HashSet};
use std::io::BufReader;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, SyncSender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_nats::jetstream::{self, consumer, stream};
use futures_util::StreamExt;
use voml_trace::{ReadOptions, TraceReader};

use crate::listen::{merge, Event, LiveCounts, INBOX};
use crate::source::{stop_requested, Batch, Share, Source};

mod order;

/// The header of a producer's last message.
pub const END_HEADER: &str = "Voml-End";

/// Longest a producer keeps sending a message the server does not store.
const PUBLISH_PATIENCE: Duration = Duration::from_secs(60);

/// A producer connects again after this many sends of one message in a row got no
/// acknowledgement (an acknowledgement waits up to 5 s).
const RECONNECT_AFTER: u32 = 3;

/// How often a client that has heard nothing from the server asks it whether it is there;
/// after three such asks unanswered it takes the connection for dead and connects again. A
/// connection can die without a word (a network path dropped, a firewall that forgot it):
/// with the client library's default (a minute) a visual object would wait three minutes
/// before it noticed, its records waiting in the stream meanwhile.
const PING_INTERVAL: Duration = Duration::from_secs(4);

/// How long the server waits for a delivered message's acknowledgement before it delivers
/// it again: a message delivered on a connection that died unnoticed comes again this long
/// after (a visual object acknowledges each message once its records are handed over).
const ACK_WAIT: Duration = Duration::from_secs(10);

/// Most messages delivered to a visual object and not yet acknowledged: what waits for its
/// turn (see `order.rs`) is bounded by it.
const MAX_ACK_PENDING: i64 = 1000;

/// How long a producer's message that later ones came after (or its end) is waited for
/// before it is given up on: long after it would have been delivered again.
const GAP_PATIENCE: Duration = Duration::from_secs(30);

/// Longest connecting to the server may take before a run or a producer gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A producer's message goes when it holds this many bytes of lines.
const MESSAGE_BYTES: usize = 32 * 1024;

/// How a NATS source behaves.
#[derive(Clone, Debug)]
pub struct NatsOptions {
    /// The server: `nats://HOST:PORT`.
    pub url: String,
    /// The run's subject: producers publish on `SUBJECT.NAME`.
    pub subject: String,
    /// End after this many producers have ended; `None`: run until stopped.
    pub producers: Option<usize>,
    /// How long a record may wait for earlier ones from other producers.
    pub reorder_window: Duration,
    /// How trace lines are read.
    pub read: ReadOptions,
}

/// Whether `subject` can name a run: dot-separated tokens of letters, digits, `-` and `_`.
pub fn check_subject(subject: &str) -> Result<(), String> {
    let good = !subject.is_empty()
        && subject.split('.').all(|t| {
            !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if good {
        Ok(())
    } else {
        Err(format!(
            "`{subject}` cannot name a run: write dot-separated words of letters, digits, `-` and `_` (e.g. runs.ring-42)"
        ))
    }
}

/// The stream of the run whose subject is `subject`.
pub fn stream_name(subject: &str) -> String {
    format!("VOML_{}", subject.replace('.', "_"))
}

fn stream_config(subject: &str) -> stream::Config {
    stream::Config {
        name: stream_name(subject),
        subjects: vec![format!("{subject}.>")],
        storage: stream::StorageType::File,
        description: Some(format!("VOML records published on {subject}.>")),
        ..Default::default()
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("voml-nats")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the NATS client's threads: {e}"))
}

/// Connects to `url` (a missing server is an error, after at most [`CONNECT_TIMEOUT`];
/// later the client reconnects for as long as it takes) and opens the run's stream.
async fn open(
    url: &str,
    subject: &str,
    name: &str,
) -> Result<(jetstream::Context, stream::Stream), String> {
    let client = async_nats::ConnectOptions::new()
        .name(name)
        .connection_timeout(CONNECT_TIMEOUT)
        .max_reconnects(None)
        .ping_interval(PING_INTERVAL)
        .connect(url)
        .await
        .map_err(|e| format!("cannot connect to the NATS server at {url}: {e}"))?;
    let js = jetstream::new(client);
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, js.get_or_create_stream(stream_config(subject)))
        .await
        .map_err(|_| format!("the NATS server at {url} did not answer in {CONNECT_TIMEOUT:?} (is JetStream on: nats-server -js?)"))?
        .map_err(|e| format!("cannot open the stream {} for {subject}.> on {url} (is JetStream on: nats-server -js?): {e}", stream_name(subject)))?;
    Ok((js, stream))
}

/// A name no other consumer or producer has: this process and this moment.
fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}-{}-{nanos:x}", std::process::id())
}

impl Source {
    /// Consumes what producers publish on `options.subject` at `options.url` (see the module
    /// documentation). The server is reached before this returns: a missing server, or one
    /// without JetStream, is an error here.
    pub fn nats(options: NatsOptions) -> Result<(Source, LiveCounts), String> {
        check_subject(&options.subject)?;
        let rt = runtime()?;
        let name = unique("voml-run");
        let consumer_config = consumer::pull::Config {
            durable_name: Some(name.clone()),
            deliver_policy: consumer::DeliverPolicy::All,
            ack_policy: consumer::AckPolicy::Explicit,
            filter_subject: format!("{}.>", options.subject),
            inactive_threshold: Duration::from_secs(3600),
            ack_wait: ACK_WAIT,
            max_ack_pending: MAX_ACK_PENDING,
            ..Default::default()
        };
        let (stream, consumer) = rt.block_on(async {
            let (_js, stream) = open(&options.url, &options.subject, &name).await?;
            let consumer = stream
                .get_or_create_consumer(&name, consumer_config)
                .await
                .map_err(|e| {
                    format!(
                        "cannot make a consumer of {} on {}: {e}",
                        stream_name(&options.subject),
                        options.url
                    )
                })?;
            Ok::<_, String>((stream, consumer))
        })?;
        let (inbox_tx, inbox_rx) = mpsc::sync_channel::<Event>(INBOX);
        let (tx, rx) = mpsc::sync_channel(16);
        let (back, back_rx) = mpsc::sync_channel(18);
        let counts = LiveCounts::default();
        let consume_counts = counts.clone();
        let (subject, producers, read) = (options.subject.clone(), options.producers, options.read);
        std::thread::Builder::new()
            .name("voml-nats".into())
            .spawn(move || {
                rt.block_on(async {
                    consume(
                        consumer,
                        inbox_tx,
                        &subject,
                        producers,
                        read,
                        consume_counts,
                    )
                    .await;
                    // The consumer was this run's alone.
                    let _ =
                        tokio::time::timeout(Duration::from_secs(2), stream.delete_consumer(&name))
                            .await;
                });
            })
            .map_err(|e| format!("cannot start the NATS consumer's thread: {e}"))?;
        let window = options.reorder_window;
        let merge_counts = counts.clone();
        std::thread::Builder::new()
            .name("voml-merge".into())
            .spawn(move || merge(inbox_rx, tx, back_rx, window, producers, merge_counts))
            .map_err(|e| format!("cannot start the merging thread: {e}"))?;
        let label = format!("nats:{}.>", options.subject);
        Ok((
            Source::from_channel(label, rx, back, Share::default())
                .live_from_producers(counts.clone()),
            counts,
        ))
    }
}

/// Hands `event` to the merger, which may make this thread wait (a slow visual object):
/// the runtime's other thread keeps the connection alive meanwhile. False when the merger
/// has gone.
fn hand_over(inbox: &SyncSender<Event>, event: Event) -> bool {
    tokio::task::block_in_place(|| inbox.send(event).is_ok())
}

/// A message taken: its records, and the message, acknowledged once they are handed over.
struct Taken {
    batch: Batch,
    message: jetstream::Message,
}

/// Hands producer `id`'s `ready` messages to the merger, acknowledging each, then its end
/// when it has `ended` (and that was not handed over yet). False when the merger has gone.
async fn deliver(
    inbox: &SyncSender<Event>,
    id: u32,
    ready: &mut Vec<Taken>,
    ended: bool,
    handed_ends: &mut HashSet<u32>,
) -> bool {
    for Taken { batch, message } in ready.drain(..) {
        if !batch.items.is_empty() && !hand_over(inbox, Event::Items(batch)) {
            return false;
        }
        let _ = message.ack().await;
    }
    !(ended && handed_ends.insert(id)) || hand_over(inbox, Event::Closed(id))
}

/// What is said of the messages `first..=last` of producer `name` (on `{prefix}{name}`)
/// given up on.
fn never_came((first, last): (u64, u64), prefix: &str, name: &str) -> String {
    let which = if first == last {
        format!("message {first}")
    } else {
        format!("messages {first}-{last}")
    };
    format!(
        "{which} of producer `{name}` ({prefix}{name}) never came (waited {}s): their records \
         are missing; the records after them are taken",
        GAP_PATIENCE.as_secs()
    )
}

/// Takes the run's messages until `expected` producers have ended (or a stop is asked for),
/// handing their records to the merger, each producer's in the order it published them (see
/// [`order`]); see the module documentation.
async fn consume(
    consumer: consumer::PullConsumer,
    inbox: SyncSender<Event>,
    subject: &str,
    expected: Option<usize>,
    read: ReadOptions,
    counts: LiveCounts,
) {
    let prefix = format!("{subject}.");
    // Each producer's number for the merger, and its messages.
    let mut producers: HashMap<String, (u32, order::Producer<Taken>)> = HashMap::new();
    let mut ended: HashSet<u32> = HashSet::new();
    // The stream sequences of the messages taken that have no number.
    let mut unnumbered: HashSet<u64> = HashSet::new();
    let mut ready = Vec::new();
    let done = |ended: &HashSet<u32>| expected.is_some_and(|n| ended.len() >= n);
    'run: while !done(&ended) && !stop_requested() {
        let mut messages = match consumer.messages().await {
            Ok(m) => m,
            Err(_) => {
                // The server is away: the client reconnects meanwhile.
                tokio::time::sleep(Duration::from_millis(250)).await;
                continue;
            }
        };
        loop {
            if stop_requested() {
                break 'run;
            }
            let now = Instant::now();
            for (name, (id, producer)) in &mut producers {
                if !producer.overdue(now, GAP_PATIENCE) {
                    continue;
                }
                if let Some(missed) = producer.skip(&mut ready) {
                    eprintln!("warning: NATS: {}", never_came(missed, &prefix, name));
                }
                if !deliver(&inbox, *id, &mut ready, producer.ended(), &mut ended).await {
                    break 'run;
                }
            }
            if done(&ended) {
                break 'run;
            }
            let next = match tokio::time::timeout(Duration::from_millis(200), messages.next()).await
            {
                Err(_) => continue,
                Ok(None) => break,
                Ok(Some(Err(_))) => {
                    // A missed heartbeat, a reconnection: pull anew.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    break;
                }
                Ok(Some(Ok(m))) => m,
            };
            let seq = next.info().map_or(0, |i| i.stream_sequence);
            let name = next
                .subject
                .as_str()
                .strip_prefix(&prefix)
                .unwrap_or(next.subject.as_str());
            let headers = next.headers.as_ref();
            let number = headers
                .and_then(|h| h.get(async_nats::header::NATS_MESSAGE_ID))
                .and_then(|id| order::number(id.as_str()));
            let end = headers.and_then(|h| h.get(END_HEADER)).map(|v| v.as_str());
            if number.is_none() && seq != 0 && !unnumbered.insert(seq) {
                // Delivered again (its acknowledgement was lost): taken already.
                let _ = next.ack().await;
                continue;
            }
            if !producers.contains_key(name) {
                let id = producers.len() as u32 + 1;
                producers.insert(name.to_string(), (id, order::Producer::default()));
                counts.connected.fetch_add(1, Ordering::Relaxed);
                if !hand_over(&inbox, Event::Opened(id, format!("nats:{}", next.subject))) {
                    break 'run;
                }
            }
            let (id, producer) = producers.get_mut(name).expect("inserted above");
            let id = *id;
            if let Some(end) = end {
                producer.end(end.trim().parse().ok());
                let _ = next.ack().await;
            } else if ended.contains(&id) {
                let _ = next.ack().await;
            } else {
                let source = format!("nats:{}#{seq}", next.subject);
                let reader = TraceReader::new(BufReader::new(&next.payload[..]), source, read);
                let mut batch = Batch::with_capacity(256);
                batch.items.extend(reader.map(|item| (id, item)));
                let taken = Taken {
                    batch,
                    message: next,
                };
                if let Some(copy) = producer.message(number, taken, &mut ready) {
                    // A copy of one taken or held: the server may forget it.
                    let _ = copy.message.ack().await;
                }
            }
            if !deliver(&inbox, id, &mut ready, producer.ended(), &mut ended).await {
                break 'run;
            }
            if done(&ended) {
                break 'run;
            }
        }
    }
    // Dropping the inbox ends the merger once it has handed over what it holds.
    drop(inbox);
}

/// Publishes records on a run's subject as one or more producers (see the module
/// documentation): lines are gathered into messages of up to 32 KiB, each stored by the
/// server before the next goes.
pub struct Publisher {
    rt: tokio::runtime::Runtime,
    js: jetstream::Context,
    url: String,
    subject: String,
    base: String,
    producers: HashMap<String, Producer>,
}

struct Producer {
    subject: String,
    id: String,
    sent: u64,
    lines: Vec<u8>,
}

impl Publisher {
    /// Connects to `url` and opens the stream of `subject`; producers are named `NAME` (or
    /// a unique name) and, with [`Publisher::line`]'s keys, `NAME-KEY`.
    pub fn connect(url: &str, subject: &str, name: Option<&str>) -> Result<Publisher, String> {
        check_subject(subject)?;
        let base = match name {
            Some(n) => {
                check_subject(n).map_err(|_| {
                    format!("`{n}` cannot name a producer: write letters, digits, `-` and `_`")
                })?;
                if n.contains('.') {
                    return Err(format!("`{n}` cannot name a producer: no dots"));
                }
                n.to_string()
            }
            None => unique("voml-send"),
        };
        let rt = runtime()?;
        let (js, _stream) = rt.block_on(open(url, subject, &base))?;
        Ok(Publisher {
            rt,
            js,
            url: url.to_string(),
            subject: subject.to_string(),
            base,
            producers: HashMap::new(),
        })
    }

    /// Makes producer `key` (`""`: the one producer) ready to publish, unless it is: its name
    /// is refused when it has published on the run already (see [`Publisher::line`]).
    pub fn open(&mut self, key: &str) -> Result<(), String> {
        if !self.producers.contains_key(key) {
            let id = if key.is_empty() {
                self.base.clone()
            } else {
                let clean: String = key
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                format!("{}-{clean}", self.base)
            };
            let subject = format!("{}.{id}", self.subject);
            self.check_new(&id, &subject)?;
            self.producers.insert(
                key.to_string(),
                Producer {
                    subject,
                    id,
                    sent: 0,
                    lines: Vec::with_capacity(MESSAGE_BYTES + 1024),
                },
            );
        }
        Ok(())
    }

    /// Adds a record's line to producer `key`'s next message (`""`: the one producer), which
    /// is made ready first if it is new ([`Publisher::open`]).
    pub fn line(&mut self, key: &str, line: &[u8]) -> Result<(), String> {
        self.open(key)?;
        let p = self.producers.get_mut(key).expect("opened above");
        p.lines.extend_from_slice(line);
        p.lines.push(b'\n');
        if p.lines.len() >= MESSAGE_BYTES {
            self.send(key, false)?;
        }
        Ok(())
    }

    /// Refuses producer `id` when the run's stream already holds messages it published on
    /// `subject` (an earlier `voml send` under the same name): their numbers would be
    /// taken again, and a visual object would take the new messages for copies of the old.
    fn check_new(&self, id: &str, subject: &str) -> Result<(), String> {
        let name = stream_name(&self.subject);
        // (A failure to look is left to publishing, which says what fails.)
        let found = self.rt.block_on(async {
            let stream = self.js.get_stream(&name).await.ok()?;
            let last = stream.get_last_raw_message_by_subject(subject).await;
            last.ok().map(|m| m.sequence)
        });
        match found {
            Some(seq) => Err(format!(
                "a producer named `{id}` has published on {subject} already (the stream {name} \
                 holds its messages, up to sequence {seq}): name this one otherwise (--name), or \
                 use a new subject for a new run"
            )),
            None => Ok(()),
        }
    }

    /// Sends what every producer has gathered (a paced sender does before it waits).
    pub fn flush(&mut self) -> Result<(), String> {
        let keys: Vec<String> = self.producers.keys().cloned().collect();
        for key in keys {
            self.send(&key, false)?;
        }
        Ok(())
    }

    /// Sends what is left and every producer's end; the number of producers.
    pub fn finish(mut self) -> Result<usize, String> {
        let keys: Vec<String> = self.producers.keys().cloned().collect();
        for key in &keys {
            self.send(key, false)?;
            self.send(key, true)?;
        }
        Ok(keys.len())
    }

    /// Publishes producer `key`'s gathered lines (or, with `end`, its end), again and again
    /// until the server has stored it, for up to [`PUBLISH_PATIENCE`].
    fn send(&mut self, key: &str, end: bool) -> Result<(), String> {
        let Some(p) = self.producers.get_mut(key) else {
            return Ok(());
        };
        if p.lines.is_empty() && !end {
            return Ok(());
        }
        p.sent += 1;
        // (The end says how many messages came before it.)
        let before = end.then(|| (p.sent - 1).to_string());
        let msg_id = if end {
            format!("{}-end", p.id)
        } else {
            format!("{}-{}", p.id, p.sent)
        };
        let payload = bytes::Bytes::from(std::mem::take(&mut p.lines));
        let subject = p.subject.clone();
        let (url, run, base) = (&self.url, &self.subject, &self.base);
        let mut js = self.js.clone();
        let sent = self.rt.block_on(async {
            let started = Instant::now();
            let mut failures = 0u32;
            loop {
                let mut headers = async_nats::HeaderMap::new();
                headers.insert("Nats-Msg-Id", msg_id.as_str());
                if let Some(before) = &before {
                    headers.insert(END_HEADER, before.as_str());
                }
                let why = match js.publish_with_headers(subject.clone(), headers, payload.clone()).await {
                    Ok(ack) => match ack.await {
                        Ok(_) => return Ok(()),
                        Err(e) => e.to_string(),
                    },
                    Err(e) => e.to_string(),
                };
                if started.elapsed() > PUBLISH_PATIENCE {
                    return Err(format!(
                        "the NATS server at {url} did not store the records of {subject} for {}s: {why}",
                        PUBLISH_PATIENCE.as_secs()
                    ));
                }
                failures += 1;
                if failures.is_multiple_of(RECONNECT_AFTER) {
                    // A client does not always come back from a server's restart by itself
                    // (its acknowledgements stop arriving): a new connection. The message
                    // keeps its id, so the server stores it once whichever copy arrives.
                    eprintln!(
                        "note: the NATS server at {url} has not stored the records of {subject} for {:.0}s ({why}); connecting again",
                        started.elapsed().as_secs_f64()
                    );
                    if let Ok((fresh, _)) = open(url, run, base).await {
                        js = fresh;
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        self.js = js;
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_and_streams() {
        assert!(check_subject("runs.ring-42").is_ok());
        assert!(check_subject("a_b").is_ok());
        for bad in ["", "a..b", "a.>", "a.*", "a b", ".a", "a."] {
            assert!(check_subject(bad).is_err(), "{bad}");
        }
        assert_eq!(stream_name("runs.ring-42"), "VOML_runs_ring-42");
    }
}
