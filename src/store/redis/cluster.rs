//! Redis Cluster: a key's hash slot, the hash tags that keep a record's keys in one slot (so
//! that its MULTI/EXEC stays atomic), and the topology as a node reports it
//! (`CLUSTER NODES`).

use anyhow::{Context, Result, bail};

/// The slots a Redis Cluster divides its keys into.
pub const SLOTS: u16 = 16384;

/// How many hash tags the classic suite's records are spread over. A record's value and its
/// entries in the name and age indexes carry its tag, so they share a slot; each tag has
/// its own name and age hashes (a partitioned index, as a sharded store keeps one per
/// shard). The tags' slots are evenly spaced (every 16th slot), so a master serving a
/// contiguous range of slots gets its share of the tags within one: 1024 / N each for up to
/// 64 masters.
pub const PARTITIONS: u32 = 1024;

/// The hash slot of `key`, as the servers compute it: CRC16 (XMODEM) of its hash tag (the
/// part between the first `{` and the next `}`, when not empty) or of the whole key.
pub fn slot(key: &[u8]) -> u16 {
    let hashed = hash_tag(key).unwrap_or(key);
    crc16::State::<crc16::XMODEM>::calculate(hashed) % SLOTS
}

fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let len = key[open + 1..].iter().position(|&b| b == b'}')?;
    let tag = &key[open + 1..open + 1 + len];
    (!tag.is_empty()).then_some(tag)
}

/// The hash tag of the record with this unique id (`{1234}`): the tag of its partition,
/// FNV-1a of the id modulo [`PARTITIONS`] (the same on every run and machine).
pub fn tag(unique_id: &str) -> &'static str {
    let mut hash: u32 = 0x811c_9dc5;
    for &b in unique_id.as_bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    &tags()[(hash % PARTITIONS) as usize]
}

/// The partitions' tags: the `i`-th is the first decimal number whose slot is `16 i`, in
/// braces.
fn tags() -> &'static [String] {
    static TAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TAGS.get_or_init(|| {
        let step = u32::from(SLOTS) / PARTITIONS;
        let mut tags: Vec<Option<String>> = vec![None; PARTITIONS as usize];
        let mut left = PARTITIONS;
        // Decimal strings reach every slot (these 1024 within about 120,000 on average).
        for n in 0u64.. {
            let candidate = n.to_string();
            let s = u32::from(slot(candidate.as_bytes()));
            let i = (s / step) as usize;
            if s % step == 0 && tags[i].is_none() {
                tags[i] = Some(format!("{{{candidate}}}"));
                left -= 1;
                if left == 0 {
                    break;
                }
            }
        }
        tags.into_iter().flatten().collect()
    })
}

/// A master of the cluster and the slots it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub host: String,
    pub port: u16,
    /// Slot ranges, inclusive.
    pub slots: Vec<(u16, u16)>,
    /// Whether the cluster marks it failing (`fail` or `fail?`).
    pub failing: bool,
}

impl Node {
    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    fn slot_count(&self) -> u32 {
        self.slots
            .iter()
            .map(|&(a, b)| u32::from(b) - u32::from(a) + 1)
            .sum()
    }
}

/// The cluster's masters and how many replicas they have, as one node sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// In address order.
    pub masters: Vec<Node>,
    pub replicas: usize,
}

impl Topology {
    /// Reads `CLUSTER NODES`: one line per node, `<id> <ip:port@cport[,hostname]> <flags>
    /// <master> <ping> <pong> <epoch> <link> <slot>...`, where a slot is `N`, `A-B` or, while
    /// it migrates, `[N->-id]` (skipped: the slot is still the first node's).
    pub fn parse(text: &str) -> Result<Topology> {
        let mut masters = Vec::new();
        let mut replicas = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 {
                bail!("a CLUSTER NODES line with {} fields: {line}", fields.len());
            }
            let flags: Vec<&str> = fields[2].split(',').collect();
            if flags.contains(&"slave") || flags.contains(&"replica") {
                replicas += 1;
                continue;
            }
            if !flags.contains(&"master") || flags.contains(&"noaddr") {
                continue;
            }
            let address = fields[1].split(['@', ',']).next().unwrap_or_default();
            let (host, port) = address
                .rsplit_once(':')
                .with_context(|| format!("no port in the CLUSTER NODES address {address}"))?;
            let port: u16 = port
                .parse()
                .with_context(|| format!("the CLUSTER NODES address {address}"))?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let mut slots = Vec::new();
            for range in fields[8..].iter().filter(|s| !s.starts_with('[')) {
                let (a, b) = range.split_once('-').unwrap_or((range, range));
                let parse = |s: &str| {
                    s.parse::<u16>()
                        .ok()
                        .filter(|&n| n < SLOTS)
                        .with_context(|| format!("the slot range {range} of {address}"))
                };
                let (a, b) = (parse(a)?, parse(b)?);
                if a > b {
                    bail!("the slot range {range} of {address} runs backwards");
                }
                slots.push((a, b));
            }
            masters.push(Node {
                host: host.to_string(),
                port,
                slots,
                failing: flags.iter().any(|f| f.starts_with("fail")),
            });
        }
        masters.sort_by(|a, b| (&a.host, a.port).cmp(&(&b.host, b.port)));
        if masters.is_empty() {
            bail!("CLUSTER NODES lists no master");
        }
        Ok(Topology { masters, replicas })
    }

    /// The master serving `slot`.
    pub fn node_of(&self, slot: u16) -> Option<&Node> {
        self.masters
            .iter()
            .find(|n| n.slots.iter().any(|&(a, b)| (a..=b).contains(&slot)))
    }

    /// Slots some master that is not failing serves (16384 when the cluster is whole).
    pub fn covered(&self) -> u32 {
        self.masters
            .iter()
            .filter(|n| !n.failing)
            .map(Node::slot_count)
            .sum()
    }

    /// For the report: `3 masters, 0 replicas; 127.0.0.1:7000 slots 0-5460 (5461), ...`.
    pub fn describe(&self) -> String {
        let nodes: Vec<String> = self
            .masters
            .iter()
            .map(|n| {
                let ranges: Vec<String> = n
                    .slots
                    .iter()
                    .map(|&(a, b)| {
                        if a == b {
                            a.to_string()
                        } else {
                            format!("{a}-{b}")
                        }
                    })
                    .collect();
                let failing = if n.failing { ", failing" } else { "" };
                format!(
                    "{} slots {} ({}{failing})",
                    n.address(),
                    if ranges.is_empty() {
                        "none".to_string()
                    } else {
                        ranges.join(",")
                    },
                    n.slot_count()
                )
            })
            .collect();
        format!(
            "{} masters, {} replicas; {}",
            self.masters.len(),
            self.replicas,
            nodes.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "\
47c7 127.0.0.1:7103@7203 master - 0 1796173479125 3 connected 10923-16383
59bb 127.0.0.1:7101@7201 myself,master - 0 1796173479000 1 connected 0-5460
81ce 127.0.0.1:7102@7202,node-b master,fail? - 0 1796173480130 2 connected 5461-10921 10922 [10922->-47c7]
07c3 127.0.0.1:7104@7204 slave 59bb 0 1426238317239 4 connected
";

    #[test]
    fn slots_follow_the_servers_crc16_and_hash_tags() {
        // Values from the Redis Cluster specification and CLUSTER KEYSLOT.
        assert_eq!(slot(b"123456789"), 12739);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        // An empty tag: the whole key is hashed.
        assert_eq!(
            slot(b"foo{}{bar}"),
            crc16::State::<crc16::XMODEM>::calculate(b"foo{}{bar}") % SLOTS
        );
        assert_ne!(slot(b"foo{}{bar}"), slot(b"bar"));
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
        assert_eq!(slot(b"foo{bar}{zap}"), slot(b"bar"));
    }

    #[test]
    fn tags_spread_records_over_every_partition_and_are_stable() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..50_000 {
            let t = tag(&format!("id-{i}"));
            assert!(t.starts_with('{') && t.ends_with('}'), "{t}");
            seen.insert(t);
        }
        assert_eq!(seen.len(), PARTITIONS as usize);
        assert_eq!(tag("abc"), tag("abc"));
        let key = format!("dbcompare:{}:abc", tag("abc"));
        assert_eq!(
            slot(key.as_bytes()),
            slot(tag("abc").trim_matches(['{', '}']).as_bytes())
        );
    }

    /// With the slots split into contiguous ranges as `redis-cli --cluster create` splits
    /// them, every master gets its share of the tags within one.
    #[test]
    fn every_master_gets_its_share_of_the_tags() {
        let slots: Vec<u16> = tags()
            .iter()
            .map(|t| slot(t.trim_matches(['{', '}']).as_bytes()))
            .collect();
        for (i, &s) in slots.iter().enumerate() {
            assert_eq!(u32::from(s), i as u32 * 16);
        }
        for masters in [3u32, 4, 5, 7, 8, 16, 64] {
            let per = f64::from(SLOTS) / f64::from(masters);
            let counts: Vec<usize> = (0..masters)
                .map(|m| {
                    let (a, b) = ((f64::from(m) * per) as u16, (f64::from(m + 1) * per) as u16);
                    slots.iter().filter(|&&s| s >= a && s < b).count()
                })
                .collect();
            let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
            assert!(hi - lo <= 1, "{masters} masters: {counts:?}");
        }
    }

    #[test]
    fn cluster_nodes_gives_masters_slots_and_replicas() {
        let t = Topology::parse(NODES).unwrap();
        assert_eq!(t.replicas, 1);
        let addresses: Vec<String> = t.masters.iter().map(Node::address).collect();
        assert_eq!(
            addresses,
            ["127.0.0.1:7101", "127.0.0.1:7102", "127.0.0.1:7103"]
        );
        assert_eq!(t.masters[1].slots, [(5461, 10921), (10922, 10922)]);
        assert!(t.masters[1].failing);
        // A failing master's slots are not served.
        assert_eq!(t.covered(), 16384 - 5462);
        assert_eq!(t.node_of(0).unwrap().port, 7101);
        assert_eq!(t.node_of(10922).unwrap().port, 7102);
        assert_eq!(t.node_of(16383).unwrap().port, 7103);
        assert_eq!(
            t.describe(),
            "3 masters, 1 replicas; 127.0.0.1:7101 slots 0-5460 (5461); \
             127.0.0.1:7102 slots 5461-10921,10922 (5462, failing); \
             127.0.0.1:7103 slots 10923-16383 (5461)"
        );
    }

    #[test]
    fn a_cluster_being_made_covers_fewer_slots_and_bad_lines_are_errors() {
        let t = Topology::parse("aa 127.0.0.1:1@2 myself,master - 0 0 0 connected\n").unwrap();
        assert_eq!(t.covered(), 0);
        assert!(t.node_of(5).is_none());
        assert!(Topology::parse("aa 127.0.0.1:1@2 master").is_err());
        assert!(Topology::parse("aa 127.0.0.1:x@2 master - 0 0 0 connected").is_err());
        assert!(Topology::parse("aa 127.0.0.1:1@2 master - 0 0 0 connected 16384").is_err());
        assert!(Topology::parse("").is_err());
    }
}
