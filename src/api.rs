//! The HTTP endpoint (`[api]`): `GET /metrics` (Prometheus text), `/health` (liveness: 200 while
//! the process serves) and `/ready` (200 once restored and running, 503 before and while
//! draining). Nothing else, and no admin action: savepoints and stops are signals and the CLI.
//!
//! One acceptor thread hands each connection to a thread of its own, so no client waits for
//! another. Each connection is bounded: its request head must arrive within `read_timeout` of the
//! accept and its response must leave within `write_timeout`, deadlines for the whole head and the
//! whole response (a client trickling bytes gains nothing); a response that misses its deadline is
//! reset, not closed, so the kernel does not keep the unsent rest. At most `max_connections` are
//! open: one more shuts the oldest (a healthy request takes milliseconds, so the oldest is the one
//! most likely stalled), which keeps a probe answering within milliseconds whatever other clients
//! do, short of a flood of new connections that shut it in turn. Plain HTTP/1.1 with `Connection: close`, a request or two a second: a crate for a server
//! this small would be more code to audit than it saves. It reads only what `metrics::live` holds
//! (shards publish there with `try_lock`, skipping a batch a scrape holds) and never touches
//! shards or state.

use crate::metrics::live::Live;
use crate::plan::ApiPlan;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 8 << 10;

/// A connection thread needs little stack: it formats, and `/metrics` renders onto the heap.
const CONN_STACK: usize = 256 << 10;

/// How the endpoint bounds its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub read_timeout: Duration,
    pub write_timeout: Duration,
}

impl From<&ApiPlan> for Limits {
    fn from(p: &ApiPlan) -> Limits {
        Limits {
            max_connections: p.max_connections.max(1),
            read_timeout: p.read_timeout,
            write_timeout: p.write_timeout,
        }
    }
}

/// A bound endpoint, serving until `stop` is set.
pub struct Server {
    listener: TcpListener,
    limits: Limits,
}

impl Server {
    /// Binds `addr` now, so a taken or bad address fails the run before any shard starts.
    pub fn bind(addr: SocketAddr, limits: Limits) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Server { listener, limits })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts on its own thread until `stop`, then shuts every connection still open.
    pub fn spawn(
        self,
        live: Arc<Live>,
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        std::thread::Builder::new()
            .name("sluice-api".into())
            .spawn(move || {
                let open = Arc::new(Open::default());
                while !stop.load(Ordering::Acquire) {
                    match self.listener.accept() {
                        Ok((conn, _)) => admit(conn, &live, &open, self.limits),
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
                open.shut_all();
            })
    }
}

/// The open connections, oldest first, each with a handle to shut it by.
#[derive(Default)]
struct Open {
    conns: Mutex<(u64, Vec<(u64, TcpStream)>)>,
}

impl Open {
    /// Registers `handle` under a new id, first shutting the oldest while `max` are open.
    fn enter(&self, handle: TcpStream, max: usize) -> u64 {
        let mut g = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        let (next, conns) = &mut *g;
        while conns.len() >= max {
            let (_, oldest) = conns.remove(0);
            abort(&oldest);
        }
        *next += 1;
        conns.push((*next, handle));
        *next
    }

    /// Forgets `id` (already gone if it was shut to make way).
    fn leave(&self, id: u64) {
        let mut g = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        g.1.retain(|(i, _)| *i != id);
    }

    fn shut_all(&self) {
        let mut g = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        for (_, c) in g.1.drain(..) {
            abort(&c);
        }
    }
}

/// Serves `conn` on a thread of its own, counted in `open` until it ends.
fn admit(conn: TcpStream, live: &Arc<Live>, open: &Arc<Open>, limits: Limits) {
    // Without a handle it could not be shut; dropping it closes it.
    let Ok(handle) = conn.try_clone() else {
        return;
    };
    let id = open.enter(handle, limits.max_connections);
    let (live, open_c) = (live.clone(), open.clone());
    let spawned = std::thread::Builder::new()
        .name("sluice-api-conn".into())
        .stack_size(CONN_STACK)
        .spawn(move || {
            let _ = serve(&conn, &live, limits);
            // Forgotten before the last descriptor closes: a client that has seen the end of its
            // response finds its slot free.
            open_c.leave(id);
            drop(conn);
        });
    if spawned.is_err() {
        open.leave(id);
    }
}

/// Ends `conn` with a reset, dropping whatever it has not sent, and wakes its thread.
fn abort(conn: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `linger` is a plain struct of the size passed; `conn` owns a valid descriptor.
    unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(conn),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    let _ = conn.shutdown(Shutdown::Both);
}

/// What came of reading a request head.
enum Head {
    /// Up to and including the blank line.
    Complete(String),
    /// The client closed first.
    Closed,
    /// The read deadline passed first.
    Late,
    /// More than [`MAX_HEAD`] bytes without a blank line.
    TooLarge,
}

/// Answers one request on `conn`.
fn serve(conn: &TcpStream, live: &Live, limits: Limits) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    let head = read_head(conn, Instant::now() + limits.read_timeout)?;
    let unread = matches!(head, Head::Late | Head::TooLarge);
    let (status, kind, body) = match head {
        Head::Closed => return Ok(()),
        Head::Late => (
            "408 Request Timeout",
            TEXT,
            "request head too slow\n".into(),
        ),
        Head::TooLarge => (
            "431 Request Header Fields Too Large",
            TEXT,
            "request head too long\n".into(),
        ),
        Head::Complete(head) => {
            let mut words = head.split_whitespace();
            let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            route(method, path, live)
        }
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    out.push_str(&body);
    let sent = write_by(conn, out.as_bytes(), Instant::now() + limits.write_timeout);
    if sent.is_err() {
        abort(conn);
    } else if unread {
        discard_input(conn);
    }
    sent
}

/// After an answer to a request not read in full: closing with input unread would reset the
/// connection, and the client could lose the answer. Ends the output and reads what the client
/// still sends for a moment.
fn discard_input(mut conn: &TcpStream) {
    const LINGER: Duration = Duration::from_millis(250);
    let _ = conn.shutdown(Shutdown::Write);
    let deadline = Instant::now() + LINGER;
    let mut buf = [0u8; 4096];
    let mut left: usize = 64 << 10;
    while left > 0 {
        let wait = deadline.saturating_duration_since(Instant::now());
        if wait.is_zero() || conn.set_read_timeout(Some(wait)).is_err() {
            return;
        }
        match conn.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => left = left.saturating_sub(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Reads a request head, giving up at `deadline`.
fn read_head(mut conn: &TcpStream, deadline: Instant) -> std::io::Result<Head> {
    let mut buf = vec![0u8; MAX_HEAD];
    let mut n = 0;
    loop {
        if let Some(end) = buf[..n].windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Head::Complete(
                String::from_utf8_lossy(&buf[..end + 4]).into_owned(),
            ));
        }
        if n == buf.len() {
            return Ok(Head::TooLarge);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Head::Late);
        }
        conn.set_read_timeout(Some(left))?;
        match conn.read(&mut buf[n..]) {
            Ok(0) => return Ok(Head::Closed),
            Ok(got) => n += got,
            Err(e) if is_retry(&e) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Writes all of `data`, giving up at `deadline`.
fn write_by(mut conn: &TcpStream, mut data: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !data.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        conn.set_write_timeout(Some(left))?;
        match conn.write(data) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(k) => data = &data[k..],
            Err(e) if is_retry(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A timed-out or interrupted socket call: try again until the deadline.
fn is_retry(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

const TEXT: &str = "text/plain; charset=utf-8";

fn route(method: &str, path: &str, live: &Live) -> (&'static str, &'static str, String) {
    if method != "GET" {
        return ("405 Method Not Allowed", TEXT, "only GET\n".into());
    }
    match path.split('?').next().unwrap_or("") {
        "/metrics" => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            live.render(),
        ),
        "/health" => ("200 OK", TEXT, "ok\n".into()),
        "/ready" if live.is_ready() => ("200 OK", TEXT, "ready\n".into()),
        "/ready" => ("503 Service Unavailable", TEXT, "not ready\n".into()),
        _ => (
            "404 Not Found",
            TEXT,
            "try /metrics, /health or /ready\n".into(),
        ),
    }
}

/// `GET path` from `addr`: (status code, body). For `sluice top` and tests.
pub fn get(addr: &str, path: &str) -> std::io::Result<(u16, String)> {
    let mut conn = TcpStream::connect(addr)?;
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    conn.read_to_string(&mut text)?;
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    Ok((status, body))
}

#[cfg(test)]
mod tests;
