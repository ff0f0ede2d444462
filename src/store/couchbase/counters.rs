//! What a Couchbase cluster counts of its own work, read for the cost of a phase (see
//! [`crate::counters`]): each node's Prometheus statistics at `/metrics` on its management
//! port (Couchbase Server 7.0 on), summed over the nodes of `/pools/default`. From them:
//! the CPU time of every Couchbase process on the node by mode
//! (`sysproc_cpu_seconds_total`, 7.2.4 on), and the bucket's bytes written to and read from
//! storage and its storage commits (`kv_ep_io_total_write_bytes_bytes`,
//! `kv_ep_io_total_read_bytes_bytes`, `kv_ep_commit_num` of the Data Service).
//!
//! A commit is the flusher's batch written to storage; the documentation does not say each
//! one is a sync, so commits are reported as what they are, not as syncs. A metric a node
//! does not report is left out (n/a), never zero.

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use super::Target;
use crate::counters::{BYTES_READ, BYTES_WRITTEN, CPU_SYSTEM_US, CPU_USER_US, named};

/// The cluster's counters now: every node's `/metrics` for the target's bucket, summed.
pub async fn read(http: &reqwest::Client, target: &Target) -> Result<BTreeMap<String, u64>> {
    let get = |url: String| {
        http.get(url)
            .basic_auth(&target.user, Some(&target.password))
            .send()
    };
    let pools: serde_json::Value = get(format!("{}/pools/default", target.management))
        .await?
        .error_for_status()?
        .json()
        .await?;
    let mut total = BTreeMap::new();
    for url in metrics_urls(&pools, &target.management)? {
        let text = get(url.clone())
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("{url} (Couchbase Server 7.0 on)"))?
            .text()
            .await?;
        for (name, n) in node_counters(&text, &target.bucket) {
            *total.entry(name).or_insert(0) += n;
        }
    }
    Ok(total)
}

/// One sample of a Prometheus text exposition: the metric's name, its labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<'a> {
    pub name: &'a str,
    pub labels: Vec<(&'a str, String)>,
    pub value: f64,
}

impl Sample<'_> {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find_map(|(n, v)| (*n == name).then_some(v.as_str()))
    }
}

/// The samples of a Prometheus text exposition (`name{label="value",...} value
/// [timestamp]`, `#` lines are comments); a line it cannot read is left out.
pub fn samples(text: &str) -> Vec<Sample<'_>> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(sample)
        .collect()
}

fn sample(line: &str) -> Option<Sample<'_>> {
    let name_end = line.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = &line[..name_end];
    let (labels, rest) = if line[name_end..].starts_with('{') {
        labels(&line[name_end + 1..])?
    } else {
        (Vec::new(), &line[name_end..])
    };
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some(Sample {
        name,
        labels,
        value,
    })
}

/// The labels after a `{`, and what follows the closing `}`.
fn labels(mut text: &str) -> Option<(Vec<(&str, String)>, &str)> {
    let mut labels = Vec::new();
    loop {
        text = text.trim_start_matches([',', ' ']);
        if let Some(rest) = text.strip_prefix('}') {
            return Some((labels, rest));
        }
        let (name, rest) = text.split_once('=')?;
        let mut chars = rest.strip_prefix('"')?.char_indices();
        let mut value = String::new();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        labels.push((name.trim(), value));
        text = &rest[1 + end + 1..];
    }
}

/// The counters of one node's `/metrics` for `bucket`, named with their source.
pub fn node_counters(text: &str, bucket: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    let mut add = |name: String, n: u64| *counts.entry(name).or_insert(0) += n;
    for s in samples(text) {
        if !s.value.is_finite() || s.value < 0.0 {
            continue;
        }
        match s.name {
            "sysproc_cpu_seconds_total" => {
                let figure = match s.label("mode") {
                    Some("user") => CPU_USER_US,
                    Some("sys" | "system") => CPU_SYSTEM_US,
                    _ => continue,
                };
                let mode = s.label("mode").unwrap_or_default();
                add(
                    named(
                        figure,
                        &format!("/metrics sysproc_cpu_seconds_total mode={mode}, every process"),
                    ),
                    (s.value * 1e6).round() as u64,
                );
            }
            "kv_ep_io_total_write_bytes_bytes"
            | "kv_ep_io_total_read_bytes_bytes"
            | "kv_ep_commit_num"
                if s.label("bucket") == Some(bucket) =>
            {
                let figure = match s.name {
                    "kv_ep_io_total_write_bytes_bytes" => BYTES_WRITTEN,
                    "kv_ep_io_total_read_bytes_bytes" => BYTES_READ,
                    _ => "storage commits",
                };
                add(
                    named(figure, &format!("/metrics {} of the bucket", s.name)),
                    s.value.round() as u64,
                );
            }
            _ => {}
        }
    }
    counts
}

/// Where each node's `/metrics` is, from `/pools/default`: the management API the URL
/// names when the cluster has one node (it may be a forward or a balancer), else each
/// node's `hostname` (its management port), on `https` at its `ports.httpsMgmt` when the
/// management API is taken over TLS.
pub fn metrics_urls(pools_default: &serde_json::Value, management: &str) -> Result<Vec<String>> {
    let nodes = pools_default["nodes"]
        .as_array()
        .context("/pools/default lists no nodes")?;
    if nodes.len() <= 1 {
        return Ok(vec![format!("{management}/metrics")]);
    }
    let tls = management.starts_with("https://");
    nodes
        .iter()
        .map(|node| {
            let hostname = node["hostname"]
                .as_str()
                .context("a node of /pools/default has no hostname")?;
            if !tls {
                return Ok(format!("http://{hostname}/metrics"));
            }
            let host = hostname.rsplit_once(':').map_or(hostname, |(host, _)| host);
            let port = node["ports"]["httpsMgmt"]
                .as_u64()
                .with_context(|| format!("node {hostname} has no ports.httpsMgmt"))?;
            Ok(format!("https://{host}:{port}/metrics"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's `/metrics` in the Prometheus text exposition format, with the metrics as
    /// Couchbase's metrics reference names them: `sysproc_cpu_seconds_total` (by `proc`
    /// and `mode`), `kv_ep_io_total_write_bytes_bytes`, `kv_ep_io_total_read_bytes_bytes`
    /// and `kv_ep_commit_num` (by `bucket`), with a second bucket that is not the
    /// benchmark's.
    const NODE: &str = r#"# HELP sysproc_cpu_seconds_total Amount of user CPU cycles used, by process
# TYPE sysproc_cpu_seconds_total counter
sysproc_cpu_seconds_total{mode="user",proc="memcached"} 12.5
sysproc_cpu_seconds_total{mode="sys",proc="memcached"} 3.25
sysproc_cpu_seconds_total{mode="user",proc="ns_server"} 0.5
sysproc_cpu_seconds_total{mode="sys",proc="ns_server"} 0.000001
sysproc_mem_resident{proc="memcached"} 1.2e+08
# TYPE kv_ep_io_total_write_bytes_bytes gauge
kv_ep_io_total_write_bytes_bytes{bucket="bench"} 8.192e+06
kv_ep_io_total_write_bytes_bytes{bucket="other"} 99
kv_ep_io_total_read_bytes_bytes{bucket="bench"} 4096 1700000000000
kv_ep_commit_num{bucket="bench"} 17
kv_ep_commit_num{bucket="we\"ird, name"} 5
"#;

    #[test]
    fn a_nodes_metrics_give_cpu_bytes_and_commits_of_the_bucket() {
        let counts = node_counters(NODE, "bench");
        let get = |name: &str| counts.get(name).copied();
        assert_eq!(
            get("cpu user us (/metrics sysproc_cpu_seconds_total mode=user, every process)"),
            Some(13_000_000)
        );
        assert_eq!(
            get("cpu system us (/metrics sysproc_cpu_seconds_total mode=sys, every process)"),
            Some(3_250_001)
        );
        assert_eq!(
            get("bytes written (/metrics kv_ep_io_total_write_bytes_bytes of the bucket)"),
            Some(8_192_000)
        );
        assert_eq!(
            get("bytes read (/metrics kv_ep_io_total_read_bytes_bytes of the bucket)"),
            Some(4096)
        );
        assert_eq!(
            get("storage commits (/metrics kv_ep_commit_num of the bucket)"),
            Some(17)
        );
        assert_eq!(counts.len(), 5, "{counts:?}");
        // Another bucket's figures are its own.
        let other = node_counters(NODE, "we\"ird, name");
        assert_eq!(
            other["storage commits (/metrics kv_ep_commit_num of the bucket)"],
            5
        );
    }

    #[test]
    fn what_a_node_does_not_report_is_absent() {
        // Couchbase Server 7.0 to 7.2.3 has no sysproc_cpu_seconds_total: no CPU time.
        let older = "kv_ep_io_total_write_bytes_bytes{bucket=\"bench\"} 10\n";
        let counts = node_counters(older, "bench");
        assert_eq!(counts.len(), 1, "{counts:?}");
        assert!(
            counts
                .keys()
                .all(|n| crate::counters::figure_of(n) != CPU_USER_US)
        );
        assert!(node_counters("# nothing\n\nnot a sample\n", "bench").is_empty());
        assert!(node_counters(NODE, "missing").len() == 2, "the CPU only");
    }

    #[test]
    fn samples_are_read_with_their_labels() {
        let read = samples("up 1\nx{a=\"1\",b=\"two words\"} 2.5 123\nbad{a=1} 3\n");
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].name, "up");
        assert_eq!(read[1].label("b"), Some("two words"));
        assert_eq!(read[1].value, 2.5);
    }

    #[test]
    fn every_node_is_read_where_the_cluster_has_several() {
        // `/pools/default` as the REST reference shows it: `nodes`, each with its
        // `hostname` (host and management port) and `ports`.
        let one = serde_json::json!({"nodes": [{"hostname": "10.0.0.1:8091"}]});
        assert_eq!(
            metrics_urls(&one, "http://127.0.0.1:39497").unwrap(),
            ["http://127.0.0.1:39497/metrics"],
            "one node: the management API the URL names"
        );
        let two = serde_json::json!({"nodes": [
            {"hostname": "10.0.0.1:8091", "ports": {"httpsMgmt": 18091}},
            {"hostname": "[fd00::2]:9000", "ports": {"httpsMgmt": 19000}}
        ]});
        assert_eq!(
            metrics_urls(&two, "http://10.0.0.1:8091").unwrap(),
            [
                "http://10.0.0.1:8091/metrics",
                "http://[fd00::2]:9000/metrics"
            ]
        );
        assert_eq!(
            metrics_urls(&two, "https://10.0.0.1:18091").unwrap(),
            [
                "https://10.0.0.1:18091/metrics",
                "https://[fd00::2]:19000/metrics"
            ]
        );
        assert!(metrics_urls(&serde_json::json!({}), "http://h:8091").is_err());
    }
}
