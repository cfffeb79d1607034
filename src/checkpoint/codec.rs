//! The byte encoding operators write their state in: little-endian integers and length-prefixed
//! bytes, nothing self-describing (the snapshot's section name and format version say what it is).
//! A decoder reports what it was reading when the bytes ran out, never panics on bad input.

#[derive(Debug, Default)]
pub struct Enc {
    pub bytes: Vec<u8>,
}

impl Enc {
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// A length (u64) then the bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.bytes.extend_from_slice(b);
    }
    /// Words, little-endian, without a length: one copy of the whole slice, for state kept as
    /// flat words (the fast hand-off at a barrier).
    pub fn words(&mut self, w: &[u64]) {
        #[cfg(target_endian = "little")]
        {
            // SAFETY: u64 has no padding and any byte is a valid u8; the slice covers exactly the
            // `w.len() * 8` bytes of `w`, which outlives this call; u8 needs no alignment.
            let b = unsafe { std::slice::from_raw_parts(w.as_ptr().cast::<u8>(), w.len() * 8) };
            self.bytes.extend_from_slice(b);
        }
        #[cfg(not(target_endian = "little"))]
        for &x in w {
            self.u64(x);
        }
    }
}

pub struct Dec<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Dec<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Dec { b, at: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.at == self.b.len()
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| format!("state ends inside {what} (offset {})", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.array::<1>(what)?[0])
    }
    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    pub fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    pub fn i64(&mut self, what: &str) -> Result<i64, String> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }
    /// `n` raw bytes (written by [`Enc::words`] or alike, length known from context).
    pub fn raw(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        self.take(n, what)
    }
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], String> {
        let n = usize::try_from(self.u64(what)?).map_err(|_| format!("{what}: length"))?;
        self.take(n, what)
    }
    /// A count of items that each take at least `min_bytes`: refuses counts the rest cannot hold,
    /// so a corrupt count cannot make a reader allocate without bound.
    pub fn count(&mut self, min_bytes: usize, what: &str) -> Result<usize, String> {
        let n = usize::try_from(self.u64(what)?).map_err(|_| format!("{what}: count"))?;
        if n.saturating_mul(min_bytes.max(1)) > self.b.len() - self.at {
            return Err(format!("{what}: count {n} exceeds the remaining state"));
        }
        Ok(n)
    }
}
