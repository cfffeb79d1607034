//! A shard's part in checkpoints (see `runtime::checkpointing`): shard 0 issues barriers ahead of
//! its chunks; every shard writes its state when it meets one and restores its keys when a run
//! resumes. Runs between chunks only, never per event.

use super::Shard;
use crate::checkpoint::codec::{Dec, Enc};
use crate::checkpoint::{Section, Snapshot};
use crate::record::event::{Event, Tag};
use crate::runtime::checkpointing::Job;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Shard {
    /// Shard 0, about to start a chunk: sends the next checkpoint's barrier ahead of it if the
    /// previous checkpoint has settled and the interval has passed (or a savepoint was asked for).
    pub(super) fn maybe_issue_barrier(&mut self) {
        let Some(ck) = self.setup.ckpt.clone() else {
            return;
        };
        if self.id != 0 || !ck.due(self.ckpt_issued, self.ckpt_last) {
            return;
        }
        let id = self.ckpt_issued + 1;
        ck.issue(id);
        self.ckpt_issued = id;
        self.ckpt_last = Instant::now();
        let mut b = Event::EMPTY;
        b.tag = Tag::BARRIER;
        b.pos = id;
        for d in 0..self.n {
            self.pending.push_back((d, b));
        }
    }

    /// At the end of a run that got anywhere (bounded input done, or stopped by a signal at an agreed
    /// chunk): every shard has taken exactly the chunks before the end, so their states together
    /// are one more consistent checkpoint, taken without a barrier. A run resumed from it has
    /// nothing left to replay.
    pub(super) fn final_checkpoint(&mut self) {
        let Some(ck) = self.setup.ckpt.clone() else {
            return;
        };
        if self.next_seq == self.started_at || self.failure.is_some() {
            return;
        }
        // Checkpoints complete in id order (a commit appends to the outputs): the last barrier's
        // must settle first, so that shard 0 serves a savepoint request with this one only if that
        // one did not take it.
        while ck.settled.load(Ordering::Acquire) < self.last_barrier {
            if self.setup.stop.failed.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let id = self.last_barrier + 1;
        if self.id == 0 {
            ck.claim_savepoint(id);
        }
        self.take_checkpoint(id, true);
    }

    /// Key groups `lo..hi` this shard owns (the inverse of `shard_of`).
    fn key_group_range(&self) -> (u32, u32) {
        let (kgs, n, id) = (self.setup.key_groups as u64, self.n as u64, self.id as u64);
        (
            (id * kgs).div_ceil(n) as u32,
            ((id + 1) * kgs).div_ceil(n) as u32,
        )
    }

    /// Met barrier `id` at the boundary before chunk `next_seq`: flush what was emitted before it
    /// (so a replay from here loses nothing), encode this shard's state and hand it, with the
    /// sealed staging files, to the checkpoint writer. The encoding is the only pause; the writing
    /// happens on the writer thread while this shard goes on.
    pub(super) fn take_checkpoint(&mut self, id: u64, last: bool) {
        let Some(ck) = self.setup.ckpt.clone() else {
            return;
        };
        self.last_barrier = id;
        let started = Instant::now();
        let mut seal = Vec::new();
        for s in self.emitter.sinks.iter_mut() {
            match s.seal(id) {
                Ok(f) => seal.extend(f),
                Err(e) => {
                    self.failure = Some(format!("checkpoint {id}: sealing output: {e}"));
                    return;
                }
            }
        }
        // Rows a sink refused while sealing go to the dead letters before they are sealed.
        self.dead_results();
        if let Some(d) = self.dead.as_mut() {
            match d.seal(id) {
                Ok(f) => seal.extend(f),
                Err(e) => {
                    self.failure = Some(format!("checkpoint {id}: sealing output: {e}"));
                    return;
                }
            }
        }
        let mut time = Enc::default();
        self.tracker.encode(&mut time);
        // The job's watermark (every node's follows from the partitions' progress above).
        time.i64(self.tracker.current());
        self.setup.schedule.encode(&mut time);
        super::super::positions::encode(&self.positions, &self.setup.parts, &mut time);
        let mut sections = vec![Section {
            name: "time".into(),
            bytes: time.bytes,
        }];
        for (i, (op, name)) in self.ops.iter().zip(&self.setup.op_names).enumerate() {
            // The buffer the writer handed back after the last checkpoint: already allocated and
            // faulted in, so the pause is the copy alone.
            let mut e = Enc {
                bytes: ck.buffer(self.id, i),
            };
            op.snapshot(&mut e);
            sections.push(Section {
                name: format!("op/{name}"),
                bytes: e.bytes,
            });
        }
        let snap = Snapshot {
            shard: self.id as u32,
            key_groups: self.key_group_range(),
            sections,
        };
        let pause = started.elapsed();
        let job = Job {
            id,
            chunk: self.next_seq,
            shards: self.n,
            snap,
            seal,
            met: started,
            pause,
            last,
        };
        if let Err(e) = ck.submit(job) {
            self.failure = Some(format!("checkpoint {id}: {e}"));
        }
        self.stats.checkpoints += 1;
        self.stats.last_checkpoint = id;
        self.stats.checkpoint_time += pause;
    }

    /// Restores the keys this shard owns from every snapshot of the checkpoint being resumed and
    /// starts at its chunk.
    pub(super) fn resume(&mut self) -> Result<(), String> {
        if let Some(ck) = &self.setup.ckpt {
            self.ckpt_issued = ck.base_id;
            self.last_barrier = ck.base_id;
        }
        let Some(r) = self.setup.resume.clone() else {
            return Ok(());
        };
        let time = r
            .snapshots
            .first()
            .and_then(|s| s.sections.iter().find(|x| x.name == "time"))
            .ok_or("checkpoint has no watermark state")?;
        let mut d = Dec::new(&time.bytes);
        self.tracker.decode(&mut d)?;
        d.i64("watermark")?;
        for (n, deps) in self.setup.topo.deps.iter().enumerate() {
            self.node_wm[n] = self.tracker.watermark_of(deps);
        }
        // The chunk order that follows (`ChunkOrder::decode`) was restored before any shard started.
        let setup = self.setup.clone();
        let owners = super::owners::Owners::new(setup.key_groups, self.n);
        let keep = |h: u64| owners.of(h) == self.id;
        for snap in &r.snapshots {
            for ((op, want), wm) in self.ops.iter_mut().zip(&r.sections).zip(&self.node_wm) {
                let Some(want) = want else { continue };
                let sec: &Section = snap
                    .sections
                    .iter()
                    .find(|x| &x.name == want)
                    .ok_or_else(|| format!("checkpoint {}: no section {want}", r.id))?;
                op.restore(&sec.bytes, &keep, *wm)
                    .map_err(|e| format!("checkpoint {}, {}: {e}", r.id, sec.name))?;
            }
        }
        let n = self.n as u64;
        // A job reading logs resumes from the offsets in the checkpoint, with chunks numbered afresh.
        let chunk = if self.setup.log_job { 0 } else { r.chunk };
        self.next_seq = chunk;
        self.started_at = chunk;
        self.next_prod = chunk + (self.id as u64 + n - chunk % n) % n;
        Ok(())
    }
}
