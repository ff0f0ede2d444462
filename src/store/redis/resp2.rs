//! Redis's replies (RESP2) as the redis crate's values, with one parser: redis-protocol's.
//! A reply whole in the bytes read so far is decoded and taken off them; one whose end is
//! still to come is left whole until more bytes are there. The values are the ones the
//! crate's own parser makes, which the rest of the store reads (`query_async`,
//! `FromRedisValue`); a property test holds them to it.

use bytes::{Buf, BytesMut};
use redis::{ErrorKind, RedisError, RedisResult, ServerError, Value};
use redis_protocol::resp2::types::RangeFrame;

use crate::store::conn::Decode;

/// The decoder of a connection's replies.
pub(super) struct Resp2;

impl Decode for Resp2 {
    type Frame = Value;
    type Error = RedisError;

    fn decode(&mut self, input: &mut BytesMut) -> RedisResult<Option<Value>> {
        let decoded = redis_protocol::resp2::decode::decode_range(input).map_err(|e| {
            RedisError::from((ErrorKind::Parse, "a malformed reply", e.to_string()))
        })?;
        let Some((frame, used)) = decoded else {
            return Ok(None);
        };
        let value = value_of(input, &frame)?;
        input.advance(used);
        Ok(Some(value))
    }
}

/// The crate's value of the reply `frame` (whose ranges are into `input`).
fn value_of(input: &[u8], frame: &RangeFrame) -> RedisResult<Value> {
    Ok(match frame {
        RangeFrame::SimpleString((start, end)) => match text(&input[*start..*end])? {
            "OK" => Value::Okay,
            line => Value::SimpleString(line.to_string()),
        },
        // The line as the server sent it: `-`, the error, CRLF.
        RangeFrame::Error((start, end)) => {
            Value::ServerError(server_error(&input[start - 1..end + 2])?)
        }
        RangeFrame::Integer(i) => Value::Int(*i),
        RangeFrame::BulkString((start, end)) => Value::BulkString(input[*start..*end].to_vec()),
        RangeFrame::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| value_of(input, item))
                .collect::<RedisResult<_>>()?,
        ),
        RangeFrame::Null => Value::Nil,
    })
}

/// A line of the protocol as text (the crate refuses a line that is not UTF-8).
fn text(line: &[u8]) -> RedisResult<&str> {
    std::str::from_utf8(line)
        .map_err(|e| RedisError::from((ErrorKind::Parse, "a malformed reply", e.to_string())))
}

/// The crate's error of an error reply's `line` (`-ERR ...` and its CRLF): its kind read
/// from the code (`ERR`, `MOVED`, `WRONGTYPE`, ...) as the crate reads it. The crate makes
/// its errors of known kinds only from a reply's bytes, so the line is handed to its
/// public `parse_redis_value`; only error replies take this way.
fn server_error(line: &[u8]) -> RedisResult<ServerError> {
    text(line)?;
    match redis::parse_redis_value(line)? {
        Value::ServerError(e) => Ok(e),
        _ => Err(RedisError::from((
            ErrorKind::Parse,
            "a malformed reply",
            "an error reply that is not one".to_string(),
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A RESP2 reply as the server writes it.
    fn resp2() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let line = "[ -~]{0,12}";
        let leaf = prop_oneof![
            line.prop_map(|s| format!("+{s}\r\n").into_bytes()),
            Just(b"+OK\r\n".to_vec()),
            "(ERR|WRONGTYPE|MOVED) [ -~]{0,12}".prop_map(|s| format!("-{s}\r\n").into_bytes()),
            any::<i64>().prop_map(|i| format!(":{i}\r\n").into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..300).prop_map(|b| {
                let mut out = format!("${}\r\n", b.len()).into_bytes();
                out.extend_from_slice(&b);
                out.extend_from_slice(b"\r\n");
                out
            }),
            Just(b"$-1\r\n".to_vec()),
            Just(b"*-1\r\n".to_vec()),
        ];
        leaf.prop_recursive(3, 40, 6, |inner| {
            proptest::collection::vec(inner, 0..6).prop_map(|items| {
                let mut out = format!("*{}\r\n", items.len()).into_bytes();
                items.iter().for_each(|i| out.extend_from_slice(i));
                out
            })
        })
    }

    proptest::proptest! {
        /// Every RESP2 reply is the value the crate's parser makes.
        #[test]
        fn replies_are_the_values_the_crate_parses(reply in resp2()) {
            let mut input = BytesMut::from(&reply[..]);
            input.extend_from_slice(b"+next\r\n");
            let ours = Resp2.decode(&mut input).unwrap().unwrap();
            proptest::prop_assert_eq!(ours, redis::parse_redis_value(&reply).unwrap());
            // The reply is taken off, and nothing more.
            proptest::prop_assert_eq!(&input[..], b"+next\r\n");
            // Any proper prefix is incomplete, not a shorter reply, and stays to be read.
            let cut = reply.len() / 2;
            let mut part = BytesMut::from(&reply[..cut]);
            proptest::prop_assert!(Resp2.decode(&mut part).unwrap().is_none());
            proptest::prop_assert_eq!(&part[..], &reply[..cut]);
        }
    }
}
