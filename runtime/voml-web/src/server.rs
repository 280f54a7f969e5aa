//! The HTTP side: one listener, a thread per connection. `GET /` is the page (its script
//! and style inside it), `GET /ws` the WebSocket that streams the commands. Anything else is
//! refused with a status line, never a panic.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};
use voml_llvo::BackendEvent;

use crate::hub::{answer_line, Hub};

/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;
/// Connections served at once; more are refused.
const MAX_CONNECTIONS: usize = 64;
/// How long a request head, or a write to a page, may take.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a connection looks for what the page sent while the run draws nothing; what the
/// run draws then is sent as soon as it comes.
const TICK: Duration = Duration::from_millis(5);
/// While the run draws without pause, how long a connection waits for what the page sends
/// before it sends the run's next batches (together, in one write).
const BUSY_TICK: Duration = Duration::from_millis(1);
/// The longest key name a page may send.
const MAX_KEY: usize = 32;
/// The longest command line a page may send (an edit's value included).
const MAX_COMMAND: usize = 80 * 1024;
/// The longest message a page may send; a longer one ends its connection.
const MAX_MESSAGE: usize = 256 * 1024;

/// The page: its style and script are put in at build time, nothing is fetched elsewhere.
fn page() -> String {
    include_str!("page/index.html")
        .replace("/*STYLE*/", include_str!("page/page.css"))
        .replace("//SCRIPT", SCRIPT)
        .replace("<!--HEAD-->", "")
        .replace("<!--RECORDING-->", "")
}

/// The page replaying a recording, for a file opened from disk, around its recording: what
/// goes before the recording's JSON (in which `<` is escaped), and what after. Its policy,
/// which a server would send as a header, is in the page; the JSON is written between the
/// two, so that a big recording is never copied whole, nor taken for a place holder.
pub(crate) fn recorded_page_around() -> (String, String) {
    let page = include_str!("page/index.html")
        .replace("/*STYLE*/", include_str!("page/page.css"))
        .replace("//SCRIPT", SCRIPT)
        .replace(
            "<!--HEAD-->",
            &format!(r#"<meta http-equiv="Content-Security-Policy" content="{CSP}">"#),
        );
    let (before, after) = page
        .split_once("<!--RECORDING-->")
        .unwrap_or((page.as_str(), ""));
    (
        format!(r#"{before}<script type="application/json" id="recording">"#),
        format!("</script>{after}"),
    )
}

/// The page's script: its sound, then the rest.
const SCRIPT: &str = concat!(include_str!("page/sound.js"), include_str!("page/page.js"));

/// What the page may load and run: its own inline script and style, images it makes, and
/// (served) its WebSocket.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; connect-src 'self'";

/// Whether serving on `addr` needs an access token: anything but loopback does.
pub fn needs_token(addr: &SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

/// A fresh access token: 128 random bits in hex.
pub fn new_token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    token: Option<String>,
}

impl Server {
    /// Binds `addr` and serves `hub` on its own threads. With a `token`, every request
    /// must carry it (`?token=...`).
    pub fn start(
        addr: SocketAddr,
        token: Option<String>,
        hub: Arc<Mutex<Hub>>,
    ) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            hub,
            token: token.clone(),
            page: page(),
            connections: AtomicUsize::new(0),
        });
        std::thread::Builder::new()
            .name("voml-web".into())
            .spawn(move || accept(listener, shared))?;
        Ok(Server { addr, token })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address (with the token, when there is one).
    pub fn url(&self) -> String {
        let host = match self.addr {
            SocketAddr::V4(a) if a.ip().is_unspecified() => format!("HOST:{}", a.port()),
            SocketAddr::V6(a) if a.ip().is_unspecified() => format!("HOST:{}", a.port()),
            a => a.to_string(),
        };
        match &self.token {
            Some(t) => format!("http://{host}/?token={t}"),
            None => format!("http://{host}/"),
        }
    }
}

struct Shared {
    hub: Arc<Mutex<Hub>>,
    token: Option<String>,
    page: String,
    connections: AtomicUsize,
}

fn accept(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if shared.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.connections.fetch_sub(1, Ordering::SeqCst);
            let _ = respond(&stream, 503, "text/plain", b"too many connections\n");
            continue;
        }
        let theirs = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("voml-web-page".into())
            .spawn(move || {
                let _ = serve(stream, &theirs);
                theirs.connections.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            // No thread: the connection was dropped with the closure; count it out.
            shared.connections.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A request's head, read and parsed.
struct Request {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn param(&self, name: &str) -> Option<&str> {
        self.query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

fn read_head(stream: &mut TcpStream) -> Result<Request, (u16, &'static str)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
        if buf.len() > MAX_HEAD {
            return Err((431, "request head too large"));
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Err((400, "incomplete request")),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => return Err((408, "request timed out")),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(&buf) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err((400, "malformed request")),
    }
    let target = req.path.unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(Request {
        method: req.method.unwrap_or("").to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers: req
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_string(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect(),
    })
}

fn respond(mut stream: &TcpStream, code: u16, kind: &str, body: &[u8]) -> io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nContent-Security-Policy: {CSP}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn serve(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let request = match read_head(&mut stream) {
        Ok(r) => r,
        Err((code, why)) => {
            return respond(&stream, code, "text/plain", format!("{why}\n").as_bytes())
        }
    };
    if request.method != "GET" {
        return respond(&stream, 405, "text/plain", b"only GET is served\n");
    }
    if let Some(token) = &shared.token {
        if !request.param("token").is_some_and(|t| same(t, token)) {
            return respond(
                &stream,
                403,
                "text/plain",
                b"forbidden: open the address with the access token the server printed\n",
            );
        }
    }
    match request.path.as_str() {
        "/" | "/index.html" => respond(
            &stream,
            200,
            "text/html; charset=utf-8",
            shared.page.as_bytes(),
        ),
        "/ws" => websocket(stream, &request, shared),
        _ => respond(&stream, 404, "text/plain", b"not found\n"),
    }
}

fn websocket(mut stream: TcpStream, request: &Request, shared: &Shared) -> io::Result<()> {
    let upgrade = request
        .header("Upgrade")
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    let Some(key) = request.header("Sec-WebSocket-Key").filter(|_| upgrade) else {
        return respond(
            &stream,
            400,
            "text/plain",
            b"a WebSocket upgrade is expected here\n",
        );
    };
    // A page from another site must not reach a server on this machine: when the browser
    // says where the page came from, it must be this server.
    if let (Some(origin), Some(host)) = (request.header("Origin"), request.header("Host")) {
        let ours = ["http://", "https://"]
            .iter()
            .any(|scheme| origin.eq_ignore_ascii_case(&format!("{scheme}{host}")));
        if !ours {
            return respond(
                &stream,
                403,
                "text/plain",
                b"forbidden: a page from another origin\n",
            );
        }
    }
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    write!(
        stream,
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
    )?;
    stream.flush()?;
    stream.set_read_timeout(Some(BUSY_TICK))?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let mut ws = WebSocket::from_raw_socket(stream, Role::Server, Some(config));
    let (page, (first, rx)) = shared
        .hub
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .join_page();
    for batch in first {
        ws.send(Message::text(batch.to_string()))
            .map_err(io::Error::other)?;
    }
    // Whether the run drew since the connection last looked: then it waits on the page's
    // socket (a short while), not on the run, so that a stream of batches goes out in few
    // writes and the run does not wake the connection for each.
    let mut busy = false;
    // What has come from the run, without waiting (nothing is a timeout).
    let came = || {
        rx.try_recv().map_err(|e| match e {
            TryRecvError::Empty => RecvTimeoutError::Timeout,
            TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
        })
    };
    loop {
        // What the run draws: what came, or what comes within a tick if it was idle ...
        let mut next = if busy { came() } else { rx.recv_timeout(TICK) };
        let mut sent = false;
        loop {
            match next {
                Ok(batch) => {
                    ws.write(Message::text(batch.to_string()))
                        .map_err(io::Error::other)?;
                    sent = true;
                }
                Err(RecvTimeoutError::Timeout) => break,
                // Dropped by the hub (too slow): the page may join again.
                Err(RecvTimeoutError::Disconnected) => {
                    let _ = ws.close(None);
                    let _ = ws.flush();
                    return Ok(());
                }
            }
            next = came();
        }
        if sent {
            ws.flush().map_err(io::Error::other)?;
        }
        busy = sent;
        // ... and what the page sent: waiting a short while when busy, else not at all (its
        // messages can wait a tick).
        loop {
            if !busy {
                ws.get_mut().set_nonblocking(true)?;
            }
            let read = ws.read();
            if !busy {
                ws.get_mut().set_nonblocking(false)?;
            }
            match read {
                Ok(Message::Text(text)) => {
                    // What cannot be passed on is answered here, at once.
                    if let Err(answer) = page_message(text.as_str(), page, shared) {
                        ws.send(Message::text(answer)).map_err(io::Error::other)?;
                    }
                }
                Ok(Message::Close(_)) => return Ok(()),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    break
                }
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    return Ok(())
                }
                Err(e) => return Err(io::Error::other(e)),
            }
        }
    }
}

/// What an `input` message may be, said to a page that sends something else.
const INPUT_SHAPE: &str = "an input is what a user does in a view: {\"event\": \"zoom\", \"view\": V, \"factor\": F, \"x\": X, \"y\": Y} (F from 1/64 to 64), {\"event\": \"pan\", \"view\": V, \"dx\": DX, \"dy\": DY} or {\"event\": \"click\", \"view\": V, \"x\": X, \"y\": Y, \"button\": B}, with finite numbers";

/// Whether `event` is one a page may send of a view (a zoom, a drag or a click, with finite
/// numbers in bounds), as a window's pointer makes them; the rest (quit, resize, closing, the
/// driver's commands) are not a page's to send this way.
fn view_input(event: &BackendEvent) -> bool {
    const FAR: f64 = 1e6;
    let near = |v: f64| v.is_finite() && v.abs() <= FAR;
    match *event {
        BackendEvent::Zoom { factor, x, y, .. } => {
            factor.is_finite() && (1.0 / 64.0..=64.0).contains(&factor) && near(x) && near(y)
        }
        BackendEvent::Pan { dx, dy, .. } => near(dx) && near(dy),
        BackendEvent::Click { x, y, .. } => near(x) && near(y),
        _ => false,
    }
}

/// A message from page number `page`: a key (`{"key": " "}`: the same replay commands as a
/// window's keys; others are the visual object's), what the user did in a view (`{"input":
/// {"event": "zoom", ...}}`: a zoom, a drag or a click, as a window's pointer makes them, see
/// [`BackendEvent`]), or a command line for the driver
/// (`{"command": "seek 2.5", "id": 7}`: a replay command or an edit, `set NAME VALUE`), whose
/// answer comes back with its `id`. A message that is neither is answered with why (`Err`:
/// the answer), and nothing else happens.
fn page_message(text: &str, page: u64, shared: &Shared) -> Result<(), String> {
    let refuse = |id: u64, why: &str| Err(answer_line(id, Err(why)));
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return refuse(
            0,
            "a message is a JSON object: {\"key\": K}, {\"input\": EVENT} or {\"command\": LINE, \"id\": N}",
        );
    };
    let id = value.get("id").and_then(|i| i.as_u64()).unwrap_or(0);
    if let Some(key) = value.get("key") {
        let Some(key) = key.as_str().filter(|k| !k.is_empty() && k.len() <= MAX_KEY) else {
            return refuse(id, "a key is a name of 1 to 32 bytes");
        };
        shared
            .hub
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_event(BackendEvent::Key {
                view: None,
                key: key.to_string(),
            });
        return Ok(());
    }
    if let Some(input) = value.get("input") {
        let event = match serde_json::from_value::<BackendEvent>(input.clone()) {
            Ok(event) if view_input(&event) => event,
            _ => return refuse(id, INPUT_SHAPE),
        };
        shared
            .hub
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_event(event);
        return Ok(());
    }
    let Some(command) = value.get("command") else {
        return refuse(id, "a message has a `key`, an `input` or a `command`");
    };
    let Some(line) = command.as_str() else {
        return refuse(id, "a command is a string");
    };
    if line.len() > MAX_COMMAND {
        return refuse(id, "the command is too long");
    }
    if line.contains(['\n', '\r']) {
        return refuse(id, "a command is one line");
    }
    let pushed = shared
        .hub
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push_command(page, id, line.to_string());
    match pushed {
        Ok(()) => Ok(()),
        Err(()) => refuse(id, "too many commands are waiting; try again"),
    }
}
