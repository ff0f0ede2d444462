//! The connection a Redis store drives: one server's direct connection ([`Direct`]), or the
//! cluster client's, which routes each command to the master of its key's slot. Both answer
//! the same commands (`query_async(&mut conn)`); what a cluster needs besides is sent to one
//! master by address ([`Conn::on`]).

use redis::aio::ConnectionLike;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, FromRedisValue, Pipeline, RedisFuture, RedisResult, Value};

use super::cluster::Node;
use super::direct::Direct;

pub(super) enum Conn {
    One(Box<Direct>),
    Cluster(ClusterConnection),
}

impl Conn {
    /// `cmd.query_async(self)`, without boxing the request's future on one server.
    pub(super) async fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> RedisResult<T> {
        match self {
            Conn::One(c) => Ok(redis::from_redis_value(
                c.request(cmd).await?.extract_error()?,
            )?),
            Conn::Cluster(_) => cmd.query_async(self).await,
        }
    }

    /// Runs `cmd` on one master of the cluster (on the one server otherwise).
    pub(super) async fn on<T: FromRedisValue>(
        &mut self,
        node: Option<&Node>,
        cmd: &Cmd,
    ) -> RedisResult<T> {
        match (self, node) {
            (Conn::Cluster(c), Some(node)) => {
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                    host: node.host.clone(),
                    port: node.port,
                });
                let value = c.route_command(cmd.clone(), routing).await?;
                redis::from_redis_value(value).map_err(Into::into)
            }
            (conn, _) => conn.query(cmd).await,
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::One(c) => c.as_mut().req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::One(c) => c.as_mut().req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::One(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}
