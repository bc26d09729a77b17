//! The Confluent wire-format header of a record's value, read off its
//! first bytes: magic byte 0, then the schema ID as a 4-byte big-endian
//! integer; for Protobuf, then the message indexes (a zigzag varint count,
//! then that many zigzag varints; a single 0 byte for `[0]`, the first
//! message). Only the header is read: the payload after it is never
//! decoded, kept or shown.
//!
//! Whether the bytes after the ID are Protobuf indexes or Avro or JSON
//! data cannot be told from the bytes; [`read`] reads them as indexes when
//! they read as such, and the drift rules keep them only for a subject
//! whose type is Protobuf.

/// The magic byte that starts every wire-format record.
pub const MAGIC: u8 = 0;

/// At most this many message indexes: nesting deeper than this is no
/// schema anyone writes, and a longer run of bytes is payload.
pub const MAX_INDEXES: usize = 16;

/// What a record's first bytes say of its schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireHeader {
    /// Magic byte 0 and a schema ID; `indexes` when the bytes after the
    /// ID read as Protobuf message indexes.
    Confluent { id: u32, indexes: Option<Vec<i32>> },
    /// The value does not start with the magic byte (plain JSON, text,
    /// another serializer) or is empty.
    NoHeader,
    /// Starts with the magic byte but is no header, and why.
    Garbage(String),
}

/// The header at the start of `value`.
pub fn read(value: &[u8]) -> WireHeader {
    match value {
        [] => WireHeader::NoHeader,
        [first, ..] if *first != MAGIC => WireHeader::NoHeader,
        [_, a, b, c, d, rest @ ..] => WireHeader::Confluent {
            id: u32::from_be_bytes([*a, *b, *c, *d]),
            indexes: indexes(rest),
        },
        short => WireHeader::Garbage(format!(
            "the magic byte then {} byte(s), where a schema ID takes 4",
            short.len() - 1
        )),
    }
}

/// The Protobuf message indexes at the start of `rest`, if they read as
/// such: a count, then that many non-negative indexes; a count of 0 is
/// `[0]` (Confluent's shorthand for the first message).
///
/// Hand-written: a bounded zigzag varint is a few lines, and the crates
/// that read them (prost) are not built for every target of this crate.
fn indexes(rest: &[u8]) -> Option<Vec<i32>> {
    let mut at = 0;
    let count = zigzag(rest, &mut at)?;
    if count == 0 {
        return Some(vec![0]);
    }
    let count = usize::try_from(count).ok()?;
    if count > MAX_INDEXES {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let i = zigzag(rest, &mut at)?;
        out.push(i32::try_from(i).ok().filter(|i| *i >= 0)?);
    }
    Some(out)
}

/// A zigzag varint of at most 5 bytes (an `int`) at `*at`, moving past it.
fn zigzag(bytes: &[u8], at: &mut usize) -> Option<i64> {
    let mut raw: u64 = 0;
    for shift in 0..5 {
        let b = *bytes.get(*at)?;
        *at += 1;
        raw |= u64::from(b & 0x7f) << (7 * shift);
        if b & 0x80 == 0 {
            let half = i64::try_from(raw >> 1).ok()?;
            return Some(if raw & 1 == 0 { half } else { -half - 1 });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wire-format value as Confluent's serializers write it: magic
    /// byte, ID, then `rest` (Protobuf indexes, or the data).
    /// The schema ID read, when there is one.
    fn id_of(value: &[u8]) -> Option<u32> {
        match read(value) {
            WireHeader::Confluent { id, .. } => Some(id),
            WireHeader::NoHeader | WireHeader::Garbage(_) => None,
        }
    }

    fn framed(id: u32, rest: &[u8]) -> Vec<u8> {
        let mut v = vec![MAGIC];
        v.extend(id.to_be_bytes());
        v.extend(rest);
        v
    }

    #[test]
    fn an_avro_record_gives_its_id() {
        // Avro binary of {"name": "ada", "n": 3}: a string (zigzag length
        // 3 = 0x06) and a long (3 = 0x06).
        let got = id_of(&framed(42, &[0x06, b'a', b'd', b'a', 0x06]));
        assert_eq!(got, Some(42));
    }

    #[test]
    fn a_json_schema_record_gives_its_id() {
        let got = id_of(&framed(7, br#"{"name":"ada"}"#));
        assert_eq!(got, Some(7));
        // Plain JSON without the header is no header, not garbage.
        assert_eq!(read(br#"{"name":"ada"}"#), WireHeader::NoHeader);
    }

    #[test]
    fn the_id_is_big_endian() {
        assert_eq!(id_of(&framed(0x0102_0304, &[])), Some(0x0102_0304));
        assert_eq!(id_of(&[0, 0, 0, 1, 0]), Some(256));
    }

    #[test]
    fn protobuf_indexes_are_read() {
        // The first message: the shorthand single 0.
        assert_eq!(
            read(&framed(3, &[0x00, 0x0a, 0x03])),
            WireHeader::Confluent {
                id: 3,
                indexes: Some(vec![0])
            }
        );
        // Nested message [1, 0]: count 2 (zigzag 0x04), 1 (0x02), 0 (0x00).
        assert_eq!(
            read(&framed(3, &[0x04, 0x02, 0x00, 0x0a])),
            WireHeader::Confluent {
                id: 3,
                indexes: Some(vec![1, 0])
            }
        );
        // An index past one byte: 300 is zigzag 600 = 0xd8 0x04.
        assert_eq!(
            read(&framed(3, &[0x02, 0xd8, 0x04])),
            WireHeader::Confluent {
                id: 3,
                indexes: Some(vec![300])
            }
        );
    }

    #[test]
    fn bytes_that_are_no_indexes_give_none() {
        let none = |rest: &[u8]| match read(&framed(9, rest)) {
            WireHeader::Confluent { id: 9, indexes } => indexes,
            other => panic!("{other:?}"),
        };
        // Nothing after the ID, a count with its indexes cut short, a
        // negative count or index, a count beyond MAX_INDEXES, a varint
        // that never ends.
        assert_eq!(none(&[]), None);
        assert_eq!(none(&[0x04, 0x02]), None);
        assert_eq!(none(&[0x01]), None);
        assert_eq!(none(&[0x02, 0x01]), None);
        assert_eq!(none(&[0x22]), None);
        assert_eq!(none(&[0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), None);
    }

    #[test]
    fn garbage_and_no_header_say_so() {
        assert_eq!(read(&[]), WireHeader::NoHeader);
        assert_eq!(read(b"hello"), WireHeader::NoHeader);
        assert_eq!(read(&[0xff, 0xfe, 0x00]), WireHeader::NoHeader);
        for short in [&[0_u8][..], &[0, 1], &[0, 1, 2, 3]] {
            match read(short) {
                WireHeader::Garbage(why) => assert!(why.contains("takes 4"), "{why}"),
                other => panic!("{short:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn any_bytes_read_without_panic() {
        // A cheap sweep over short values of every first byte.
        for first in 0..=255_u8 {
            for len in 0..12_usize {
                let v: Vec<u8> = std::iter::once(first)
                    .chain((0..len).map(|i| u8::try_from(i * 37 % 256).unwrap_or(0) | 0x80))
                    .collect();
                let _ = read(&v);
            }
        }
    }
}
