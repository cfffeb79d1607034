//! Phase one of `hot_keys` on this shard: holds back the events of hot keys it reads, folded into
//! partial results by the operator's combiner (`operators::Combine`), and hands them on at points
//! where that
//! cannot change any result: before an event that could move the watermark past an action point
//! of a held pane, when the buffer is full, and at every chunk end.
//!
//! A hand-off needs the exact watermark at the chunk's start, which only a receiver that has
//! reached the chunk knows; this shard's own receiver has once every earlier chunk is in. So a
//! hand-off waits for it (the producer pauses, the receiver goes on): that never deadlocks, since
//! the lowest unfinished chunk's receivers are never waiting on a later one, and it costs little
//! because a chunk's predecessors are read at the same time by the other shards. Everything is
//! handed on at each chunk end, so checkpoints (taken between chunks) never see held events.

use super::Shard;
use crate::operators::detect::Detector;
use crate::operators::Combine;
use crate::plan::{HotKeyPlanMode, Plan};
use crate::record::event::{Event, PayloadBuf, Rec};
use crate::time::WM_MAX;

/// One operator's phase one on this shard.
struct OpPhase {
    combiner: Box<dyn Combine>,
    /// `auto`: which keys are hot here; `salt`: none (every key is).
    detector: Option<Detector>,
}

/// One held event: where its key and pane were folded, and its payload's range in `payloads`.
struct Held {
    ev: Event,
    pane: u32,
    row: u32,
    payload: (u32, u32),
}

pub struct PhaseOne {
    /// By node id; `None` for nodes without `hot_keys` (or not combined on this shard).
    ops: Vec<Option<OpPhase>>,
    /// The node of each port, and each node's first port.
    port_node: Vec<usize>,
    first_port: Vec<u16>,
    /// Held events in the order read, with where their key and pane were folded.
    held: Vec<Held>,
    /// The payloads of held events that have one (wide values, a long key), back to back.
    payloads: Vec<u8>,
    max_buffered: usize,
    /// The most ring slots one message may take: a partial must fit the ring whole.
    max_slots: usize,
    /// Hand off before any event whose `seen_max` reaches this.
    flush_seen: i64,
    /// Messages of a hand-off (headers and their payload bytes), routed once it is complete.
    out: Vec<(Event, Vec<u8>)>,
    /// `seen_max` of the last event routed in the current chunk: a hand-off applies at its
    /// watermark (the chunk's running maximum may already include the event that is due).
    stamp: i64,
    /// That event's source position: the ordering tag of what a partial's merge emits (a group
    /// aggregate's update), which must follow the output of the events before it.
    last_pos: u64,
}

impl PhaseOne {
    /// Phase one for shard `id` of `shards`, or `None` when no operator combines here.
    pub fn new(plan: &Plan, id: usize, shards: usize) -> Option<PhaseOne> {
        if shards < 2 {
            // One shard owns every key: there is no load to spread, only work to add.
            return None;
        }
        let mut max_buffered = 0;
        let ops: Vec<Option<OpPhase>> = plan
            .nodes
            .iter()
            .map(|node| {
                let (combiner, hot) = crate::operators::combiner(node)?;
                let detector = match hot.mode {
                    HotKeyPlanMode::Off => return None,
                    HotKeyPlanMode::Salt { salt } => {
                        if id >= salt.unwrap_or(shards).max(1) {
                            return None;
                        }
                        None
                    }
                    HotKeyPlanMode::Auto { threshold } => {
                        Some(Detector::new(threshold.unwrap_or_else(|| {
                            crate::config::defaults::hot_key_threshold(shards)
                        })))
                    }
                };
                max_buffered = max_buffered.max(hot.max_buffered);
                Some(OpPhase { combiner, detector })
            })
            .collect();
        ops.iter().any(Option::is_some).then(|| PhaseOne {
            ops,
            port_node: plan.ports.iter().map(|p| p.node).collect(),
            first_port: plan.nodes.iter().map(|n| n.ports.start as u16).collect(),
            held: Vec::with_capacity(max_buffered),
            payloads: Vec::new(),
            max_buffered,
            max_slots: plan.runtime.ring_capacity,
            flush_seen: WM_MAX,
            out: Vec::new(),
            stamp: crate::time::WM_MIN,
            last_pos: 0,
        })
    }

    /// Holds `ev` if its operator combines here and its key is hot; `ooo` is the bound of its
    /// partition. False: send it on as usual.
    #[inline]
    pub fn take(&mut self, ev: &Event, ooo: i64) -> bool {
        self.routing(ev);
        if ev.has_payload() {
            // A long key or wide values come with their payload (`take_with_payload`).
            return false;
        }
        self.hold(ev, &[], ooo)
    }

    /// [`PhaseOne::take`] for an event with a payload (wide values, a long key), which only a
    /// combiner that reads payloads (`Combine::add_rec`) folds; the payload is kept with it.
    pub fn take_with_payload(&mut self, ev: &Event, payload: &[u8], ooo: i64) -> bool {
        self.routing(ev);
        self.hold(ev, payload, ooo)
    }

    /// `ev` is the latest event routed in the current chunk, held or not: a hand-off now
    /// applies at its watermark and position.
    #[inline]
    fn routing(&mut self, ev: &Event) {
        self.stamp = ev.seen_max;
        self.last_pos = ev.pos;
    }

    /// Folds `ev` (read with `payload`, empty for a header-only event) into its operator's
    /// partial and keeps it until the hand-off; the first event of a pane moves the next
    /// hand-off before that pane's next action point.
    #[inline]
    fn hold(&mut self, ev: &Event, payload: &[u8], ooo: i64) -> bool {
        let node = (self.port_node.get(ev.port as usize).copied()).unwrap_or(usize::MAX);
        let Some(Some(phase)) = self.ops.get_mut(node) else {
            return false;
        };
        if let Some(d) = &mut phase.detector {
            d.observe(ev);
            if !d.is_hot(ev.hash) {
                return false;
            }
        }
        let folded = match payload.is_empty() {
            true => Some(phase.combiner.add(ev)),
            // One the receiver cannot read goes on raw: the receiver reports it.
            false => (Rec::parse(ev, payload).ok()).and_then(|rec| phase.combiner.add_rec(&rec)),
        };
        let Some((pane, row, first)) = folded else {
            return false;
        };
        if let Some(p) = first {
            let change = (phase.combiner).next_change_above(p, ev.seen_max.saturating_sub(ooo));
            self.flush_seen = self.flush_seen.min(change.saturating_add(ooo));
        }
        let at = self.payloads.len() as u32;
        self.payloads.extend_from_slice(payload);
        self.held.push(Held {
            ev: *ev,
            pane,
            row,
            payload: (at, payload.len() as u32),
        });
        true
    }

    /// Whether the next event, stamped `seen_max`, must wait for a hand-off.
    #[inline]
    pub fn due(&self, seen_max: i64) -> bool {
        !self.held.is_empty()
            && (seen_max >= self.flush_seen || self.held.len() >= self.max_buffered)
    }

    /// Lets `auto` detection change the hot set; only while nothing is held, so a key's events
    /// never switch between held and sent within one hand-off.
    pub fn refresh(&mut self) {
        debug_assert!(self.held.is_empty());
        for p in self.ops.iter_mut().flatten() {
            if let Some(d) = &mut p.detector {
                d.refresh_if_due();
            }
        }
    }

    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// The hot keys `auto` detected on this shard, per operator: (node id, key, share).
    pub fn hot_keys(&self) -> Vec<(usize, String, f64)> {
        let mut v = Vec::new();
        for (i, p) in self.ops.iter().enumerate() {
            if let Some(d) = p.as_ref().and_then(|p| p.detector.as_ref()) {
                v.extend(d.hot_keys().iter().map(|(k, s)| (i, k.clone(), *s)));
            }
        }
        v
    }
}

impl Shard {
    /// Hands held events on, at the current point of the current chunk; false when it must wait
    /// for this shard's receiver to reach the chunk.
    pub(super) fn hand_off(&mut self) -> bool {
        let Some(cur) = self.cur.as_ref() else {
            return true;
        };
        if self.next_seq != cur.seq {
            return false;
        }
        let Some(mut h) = self.hot.take() else {
            return true;
        };
        // The exact watermark here, per node: the receiver's (which covers the chunk's start)
        // moved on by the events routed so far (every one is held since the last chunk end, so
        // `stamp` is this chunk's).
        let mut head = Event::EMPTY;
        head.seen_max = h.stamp;
        head.part = cur.part;
        let mut out = std::mem::take(&mut h.out);
        for (node, phase) in h.ops.iter_mut().enumerate() {
            if let Some(phase) = phase {
                let deps = &self.setup.topo.deps[node];
                let time = self.tracker.chunk_time_of(cur.part, deps);
                let wm = self.node_wm[node].max(time.before(h.stamp));
                head.port = h.first_port[node];
                head.pos = h.last_pos;
                let mut send = |m: &Event, p: &PayloadBuf| {
                    // Each partial its own tie-break, apart from any source record's (sub 0).
                    let mut m = *m;
                    m.sub = (1 << 63) | out.len() as u64;
                    out.push((m, p.bytes.clone()))
                };
                self.stats.events_combined +=
                    phase.combiner.hand_off(wm, &head, h.max_slots, &mut send);
            }
        }
        for held in &h.held {
            let node = (h.port_node.get(held.ev.port as usize).copied()).unwrap_or(usize::MAX);
            let combined = match h.ops.get(node) {
                Some(Some(p)) => p.combiner.combined(held.pane, held.row),
                _ => false,
            };
            if !combined {
                let (at, len) = (held.payload.0 as usize, held.payload.1 as usize);
                out.push((held.ev, h.payloads[at..at + len].to_vec()));
            }
        }
        for (m, payload) in &out {
            if payload.is_empty() {
                self.route_on(m);
            } else {
                self.route_with_payload(m, payload);
            }
        }
        out.clear();
        h.out = out;
        h.held.clear();
        h.payloads.clear();
        h.flush_seen = WM_MAX;
        for p in h.ops.iter_mut().flatten() {
            p.combiner.clear();
        }
        h.refresh();
        self.hot = Some(h);
        true
    }
}
