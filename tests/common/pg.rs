//! A local PostgreSQL for the postgres sink's tests, through `scripts/postgres-local.sh` (which
//! installs and starts it if needed): `Pg::shared()` is the one server all tests share (started
//! once, left running: `.ci/run` stops it), `Pg::own(port)` a private one a test may stop and
//! start. Queries go through `psql`, so nothing here shares code with the engine.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

pub struct Pg {
    port: u16,
    /// A private server's data directory; the shared one's is the script's default.
    dir: Option<String>,
}

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/postgres-local.sh")
}

impl Pg {
    /// The server on `SLUICE_PG_PORT` (default 55432), started if it is not running.
    pub fn shared() -> &'static Pg {
        static PG: OnceLock<Pg> = OnceLock::new();
        PG.get_or_init(|| {
            let port = std::env::var("SLUICE_PG_PORT")
                .ok()
                .and_then(|p| p.parse().ok())
                .unwrap_or(55432);
            let pg = Pg { port, dir: None };
            pg.start();
            pg
        })
    }

    /// A server of this test's own on `port`, in a fresh data directory.
    pub fn own(port: u16) -> Pg {
        let dir = format!("/tmp/sluice-postgres-test-{port}");
        let pg = Pg {
            port,
            dir: Some(dir.clone()),
        };
        // A server an aborted earlier run left behind still holds the port.
        let _ = pg.script(&["stop"]);
        let _ = std::fs::remove_dir_all(&dir);
        pg.start();
        pg
    }

    fn script(&self, args: &[&str]) -> std::process::Output {
        let mut c = Command::new("bash");
        c.arg(script())
            .args(args)
            .env("SLUICE_PG_PORT", self.port.to_string());
        if let Some(d) = &self.dir {
            c.env("SLUICE_PG_DIR", d);
        }
        c.output().expect("run scripts/postgres-local.sh")
    }

    pub fn start(&self) {
        let out = self.script(&["start"]);
        assert!(
            out.status.success(),
            "postgres-local.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn stop(&self) {
        let out = self.script(&["stop"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn url(&self) -> String {
        format!("postgresql://sluice@127.0.0.1:{}/sluice", self.port)
    }

    /// Runs `sql` (statements separated by `;`), failing the test on an error; returns the rows
    /// as tab-separated lines.
    pub fn sql(&self, sql: &str) -> Vec<String> {
        let out = self.script(&[
            "psql",
            "-X",
            "-q",
            "-t",
            "-A",
            "-F",
            "\t",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ]);
        assert!(
            out.status.success(),
            "psql failed on {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }
}
