//! The shape of a sound file's audio, read from its WAV header (no samples are decoded).
//!
//! Whisker's scratch-vm fork times `play sound until done` by the decoded buffer's duration,
//! not by project.json's `sampleCount / rate`, and the two disagree where the editor left stale
//! metadata (a sound trimmed after it was saved: `shooter_game`'s "Tennis Hit" says 0.83 s and
//! holds 0.66 s). What a browser's buffer holds is derived from this in `crate::whisker`.

/// The audio a WAV file holds, as its header and data chunk describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WavShape {
    /// The encoding.
    pub kind: WavKind,
    /// Sample frames per second (the header's `samplesPerSec`, > 0).
    pub rate: u32,
    /// Bytes of the `data` chunk that the file actually holds.
    pub data_bytes: u64,
}

/// A WAV encoding, as far as sound durations need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WavKind {
    /// Linear PCM or IEEE float (format tags 1, 3 and their `WAVE_FORMAT_EXTENSIBLE` forms):
    /// `block_align` bytes per frame.
    Pcm {
        /// Bytes per sample frame (> 0).
        block_align: u16,
    },
    /// IMA ADPCM (format tag 0x11), as Scratch saves compressed sounds.
    ImaAdpcm {
        /// The header's `samplesPerBlock`.
        samples_per_block: u16,
    },
}

/// How many leading bytes of a sound file [`shape`] needs at most: the chunks before `data`
/// (format, `LIST` metadata) fit well within this in every file seen; a file whose `data`
/// chunk starts later is treated as unreadable.
pub const HEAD_BYTES: usize = 64 * 1024;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The shape of a WAV file from its first bytes (`head`, at most [`HEAD_BYTES`]) and its whole
/// length. `None` when it is not a RIFF/WAVE file with a format and a data chunk, uses an
/// encoding other than the two above, or is malformed (the caller then keeps the metadata).
pub fn shape(head: &[u8], total_len: u64) -> Option<WavShape> {
    if head.get(0..4)? != b"RIFF" || head.get(8..12)? != b"WAVE" {
        return None;
    }
    let mut fmt: Option<(WavKind, u32)> = None;
    let mut at = 12usize;
    // Chunks are walked as scratch-audio's ADPCM decoder walks them (no pad byte after an odd
    // size; every file Scratch writes has even sizes).
    while at + 8 <= head.len() {
        let id = head.get(at..at + 4)?;
        let size = u32_at(head, at + 4)?;
        let body = at + 8;
        if id == b"fmt " {
            let tag = u16_at(head, body)?;
            let rate = u32_at(head, body + 4)?;
            let block_align = u16_at(head, body + 12)?;
            let sub_tag = if tag == 0xFFFE { u16_at(head, body + 24)? } else { tag };
            let kind = match sub_tag {
                1 | 3 if block_align > 0 => WavKind::Pcm { block_align },
                0x11 => WavKind::ImaAdpcm { samples_per_block: u16_at(head, body + 18)? },
                _ => return None,
            };
            if rate == 0 {
                return None;
            }
            fmt = Some((kind, rate));
        } else if id == b"data" {
            let (kind, rate) = fmt?;
            let available = total_len.checked_sub(body as u64)?;
            let data_bytes = u64::from(size).min(available);
            // A PCM file without a whole frame fails Chromium's decoder, and what scratch-audio
            // makes of it then is not modelled: the metadata stays.
            if let WavKind::Pcm { block_align } = kind
                && data_bytes < u64::from(block_align)
            {
                return None;
            }
            return Some(WavShape { kind, rate, data_bytes });
        }
        at = body.checked_add(usize::try_from(size).ok()?)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(tag: u16, rate: u32, align: u16, extra: &[u8], data: u32, total_data: usize) -> Vec<u8> {
        let mut fmt = Vec::new();
        fmt.extend_from_slice(&tag.to_le_bytes());
        fmt.extend_from_slice(&1u16.to_le_bytes());
        fmt.extend_from_slice(&rate.to_le_bytes());
        fmt.extend_from_slice(&(rate * u32::from(align)).to_le_bytes());
        fmt.extend_from_slice(&align.to_le_bytes());
        fmt.extend_from_slice(&16u16.to_le_bytes());
        fmt.extend_from_slice(extra);
        let mut b = b"RIFF\0\0\0\0WAVE".to_vec();
        b.extend_from_slice(b"LIST");
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(b"INFO");
        b.extend_from_slice(b"fmt ");
        b.extend_from_slice(&(fmt.len() as u32).to_le_bytes());
        b.extend_from_slice(&fmt);
        b.extend_from_slice(b"data");
        b.extend_from_slice(&data.to_le_bytes());
        b.extend(std::iter::repeat_n(0u8, total_data));
        b
    }

    #[test]
    fn pcm_and_adpcm_headers_give_their_data_length() {
        let b = wav(1, 22050, 2, &[], 29030, 29030);
        assert_eq!(
            shape(&b, b.len() as u64),
            Some(WavShape { kind: WavKind::Pcm { block_align: 2 }, rate: 22050, data_bytes: 29030 })
        );
        let b = wav(0x11, 22050, 512, &[2, 0, 0xf9, 0x03], 1024, 1024);
        assert_eq!(
            shape(&b, b.len() as u64),
            Some(WavShape { kind: WavKind::ImaAdpcm { samples_per_block: 1017 }, rate: 22050, data_bytes: 1024 })
        );
    }

    #[test]
    fn a_data_chunk_that_claims_more_than_the_file_holds_is_cut_to_the_file() {
        let b = wav(1, 48000, 2, &[], 100_000, 10);
        assert_eq!(shape(&b, b.len() as u64).map(|s| s.data_bytes), Some(10));
    }

    #[test]
    fn other_files_and_encodings_are_unread() {
        assert_eq!(shape(b"ID3\x03\0\0\0\0\0\0", 10), None);
        assert_eq!(shape(&wav(2, 22050, 512, &[], 4, 4), 100), None); // MS ADPCM
        assert_eq!(shape(&wav(1, 0, 2, &[], 4, 4), 100), None);
        assert_eq!(shape(&wav(1, 22050, 0, &[], 4, 4), 100), None);
        let b = wav(1, 22050, 4, &[], 2, 2);
        assert_eq!(shape(&b, b.len() as u64), None); // no whole frame
        let b = wav(1, 22050, 2, &[], 4, 4);
        assert_eq!(shape(&b[..30], b.len() as u64), None); // the head ends before `data`
    }
}
