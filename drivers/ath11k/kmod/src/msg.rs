// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! A bounded text writer for C buffers.
//!
//! [`MsgBuf`] implements [`core::fmt::Write`] over a byte buffer owned by
//! someone else (a C caller, or the panic handler's stack). It never
//! allocates, never fails, keeps the text NUL-terminated after every write,
//! and truncates at a UTF-8 character boundary when the text does not fit:
//! the beginning of a message is the part worth keeping.

use core::fmt;

/// A `fmt::Write` sink over `buf`.
///
/// # Invariants
///
/// `len < buf.len()` whenever `buf` is not empty, `buf[len] == 0`, and
/// `buf[..len]` is valid UTF-8.
pub struct MsgBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
    truncated: bool,
}

impl<'a> MsgBuf<'a> {
    /// An empty message in `buf`; writes `buf[0] = 0` when `buf` is not
    /// empty. An empty `buf` accepts and drops everything.
    pub fn new(buf: &'a mut [u8]) -> Self {
        if let Some(first) = buf.first_mut() {
            *first = 0;
        }
        Self { buf, len: 0, truncated: false }
    }

    /// The text written so far, without the terminating NUL.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        // `len` never passes the buffer's length (`write_str`).
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// The text written so far.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // By the invariant `buf[..len]` is valid UTF-8; the fallback is never
        // taken but keeps this function free of `unsafe`.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// Whether some text was dropped because the buffer was full.
    #[must_use]
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

impl fmt::Write for MsgBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // One byte stays reserved for the NUL terminator.
        let room = self.buf.len().saturating_sub(self.len).saturating_sub(1);
        // The longest prefix that fits and ends on a character boundary (0 always does).
        let take = (0..=s.len().min(room)).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        if take < s.len() {
            self.truncated = true;
        }
        if self.buf.is_empty() {
            return Ok(());
        }
        // Both ranges are in bounds (`take` fits the room and the text), so `text_end`
        // does not saturate.
        let text_end = self.len.saturating_add(take);
        if let (Some(to), Some(from)) = (self.buf.get_mut(self.len..text_end), s.as_bytes().get(..take)) {
            to.copy_from_slice(from);
            self.len = text_end;
        }
        if let Some(end) = self.buf.get_mut(self.len) {
            *end = 0;
        }
        Ok(())
    }
}
