//! The endpoint on a loopback port with a hand-made `Live`: routes (and the absence of any admin
//! route), and each bound on clients: read and write deadlines, the connection limit, and stop.

use super::*;

fn start(
    limits: Limits,
) -> (
    String,
    Arc<Live>,
    Arc<AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), limits).unwrap();
    let addr = server.local_addr().unwrap().to_string();
    let live = Arc::new(Live::new(1, vec![]));
    let stop = Arc::new(AtomicBool::new(false));
    let h = server.spawn(live.clone(), stop.clone()).unwrap();
    (addr, live, stop, h)
}

const LIMITS: Limits = Limits {
    max_connections: 16,
    read_timeout: Duration::from_secs(60),
    write_timeout: Duration::from_secs(60),
};

/// A client that sent half a request head.
fn half(addr: &str) -> TcpStream {
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(b"GET /health HTTP/1.1\r\n").unwrap();
    c
}

/// What the server sends `c` until it closes (within 5 s), `None` if it does not.
fn until_closed(c: &mut TcpStream) -> Option<String> {
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    match c.read_to_end(&mut got) {
        Ok(_) => Some(String::from_utf8_lossy(&got).into_owned()),
        Err(e) if e.kind() == ErrorKind::ConnectionReset => Some(String::new()),
        Err(_) => None,
    }
}

/// Whether `c` is still open `after` from now (the server sent nothing and did not close).
fn open_after(c: &mut TcpStream, after: Duration) -> bool {
    c.set_read_timeout(Some(after)).unwrap();
    matches!(c.read(&mut [0u8; 64]), Err(e) if is_retry(&e))
}

#[test]
fn serves_metrics_health_and_readiness() {
    let (addr, live, stop, h) = start(LIMITS);
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

#[test]
fn api_serves_no_admin_action() {
    let live = Live::new(1, vec![]);
    for path in [
        "/savepoint",
        "/stop",
        "/checkpoint",
        "/admin",
        "/savepoint?token=x",
    ] {
        assert_eq!(route("GET", path, &live).0, "404 Not Found", "{path}");
    }
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        for path in ["/savepoint", "/metrics", "/health"] {
            assert_eq!(
                route(method, path, &live).0,
                "405 Method Not Allowed",
                "{method} {path}"
            );
        }
    }
}

#[test]
fn api_answers_while_other_clients_hold_half_sent_requests() {
    let (addr, _live, stop, h) = start(LIMITS);
    let mut held: Vec<_> = (0..8).map(|_| half(&addr)).collect();
    for _ in 0..3 {
        let t = Instant::now();
        assert_eq!(get(&addr, "/health").unwrap().0, 200);
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    }
    assert!(open_after(&mut held[0], Duration::from_millis(50)));
    // Stop shuts every connection still open.
    stop.store(true, Ordering::Release);
    h.join().unwrap();
    for c in &mut held {
        assert!(until_closed(c).is_some(), "open after stop");
    }
}

#[test]
fn api_read_deadline_covers_the_whole_head() {
    let limits = Limits {
        read_timeout: Duration::from_millis(400),
        ..LIMITS
    };
    let (addr, _live, stop, h) = start(limits);
    let mut c = half(&addr);
    let t = Instant::now();
    // A byte every 100 ms would reset a per-read timeout for ever.
    while t.elapsed() < Duration::from_millis(1500) && c.write_all(b"X").is_ok() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let answer = until_closed(&mut c).unwrap();
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    let mut long = TcpStream::connect(&addr).unwrap();
    long.write_all(format!("GET /{} HTTP/1.1\r\n", "x".repeat(MAX_HEAD)).as_bytes())
        .unwrap();
    let answer = until_closed(&mut long).unwrap();
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    stop.store(true, Ordering::Release);
    h.join().unwrap();
}

#[test]
fn api_past_the_limit_the_oldest_connection_is_shut() {
    let limits = Limits {
        max_connections: 2,
        ..LIMITS
    };
    let (addr, _live, stop, h) = start(limits);
    let (mut oldest, mut newer) = (half(&addr), half(&addr));
    assert!(open_after(&mut oldest, Duration::from_millis(100)));
    assert_eq!(get(&addr, "/health").unwrap().0, 200);
    assert!(until_closed(&mut oldest).is_some(), "the oldest stays open");
    for _ in 0..3 {
        assert_eq!(get(&addr, "/health").unwrap().0, 200);
    }
    assert!(
        open_after(&mut newer, Duration::from_millis(100)),
        "shut below the limit"
    );
    stop.store(true, Ordering::Release);
    h.join().unwrap();
}

#[test]
fn api_write_deadline_resets_a_client_that_does_not_read() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    // More than any socket buffers hold; the client reads none of it.
    let body = vec![b'x'; 64 << 20];
    let t = Instant::now();
    let sent = write_by(&server, &body, Instant::now() + Duration::from_millis(300));
    assert_eq!(sent.unwrap_err().kind(), ErrorKind::TimedOut);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    abort(&server);
    drop(server);
    // The reset arrives behind whatever was buffered: reading stops well short of the body.
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    let ended = loop {
        match client.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => got += n,
            Err(e) => break e.kind() == ErrorKind::ConnectionReset,
        }
    };
    assert!(ended && got < body.len(), "ended {ended} after {got} bytes");
}
