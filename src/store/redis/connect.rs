//! How a Redis store is opened: its URL checked and read (`cacert`, a cluster's seeds, TLS),
//! and a connection made to the one server (dbcompare's own, [`super::direct`]) or to the
//! cluster (the crate's cluster client).

use anyhow::{Context, Result, bail};

use super::cluster;
use super::conn::Conn;
use super::keys::KeyBuffers;
use super::{RedisStore, direct, topology};
use crate::catalog::StoreKind;
use crate::store::tls::{self, Tls, Verify};
use crate::store::{Adapter, ConnectSpec};

impl Adapter for RedisStore {
    type DriverSuites = Self;

    /// Checks a URL the way the driver will read it.
    fn check_url(raw: &str) -> Result<()> {
        let (raw, [ca]) = tls::take_query(raw, ["cacert"])?;
        let nodes = node_urls(&raw)?;
        tls_of(&nodes[0], ca.as_deref())?;
        for node in nodes {
            let info = redis::IntoConnectionInfo::into_connection_info(node.as_str())?;
            if info.redis_settings().protocol().supports_resp3() {
                bail!(
                    "protocol=resp3 is not supported: dbcompare reads Redis's replies as RESP2 \
                     (CONFIG GET and INFO answer other types under RESP3); leave protocol out"
                );
            }
        }
        Ok(())
    }

    async fn connect(spec: &ConnectSpec) -> Result<Self> {
        let url = spec.server_url(StoreKind::Redis)?;
        // dbcompare's `cacert=FILE` (redis-cli's `--cacert`): the CA to verify the server
        // with, which the driver's URL lacks.
        let (raw, [ca]) = tls::take_query(url.expose(), ["cacert"])?;
        let cluster = raw
            .split_once("://")
            .is_some_and(|(s, _)| s.ends_with("+cluster"));
        let nodes = node_urls(&raw)?;
        let tls = tls_of(&nodes[0], ca.as_deref())?;
        // TCP_NODELAY, as the other stores' drivers and redis-benchmark set it (this
        // driver's default leaves Nagle's algorithm on).
        let infos = nodes
            .iter()
            .map(|node| {
                let info = redis::IntoConnectionInfo::into_connection_info(node.as_str())?;
                let tcp = info.tcp_settings().clone().set_nodelay(true);
                Ok(info.set_tcp_settings(tcp))
            })
            .collect::<Result<Vec<_>>>()?;
        let certificates = match &tls {
            Some(Tls { ca: Some(ca), .. }) => {
                let root_cert = std::fs::read(ca)
                    .with_context(|| format!("reading the CA file {}", ca.display()))?;
                tls::certificates(ca)?;
                Some(redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(root_cert),
                })
            }
            _ => None,
        };
        // The driver builds its TLS configuration with the process's provider.
        tls::provider();
        let mut conn = if cluster {
            let nodelay = infos
                .first()
                .map(|i| i.tcp_settings().clone())
                .unwrap_or_default();
            // The nodes it discovers get the builder's TCP settings, not the seeds'.
            let mut builder = redis::cluster::ClusterClientBuilder::new(infos)
                .tcp_settings(nodelay)
                .connection_timeout(spec.connect_timeout)
                // A few quick retries (a redirect is one): the driver's default of 16, with
                // waits growing to minutes, would hide a dead node for that long.
                .retries(3)
                .min_retry_wait(50)
                .max_retry_wait(500);
            if let Some(certificates) = certificates {
                builder = builder.certs(certificates);
            }
            Conn::Cluster(builder.build()?.get_async_connection().await?)
        } else {
            let info = infos.into_iter().next().context("no server in the URL")?;
            // No timer per command (the redis crate's multiplexed connection arms one on
            // every request by default): a stalled server is left to Ctrl-C, as for the
            // other stores' drivers.
            let direct = direct::Direct::connect(&info, tls.as_ref(), spec.connect_timeout).await?;
            Conn::One(Box::new(direct))
        };
        redis::cmd("PING").query_async::<()>(&mut conn).await?;
        let topology = if cluster {
            let topology = topology(&mut conn).await?;
            if topology.covered() != u32::from(cluster::SLOTS) {
                bail!(
                    "the cluster serves {} of its {} slots: {}",
                    topology.covered(),
                    cluster::SLOTS,
                    topology.describe()
                );
            }
            Some(topology)
        } else {
            None
        };
        Ok(RedisStore {
            conn,
            cluster: topology,
            driver_keys: false,
            ycsb: None,
            data_dir: spec.data_dir.clone(),
            tls,
            keys: KeyBuffers::default(),
        })
    }
}

/// The URL of every node a Redis URL names: itself, or each seed of a cluster URL
/// (`redis+cluster://:pw@h1:7000,h2:7001/` gives `redis://:pw@h1:7000/` and
/// `redis://:pw@h2:7001/`).
fn node_urls(raw: &str) -> Result<Vec<String>> {
    let Some((scheme, rest)) = raw.split_once("://") else {
        bail!("no scheme");
    };
    let Some(plain) = scheme.strip_suffix("+cluster") else {
        return Ok(vec![raw.to_string()]);
    };
    Ok(crate::store::url::HostList::of(&format!("{plain}://{rest}")).urls())
}

/// The TLS a Redis URL asks for: `rediss://`, verified unless `#insecure`.
fn tls_of(raw: &str, ca: Option<&str>) -> Result<Option<Tls>> {
    let url = url::Url::parse(raw)?;
    if url.scheme() != "rediss" {
        if ca.is_some() {
            bail!("cacert is given for a plain redis:// URL: use rediss://");
        }
        return Ok(None);
    }
    let verify = if url.fragment() == Some("insecure") {
        Verify::Nothing
    } else {
        Verify::Full
    };
    Ok(Some(Tls {
        verify,
        ca: ca.map(std::path::PathBuf::from),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_as_the_store_reads_them() {
        RedisStore::check_url("redis://:pw@127.0.0.1:6379/2").unwrap();
        RedisStore::check_url("redis+cluster://:pw@127.0.0.1:7000,127.0.0.1:7001/").unwrap();
        for resp3 in [
            "redis://127.0.0.1:6379/?protocol=resp3",
            "redis+cluster://127.0.0.1:7000,127.0.0.1:7001/?protocol=resp3",
        ] {
            let e = RedisStore::check_url(resp3).unwrap_err().to_string();
            assert!(
                e.contains("protocol=resp3 is not supported"),
                "{resp3}: {e}"
            );
        }
        assert!(RedisStore::check_url("redis://127.0.0.1:notaport/").is_err());
    }
}
