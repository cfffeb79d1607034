//! The HTTP endpoint (`[api] address`): `GET /metrics` (Prometheus text), `/health` (liveness:
//! 200 while the process serves) and `/ready` (200 once restored and running, 503 before and while
//! draining). One thread, plain HTTP/1.1 with `Connection: close`, a request or two a second: a
//! crate for a server this small would be more code to audit than it saves. It reads only what
//! `metrics::live` holds and never touches shards or state.

use crate::metrics::live::Live;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A bound endpoint, serving until `stop` is set.
pub struct Server {
    listener: TcpListener,
}

impl Server {
    /// Binds `addr` now, so a taken or bad address fails the run before any shard starts.
    pub fn bind(addr: SocketAddr) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Server { listener })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves on its own thread until `stop`.
    pub fn spawn(
        self,
        live: Arc<Live>,
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        std::thread::Builder::new()
            .name("sluice-api".into())
            .spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    match self.listener.accept() {
                        Ok((conn, _)) => {
                            let _ = serve(conn, &live);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
    }
}

/// Answers one request on `conn`.
fn serve(mut conn: TcpStream, live: &Live) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut buf = [0u8; 4096];
    let mut n = 0;
    while n < buf.len() {
        let got = conn.read(&mut buf[n..])?;
        if got == 0 {
            break;
        }
        n += got;
        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf[..n]);
    let mut words = head.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (status, kind, body) = route(method, path, live);
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    conn.flush()
}

fn route(method: &str, path: &str, live: &Live) -> (&'static str, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
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
mod tests {
    use super::*;

    #[test]
    fn serves_metrics_health_and_readiness() {
        let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.local_addr().unwrap().to_string();
        let live = Arc::new(Live::new(1, vec![]));
        let stop = Arc::new(AtomicBool::new(false));
        let h = server.spawn(live.clone(), stop.clone()).unwrap();
        assert_eq!(get(&addr, "/health").unwrap().0, 200);
        assert_eq!(get(&addr, "/ready").unwrap().0, 503, "not yet running");
        live.ready.store(true, Ordering::Release);
        assert_eq!(get(&addr, "/ready").unwrap().0, 200);
        live.draining.store(true, Ordering::Release);
        assert_eq!(get(&addr, "/ready").unwrap().0, 503, "draining");
        let (code, body) = get(&addr, "/metrics").unwrap();
        assert_eq!(code, 200);
        assert!(
            body.contains("# TYPE sluice_events_in_total counter"),
            "{body}"
        );
        assert_eq!(get(&addr, "/nope").unwrap().0, 404);
        stop.store(true, Ordering::Release);
        h.join().unwrap();
    }
}
