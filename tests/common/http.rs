//! A tiny HTTP client for the `[api]` endpoint in tests: GET, counter sums, a free loopback
//! address, and waiting for `/health`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut t = String::new();
    c.read_to_string(&mut t).ok()?;
    let code = t.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, t.split_once("\r\n\r\n")?.1.to_string()))
}

/// Sum over shards of a counter.
pub fn sum(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// A loopback address nothing listens on now.
pub fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("127.0.0.1:{}", l.local_addr().unwrap().port())
}

/// Waits (up to 30 s) until the job's endpoint answers `/health`.
pub fn wait_healthy(addr: &str) {
    let start = Instant::now();
    while get(addr, "/health").map(|r| r.0) != Some(200) {
        assert!(start.elapsed() < Duration::from_secs(30), "no /health");
        std::thread::sleep(Duration::from_millis(20));
    }
}
