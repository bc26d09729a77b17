//! The topics a consumer-group member is assigned, from the raw assignment
//! bytes of a DescribeGroups/ListGroups answer (Kafka's "consumer" protocol:
//! version i16, then [topic: string, partitions: [i32]], then user data).
//! Written by hand because librdkafka hands these bytes over undecoded and
//! the only crate that decodes them (kafka-protocol) is a whole protocol
//! stack for ten lines of format.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed consumer assignment: {0}")]
pub struct MalformedAssignment(&'static str);

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], MalformedAssignment> {
        if self.bytes.len() < n {
            return Err(MalformedAssignment(what));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn i16(&mut self, what: &'static str) -> Result<i16, MalformedAssignment> {
        let b = self.take(2, what)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self, what: &'static str) -> Result<i32, MalformedAssignment> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn count(&mut self, what: &'static str) -> Result<usize, MalformedAssignment> {
        let n = self.i32(what)?;
        usize::try_from(n.max(0)).map_err(|_| MalformedAssignment(what))
    }
}

/// Topic → partitions assigned to one member. Empty input (a member that
/// has not been assigned yet) is an empty assignment.
pub fn assigned_partitions(
    bytes: &[u8],
) -> Result<BTreeMap<String, Vec<i32>>, MalformedAssignment> {
    let mut out = BTreeMap::new();
    if bytes.is_empty() {
        return Ok(out);
    }
    let mut r = Reader { bytes };
    r.i16("version")?;
    let topics = r.count("topic count")?;
    for _ in 0..topics {
        let len = usize::try_from(r.i16("topic name length")?.max(0))
            .map_err(|_| MalformedAssignment("topic name length"))?;
        let name = std::str::from_utf8(r.take(len, "topic name")?)
            .map_err(|_| MalformedAssignment("topic name is not UTF-8"))?
            .to_string();
        let n = r.count("partition count")?;
        let mut parts = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            parts.push(r.i32("partition")?);
        }
        out.entry(name).or_insert_with(Vec::new).extend(parts);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(topics: &[(&str, &[i32])]) -> Vec<u8> {
        let mut b = vec![0, 1];
        b.extend((topics.len() as i32).to_be_bytes());
        for (t, parts) in topics {
            b.extend((t.len() as i16).to_be_bytes());
            b.extend(t.as_bytes());
            b.extend((parts.len() as i32).to_be_bytes());
            for p in *parts {
                b.extend(p.to_be_bytes());
            }
        }
        b.extend((-1_i32).to_be_bytes()); // null user data
        b
    }

    #[test]
    fn decodes_topics_and_partitions() {
        let bytes = encode(&[("orders", &[0, 2]), ("payments", &[1])]);
        let got = assigned_partitions(&bytes).expect("valid");
        assert_eq!(got["orders"], vec![0, 2]);
        assert_eq!(got["payments"], vec![1]);
    }

    #[test]
    fn empty_is_unassigned() {
        assert!(assigned_partitions(&[]).expect("empty").is_empty());
    }

    #[test]
    fn truncated_is_an_error_not_a_panic() {
        let bytes = encode(&[("orders", &[0, 2])]);
        for cut in 1..bytes.len() - 4 {
            assert!(assigned_partitions(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = vec![0, 0];
        huge.extend(i32::MAX.to_be_bytes());
        assert!(assigned_partitions(&huge).is_err());
    }
}
