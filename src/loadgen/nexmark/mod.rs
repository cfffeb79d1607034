//! `sluice loadgen nexmark`: the Nexmark benchmark's data (persons, auctions and bids of an
//! online auction) written as `person.ndjson`, `auction.ndjson` and `bid.ndjson` into the `--out`
//! directory. It owns the command's checks and the file writing; the events come from the
//! generator source's [`NexmarkModel`] and their lines from its [`write_json`], so the files and
//! the in-process tables are one model. It never touches the runtime or any operator.
//!
//! Event numbers `0 .. --events` are made in chunks of [`CHUNK_EVENTS`] by two threads (chunk
//! `j` on thread `j % 2`), each chunk into one buffer per file; the calling thread appends the
//! chunks to the files in chunk order. So each file holds its events in event-number order, and,
//! as `dateTime` never decreases with the event number, no line is behind any line before it
//! (well within the queries' 4 s watermark bound). Same arguments, byte-identical files.
//!
//! Of the shared `loadgen` flags, `--seed`, `--rate` (events per second of event time, Java's
//! `firstEventRate`, default 10 000) and `--start-ms` (the `dateTime` of event 0) apply; the
//! others shape the click model only and are refused when they differ from their defaults.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::thread;
use std::time::Instant;

use crate::connectors::generator::model::defaults;
use crate::loadgen::{LoadgenArgs, LoadgenError, LoadgenReport};

pub use crate::connectors::generator::nexmark::model::{
    Auction, Bid, EventKind, NexmarkConfig, NexmarkEvent, NexmarkModel, Person, FIRST_AUCTION_ID,
    FIRST_CATEGORY_ID, FIRST_PERSON_ID,
};
pub use crate::connectors::generator::nexmark::write_json;

pub const PERSON_FILE: &str = "person.ndjson";
pub const AUCTION_FILE: &str = "auction.ndjson";
pub const BID_FILE: &str = "bid.ndjson";

/// Events per chunk: about 3 MB of NDJSON (lines average ~190 bytes), so each write is large.
pub const CHUNK_EVENTS: u64 = 16 * 1024;
/// Threads formatting chunks; the calling thread only writes.
const GEN_THREADS: usize = 2;

/// One chunk's lines: persons, auctions, bids (the order of the files).
pub type ChunkBufs = [Vec<u8>; 3];
/// One generator thread's channels, seen from the writer: full buffers in, empty ones back.
type Lane = (Receiver<ChunkBufs>, Sender<ChunkBufs>);

/// The model `args` describe; refuses the flags that only shape the click model.
pub fn config_from_args(args: &LoadgenArgs) -> Result<NexmarkConfig, LoadgenError> {
    let given = [
        ("kafka", args.kafka.is_some()),
        ("topic", args.topic.is_some()),
        ("send-rate", args.send_rate != 0),
        ("keys", args.keys.is_some()),
        ("zipf", args.zipf != defaults::ZIPF_EXPONENT),
        (
            "celebrity-share",
            args.celebrity_share != defaults::CELEBRITY_SHARE,
        ),
        ("users", args.users != defaults::USERS),
        ("out-of-orderness-ms", args.out_of_orderness_ms.is_some()),
        (
            "late-fraction",
            args.late_fraction != defaults::LATE_FRACTION,
        ),
        ("late-by-ms", args.late_by_ms != defaults::LATE_BY_MS),
        ("files", args.files != 1),
    ];
    if let Some((arg, _)) = given.into_iter().find(|(_, given)| *given) {
        return Err(LoadgenError::InvalidArg {
            arg,
            reason: "does not apply to `nexmark`, whose ids, skew and timing follow the \
                     Nexmark generator (it writes three files into --out)"
                .to_string(),
        });
    }
    let mut config = NexmarkConfig {
        seed: args.seed,
        base_time_ms: args.start_ms,
        ..NexmarkConfig::default()
    };
    if let Some(rate) = args.rate {
        if rate == 0 {
            return Err(LoadgenError::InvalidArg {
                arg: "rate",
                reason: "must be at least 1 event per second".to_string(),
            });
        }
        config.first_event_rate = rate;
    }
    Ok(config)
}

/// Writes the three files into `--out` (created if needed); see the module doc.
pub fn run(args: &LoadgenArgs) -> Result<LoadgenReport, LoadgenError> {
    let config = config_from_args(args)?;
    let dir = args.out.clone().unwrap_or_default();
    fs::create_dir_all(&dir).map_err(|source| LoadgenError::CreateDir {
        path: dir.clone(),
        source,
    })?;
    let paths = [PERSON_FILE, AUCTION_FILE, BID_FILE].map(|name| dir.join(name));
    let mut files = Vec::with_capacity(paths.len());
    for path in &paths {
        files.push(File::create(path).map_err(|source| LoadgenError::Create {
            path: path.clone(),
            source,
        })?);
    }
    let model = NexmarkModel::new(&config);
    let started = Instant::now();
    let bytes = write_parallel(&model, args.events, &mut files, &paths)?;
    // No fsync: test data need not survive a power cut (as for `loadgen clicks`).
    Ok(LoadgenReport {
        events: args.events,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
        files: paths.to_vec(),
    })
}

/// Appends the lines of events `range` to the buffers of their kinds.
pub fn generate_range(model: &NexmarkModel, range: std::ops::Range<u64>, bufs: &mut ChunkBufs) {
    for n in range {
        let event = model.event(n);
        let file = match &event {
            NexmarkEvent::Person(_) => 0,
            NexmarkEvent::Auction(_) => 1,
            NexmarkEvent::Bid(_) => 2,
        };
        write_json(&event, &mut bufs[file]);
    }
}

/// Makes the chunks on [`GEN_THREADS`] threads and writes them in order; returns the bytes.
fn write_parallel<W: Write>(
    model: &NexmarkModel,
    events: u64,
    files: &mut [W],
    paths: &[PathBuf; 3],
) -> Result<u64, LoadgenError> {
    let chunks = events.div_ceil(CHUNK_EVENTS);
    thread::scope(|scope| {
        let mut lanes: Vec<Lane> = Vec::new();
        for lane in 0..GEN_THREADS {
            // Two full chunks may wait per lane: enough to cover a slow write, not so many
            // that generation runs far ahead of the disk.
            let (full_tx, full_rx) = sync_channel::<ChunkBufs>(2);
            let (empty_tx, empty_rx) = channel::<ChunkBufs>();
            scope.spawn(move || {
                for j in (lane as u64..chunks).step_by(GEN_THREADS) {
                    let mut bufs = empty_rx.try_recv().unwrap_or_default();
                    bufs.iter_mut().for_each(Vec::clear);
                    let start = j * CHUNK_EVENTS;
                    generate_range(model, start..events.min(start + CHUNK_EVENTS), &mut bufs);
                    if full_tx.send(bufs).is_err() {
                        return; // The writer failed and hung up; its error is reported.
                    }
                }
            });
            lanes.push((full_rx, empty_tx));
        }
        // Returning drops `lanes`, which unblocks and stops the generators on an error.
        write_in_order(chunks, &lanes, files, paths)
    })
}

/// Receives chunk `j` from lane `j % lanes` and appends its buffers to the files.
fn write_in_order<W: Write>(
    chunks: u64,
    lanes: &[Lane],
    files: &mut [W],
    paths: &[PathBuf; 3],
) -> Result<u64, LoadgenError> {
    let mut bytes = 0u64;
    for j in 0..chunks {
        let (full, empty) = &lanes[j as usize % lanes.len()];
        let bufs = full
            .recv()
            .map_err(|_| LoadgenError::GeneratorStopped { chunk: j as usize })?;
        for ((buf, file), path) in bufs.iter().zip(files.iter_mut()).zip(paths) {
            file.write_all(buf)
                .map_err(|source| write_error(path, source))?;
            bytes += buf.len() as u64;
        }
        // A generator that already finished has dropped its receiver; the buffers are freed.
        let _ = empty.send(bufs);
    }
    for (file, path) in files.iter_mut().zip(paths) {
        file.flush().map_err(|source| write_error(path, source))?;
    }
    Ok(bytes)
}

fn write_error(path: &Path, source: std::io::Error) -> LoadgenError {
    LoadgenError::Write {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests;
