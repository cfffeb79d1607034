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

/// `GET path`, and how long the whole answer took (the status is `None` if none came in 5 s).
pub fn timed_get(addr: &str, path: &str) -> (Option<u16>, Duration) {
    let start = Instant::now();
    let code = get(addr, path).map(|r| r.0);
    (code, start.elapsed())
}

/// A client that has sent part of a request head (no blank line after it) and then waits.
pub fn half_request(addr: &str) -> TcpStream {
    let mut c = TcpStream::connect(addr).expect("connect");
    c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .expect("send half a request");
    c
}

/// A client that asks for `path` with a receive buffer of a few KiB and never reads: once the
/// server's send buffer is full too, the server's writes cannot progress.
pub fn non_reader(addr: &str, path: &str) -> TcpStream {
    use std::os::fd::FromRawFd;
    let a: std::net::SocketAddrV4 = addr.parse().expect("an IPv4 address");
    // SAFETY: plain socket calls on a descriptor this function owns; the pointers are to locals
    // of the sizes passed with them.
    let mut c = unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let size: libc::c_int = 4096;
        let rc = libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        assert_eq!(rc, 0, "SO_RCVBUF: {}", std::io::Error::last_os_error());
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: a.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(*a.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        let rc = libc::connect(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(rc, 0, "connect: {}", std::io::Error::last_os_error());
        TcpStream::from_raw_fd(fd)
    };
    write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").expect("send the request");
    c
}

/// Whether the server has ended `c` (its FIN or reset has arrived), read from the kernel's TCP
/// state without reading the stream, so a non-reading client stays one.
pub fn peer_closed(c: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: `info` is a plain struct of the size passed; the kernel writes at most `len` bytes.
    let state = unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = libc::getsockopt(
            c.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        );
        assert_eq!(rc, 0, "TCP_INFO: {}", std::io::Error::last_os_error());
        info.tcpi_state
    };
    // Linux's TCP_CLOSE (7: reset) and TCP_CLOSE_WAIT (8: the peer's FIN arrived).
    matches!(state, 7 | 8)
}

/// Waits up to `within` for `peer_closed(c)`.
pub fn closed_within(c: &TcpStream, within: Duration) -> bool {
    let start = Instant::now();
    while !peer_closed(c) {
        if start.elapsed() > within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}
