//! `sluice loadgen clicks`: writes the synthetic click stream to NDJSON files. (`sluice loadgen
//! flow`, the three inputs of the ad-spend dataflow, lives in [`flow`], and `sluice
//! loadgen nexmark`, the Nexmark benchmark's data, in [`nexmark`].)
//!
//! It owns the command's arguments and the file writing; the events themselves come from
//! [`crate::connectors::generator::model`], so line `i` of the output (across all files, in order) is
//! exactly `write_ndjson(model.click(i))` and a job on the file sees what the `generator` source
//! would produce from the same settings. Defaults equal the generator's.
//!
//! Two threads format fixed-size chunks of indices (chunk `j` on thread `j % 2`) into large
//! buffers; the calling thread writes the chunks in index order and hands buffers back for reuse.
//! With `--files N` the index range is split into N consecutive, near-equal parts written to
//! `<stem>.0.<ext>` .. `<stem>.{N-1}.<ext>`. It never touches the runtime or any operator.

pub mod flow;
pub mod nexmark;
mod topic;

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::thread;
use std::time::Instant;

use crate::connectors::generator::model::{defaults, write_ndjson, ClickModel};
use crate::connectors::generator::GeneratorPlan;

/// Threads formatting events; the calling thread only writes.
const GEN_THREADS: usize = 2;
/// Events per chunk: ~4.5 MB of NDJSON, large enough that each write is one big syscall.
const CHUNK_EVENTS: u64 = 64 * 1024;
/// Bytes reserved per event in a fresh buffer (lines are ~70 bytes; growth is still allowed).
const BYTES_PER_EVENT_HINT: usize = 80;

/// One generator thread's channels, seen from the writer: full buffers in, empty buffers back.
type Lane = (Receiver<Vec<u8>>, Sender<Vec<u8>>);

/// What `loadgen` can generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LoadgenKind {
    /// Ad clicks: `{"ad_id":"ad-1","user_id":"u-2","ts":1700000000000,"bid":250}`.
    Clicks,
    /// Impressions, clicks (with duplicates) and ad prices for the ad-spend dataflow, as three
    /// files in the `--out` directory (see `flow`).
    Flow,
    /// The Nexmark benchmark's persons, auctions and bids, as three files in the `--out`
    /// directory (see `nexmark`).
    Nexmark,
}

/// Arguments of `sluice loadgen`.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct LoadgenArgs {
    /// What to generate.
    #[arg(value_enum)]
    pub kind: LoadgenKind,
    /// Number of events to write (over all files); for `flow`, the number of impressions.
    #[arg(long)]
    pub events: u64,
    /// Output file (a directory for `flow` and `nexmark`); parent directories are created. Not with `--kafka`.
    #[arg(long, required_unless_present = "kafka", conflicts_with = "kafka")]
    pub out: Option<PathBuf>,
    /// Produce the events into Kafka (bootstrap servers) instead of writing files; needs --topic.
    #[arg(long, requires = "topic")]
    pub kafka: Option<String>,
    /// The Kafka topic to produce into (it must exist).
    #[arg(long)]
    pub topic: Option<String>,
    /// With --kafka: records sent per second of wall clock, at most (0: as fast as the broker
    /// takes them). `--rate` is the events' spacing in event time, as for files.
    #[arg(long, default_value_t = 0)]
    pub send_rate: u64,
    #[arg(long, default_value_t = defaults::SEED)]
    pub seed: u64,
    /// Distinct ad ids (ad-0 .. ad-{keys-1}) [default: 100000; flow: 1000].
    #[arg(long)]
    pub keys: Option<u64>,
    /// Zipf exponent of the ad ids; 0 is uniform.
    #[arg(long, default_value_t = defaults::ZIPF_EXPONENT)]
    pub zipf: f64,
    /// Share of events on the celebrity key ad-0 (0..=1).
    #[arg(long, default_value_t = defaults::CELEBRITY_SHARE)]
    pub celebrity_share: f64,
    /// Distinct user ids, drawn uniformly.
    #[arg(long, default_value_t = defaults::USERS)]
    pub users: u64,
    /// Events per second of event time [default: 100000; flow and nexmark: 10000].
    #[arg(long)]
    pub rate: Option<u64>,
    /// Event time of the first event, epoch ms.
    #[arg(long, default_value_t = defaults::START_MS, allow_negative_numbers = true)]
    pub start_ms: i64,
    /// Largest jitter back from an event's slot time, ms [default: 2000; flow: 4000].
    #[arg(long)]
    pub out_of_orderness_ms: Option<i64>,
    /// Share of events (for `flow`: of clicks) made late on purpose (0..=1).
    #[arg(long, default_value_t = defaults::LATE_FRACTION)]
    pub late_fraction: f64,
    /// How far behind its slot a late event is, ms.
    #[arg(long, default_value_t = defaults::LATE_BY_MS)]
    pub late_by_ms: i64,
    /// Split the events over this many consecutive files `<stem>.<k>.<ext>`; 1 writes `--out` itself.
    #[arg(long, default_value_t = 1)]
    pub files: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    #[error("invalid loadgen argument --{arg}: {reason}")]
    InvalidArg { arg: &'static str, reason: String },
    #[error("creating directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("creating output file {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing output file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("a loadgen generator thread stopped before its chunk {chunk} was made")]
    GeneratorStopped { chunk: usize },
    #[error("kafka {brokers} topic `{topic}`: {reason}")]
    Kafka {
        brokers: String,
        topic: String,
        reason: String,
    },
}

/// What a run wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadgenReport {
    pub events: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub files: Vec<PathBuf>,
}

impl std::fmt::Display for LoadgenReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.seconds.max(1e-9);
        write!(
            f,
            "Loadgen wrote events={} bytes={} files={} in seconds={:.3} ({:.1} MB/s, {:.2} M events/s).",
            self.events,
            self.bytes,
            self.files.len(),
            self.seconds,
            self.bytes as f64 / secs / 1e6,
            self.events as f64 / secs / 1e6
        )
    }
}

impl LoadgenArgs {
    /// The generator model these arguments describe, with `count = Some(events)`.
    pub fn plan(&self) -> Result<GeneratorPlan, LoadgenError> {
        let bad = |arg, reason: &str| {
            Err(LoadgenError::InvalidArg {
                arg,
                reason: reason.to_string(),
            })
        };
        let unit = |p: f64| (0.0..=1.0).contains(&p);
        let (keys, rate, out_of_orderness_ms) = self.shape();
        if keys == 0 {
            return bad("keys", "must be at least 1");
        }
        if self.users == 0 {
            return bad("users", "must be at least 1");
        }
        if rate == 0 {
            return bad("rate", "must be at least 1 event per second");
        }
        if !(self.zipf.is_finite() && self.zipf >= 0.0) {
            return bad("zipf", "must be a finite exponent >= 0");
        }
        if !unit(self.celebrity_share) {
            return bad("celebrity-share", "must be between 0 and 1");
        }
        if !unit(self.late_fraction) {
            return bad("late-fraction", "must be between 0 and 1");
        }
        if out_of_orderness_ms < 0 {
            return bad("out-of-orderness-ms", "must not be negative");
        }
        if self.late_by_ms < 0 {
            return bad("late-by-ms", "must not be negative");
        }
        if self.files == 0 {
            return bad("files", "must be at least 1");
        }
        Ok(GeneratorPlan {
            seed: self.seed,
            keys,
            zipf_exponent: self.zipf,
            celebrity_share: self.celebrity_share,
            users: self.users,
            events_per_second: rate,
            start_ms: self.start_ms,
            out_of_orderness_ms,
            late_fraction: self.late_fraction,
            late_by_ms: self.late_by_ms,
            count: Some(self.events),
        })
    }

    /// `--keys`, `--rate` and `--out-of-orderness-ms` as given, else the kind's defaults.
    fn shape(&self) -> (u64, u64, i64) {
        use flow::defaults as flow;
        let (keys, rate, ooo) = match self.kind {
            // `nexmark` reads none of these (see `nexmark::config_from_args`).
            LoadgenKind::Clicks | LoadgenKind::Nexmark => (
                defaults::KEYS,
                defaults::EVENTS_PER_SECOND,
                defaults::OUT_OF_ORDERNESS_MS,
            ),
            LoadgenKind::Flow => (
                flow::KEYS,
                flow::EVENTS_PER_SECOND,
                flow::OUT_OF_ORDERNESS_MS,
            ),
        };
        let given = (self.keys, self.rate, self.out_of_orderness_ms);
        (
            given.0.unwrap_or(keys),
            given.1.unwrap_or(rate),
            given.2.unwrap_or(ooo),
        )
    }

    /// The files a run writes, in index order: `--out` itself, or `<stem>.<k>.<ext>` (ext
    /// defaults to `ndjson`) when `--files` is above 1.
    pub fn output_paths(&self) -> Vec<PathBuf> {
        let out = self.out.clone().unwrap_or_default();
        if self.files <= 1 {
            return vec![out];
        }
        let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned());
        let stem = stem.unwrap_or_else(|| "clicks".to_string());
        let ext = out.extension().map(|e| e.to_string_lossy().into_owned());
        let ext = ext.unwrap_or_else(|| "ndjson".to_string());
        (0..self.files)
            .map(|k| out.with_file_name(format!("{stem}.{k}.{ext}")))
            .collect()
    }
}

/// A run of consecutive indices, all in one output file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Chunk {
    file: usize,
    start: u64,
    end: u64,
}

/// File `k` of `files` holds indices `[k * events / files, (k + 1) * events / files)`, cut into
/// chunks of at most `chunk_events`.
fn chunks(events: u64, files: usize, chunk_events: u64) -> Vec<Chunk> {
    let bound = |k: usize| (events as u128 * k as u128 / files as u128) as u64;
    let mut out = Vec::new();
    for file in 0..files {
        let (mut start, end) = (bound(file), bound(file + 1));
        while start < end {
            let stop = end.min(start.saturating_add(chunk_events));
            out.push(Chunk {
                file,
                start,
                end: stop,
            });
            start = stop;
        }
    }
    out
}

/// Writes the events; see the module doc.
pub fn run(args: &LoadgenArgs) -> Result<LoadgenReport, LoadgenError> {
    if args.kind == LoadgenKind::Flow {
        return flow::run(args);
    }
    if args.kind == LoadgenKind::Nexmark {
        return nexmark::run(args);
    }
    let plan = args.plan()?;
    if let (Some(brokers), Some(topic)) = (&args.kafka, &args.topic) {
        return topic::produce(args, &plan, brokers, topic);
    }
    let model = ClickModel::new(&plan);
    let paths = args.output_paths();
    for path in &paths {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|source| LoadgenError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
    }
    let chunks = chunks(args.events, paths.len(), CHUNK_EVENTS);
    let started = Instant::now();
    let bytes = thread::scope(|scope| {
        let mut lanes: Vec<Lane> = Vec::new();
        for lane in 0..GEN_THREADS {
            // Two full buffers may wait per lane: enough to cover a slow write without letting
            // generation run arbitrarily far ahead of the disk.
            let (full_tx, full_rx) = sync_channel::<Vec<u8>>(2);
            let (empty_tx, empty_rx) = channel::<Vec<u8>>();
            let (model, chunks) = (&model, &chunks);
            scope.spawn(move || {
                for chunk in chunks.iter().skip(lane).step_by(GEN_THREADS) {
                    let mut buf = empty_rx.try_recv().unwrap_or_else(|_| {
                        Vec::with_capacity(CHUNK_EVENTS as usize * BYTES_PER_EVENT_HINT)
                    });
                    buf.clear();
                    for i in chunk.start..chunk.end {
                        write_ndjson(&model.click(i), &mut buf);
                    }
                    if full_tx.send(buf).is_err() {
                        return; // The writer failed and hung up; its error is reported.
                    }
                }
            });
            lanes.push((full_rx, empty_tx));
        }
        // Returning drops `lanes`, which unblocks and stops the generators on an error.
        write_in_order(&chunks, &paths, &lanes)
    })?;
    Ok(LoadgenReport {
        events: args.events,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
        files: paths,
    })
}

/// Receives chunk `j` from lane `j % lanes` and writes it; creates every file, empty ones too.
fn write_in_order(
    chunks: &[Chunk],
    paths: &[PathBuf],
    lanes: &[Lane],
) -> Result<u64, LoadgenError> {
    // The file being written: its index in `paths` and its writer. Files are opened in order.
    let mut current: Option<(usize, BufWriter<File>)> = None;
    let mut bytes = 0u64;
    for (j, chunk) in chunks.iter().enumerate() {
        let (full, empty) = &lanes[j % lanes.len()];
        let buf = full
            .recv()
            .map_err(|_| LoadgenError::GeneratorStopped { chunk: j })?;
        let (file, w) = loop {
            match current {
                Some((file, ref mut w)) if file == chunk.file => break (file, w),
                _ => current = Some(open_next(current.take(), paths)?),
            }
        };
        w.write_all(&buf).map_err(|source| LoadgenError::Write {
            path: paths[file].clone(),
            source,
        })?;
        bytes += buf.len() as u64;
        // A generator that already finished has dropped its receiver; the buffer is just freed.
        let _ = empty.send(buf);
    }
    // Files after the last chunk (more files than events) are still created, empty.
    while current
        .as_ref()
        .is_none_or(|(file, _)| file + 1 < paths.len())
    {
        current = Some(open_next(current.take(), paths)?);
    }
    if let Some((file, w)) = current {
        finish(w, &paths[file])?;
    }
    Ok(bytes)
}

/// Flushes the current file (if any) and creates the one after it.
fn open_next(
    current: Option<(usize, BufWriter<File>)>,
    paths: &[PathBuf],
) -> Result<(usize, BufWriter<File>), LoadgenError> {
    let next = match current {
        Some((file, w)) => {
            finish(w, &paths[file])?;
            file + 1
        }
        None => 0,
    };
    let path = &paths[next];
    let file = File::create(path).map_err(|source| LoadgenError::Create {
        path: path.clone(),
        source,
    })?;
    Ok((next, BufWriter::with_capacity(1 << 20, file)))
}

/// Flushes a finished file. No fsync: test data need not survive a power cut, and waiting for
/// the disk would hide the generation speed.
fn finish(w: BufWriter<File>, path: &Path) -> Result<(), LoadgenError> {
    w.into_inner().map(drop).map_err(|e| LoadgenError::Write {
        path: path.to_path_buf(),
        source: e.into_error(),
    })
}

#[cfg(test)]
mod tests;
