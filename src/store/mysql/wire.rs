//! dbcompare's own MySQL connection, for the classic suite: the client/server protocol's
//! packets written and read by mysql_common's codecs on the stores' own connection core
//! ([`Conn`]: one request at a time, in the task that sends it), as PostgreSQL's own
//! connection does. mysql_async wraps each request in a routine of its own, keeps a
//! statement cache keyed by the query's text and builds a row object of values per row;
//! beside sysbench running the same query, that was about 5,700 instructions of a search's
//! 13,200 (`bench/where.sh`). The driver, pool and YCSB suites keep mysql_async.
//!
//! What it speaks, once [`super::handshake`] has connected it: the text protocol
//! (COM_QUERY) and prepared statements (COM_STMT_PREPARE and COM_STMT_EXECUTE, rows in the
//! binary protocol, read by [`super::binary`]; MariaDB's cached result metadata). Errors
//! keep the server's code, SQL state and message.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use bytes::{Buf, BytesMut};
use mysql_common::constants::{CapabilityFlags, MariadbCapabilities, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    Column, ComStmtExecuteRequestBuilder, CommonOkPacket, ErrPacket, OkPacketDeserializer,
    OldEofPacket, ResultSetTerminator, StmtPacket,
};
use mysql_common::proto::MySerialize;
use mysql_common::value::Value;

use crate::store::conn::{Conn, Decode, Request};

/// A text row: a column's text, `None` for NULL.
pub type TextRow = Vec<Option<String>>;

/// The rows of a text query, with the names of its columns.
#[derive(Debug, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<TextRow>,
}

impl Table {
    /// The first column of the first row, unless NULL.
    pub fn value(self) -> Option<String> {
        self.rows.into_iter().next()?.into_iter().next()?
    }

    /// The rows' first two columns, as name and value (SHOW STATUS).
    pub fn pairs(self) -> Vec<(String, String)> {
        self.rows
            .into_iter()
            .filter_map(|row| {
                let mut row = row.into_iter();
                Some((row.next()??, row.next().flatten().unwrap_or_default()))
            })
            .collect()
    }
}

/// The largest payload of one packet; a longer one goes on in the next.
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// The largest packet the client asks the server to send.
pub(super) const MAX_PACKET: u32 = 64 * 1024 * 1024;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_CLOSE: u8 = 0x19;

/// A statement prepared on the connection.
#[derive(Debug, Clone)]
pub struct Statement {
    id: u32,
    params: u16,
    /// The result's columns, as the server described them at PREPARE.
    pub columns: Arc<[Column]>,
}

/// What an execution that returns no rows did.
pub struct Done {
    pub affected_rows: u64,
}

/// One packet's payload (several joined, when it was longer than one may be), with the
/// sequence number of its last.
#[derive(Debug)]
pub struct Packet {
    pub(super) seq: u8,
    pub(super) body: BytesMut,
}

/// The packets of the protocol, joined where one was split.
#[derive(Default)]
pub(super) struct Packets {
    /// The sequence number the server's next packet must have: a packet out of order is
    /// the connection's end, never read as the answer.
    pub(super) next: u8,
}

impl Decode for Packets {
    type Frame = Packet;
    type Error = anyhow::Error;

    fn decode(&mut self, input: &mut BytesMut) -> Result<Option<Packet>> {
        // The lengths of the pieces, up to and with the first that is not full.
        let (mut at, mut total, mut piece) = (0, 0, 0u8);
        loop {
            let Some(header) = input.get(at..at + 4) else {
                return Ok(None);
            };
            let len =
                usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            let expected = self.next.wrapping_add(piece);
            if header[3] != expected {
                bail!(
                    "a packet out of order (sequence number {} where {expected} was due): the \
                     connection is out of step with the server",
                    header[3]
                );
            }
            if input.len() < at + 4 + len {
                return Ok(None);
            }
            at += 4 + len;
            total += len;
            piece = piece.wrapping_add(1);
            if len < MAX_PAYLOAD {
                break;
            }
        }
        self.next = self.next.wrapping_add(piece);
        let mut pieces = input.split_to(at);
        if at == total + 4 {
            // One piece: its payload as it is.
            let seq = pieces[3];
            pieces.advance(4);
            return Ok(Some(Packet { seq, body: pieces }));
        }
        let mut body = BytesMut::with_capacity(total);
        let mut last_seq = 0;
        while !pieces.is_empty() {
            let len =
                usize::from(pieces[0]) | usize::from(pieces[1]) << 8 | usize::from(pieces[2]) << 16;
            last_seq = pieces[3];
            pieces.advance(4);
            body.extend_from_slice(&pieces.split_to(len));
        }
        Ok(Some(Packet {
            seq: last_seq,
            body,
        }))
    }
}

/// An error the server sent: its code, SQL state and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub code: u16,
    pub state: Option<String>,
    pub message: String,
}

impl std::fmt::Display for ServerError {
    /// As mysql_common and the mysql client show it: `ERROR 1062 (23000): Duplicate entry`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {}", self.code)?;
        if let Some(state) = &self.state {
            write!(f, " ({state})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ServerError {}

/// The error in an ERR packet, read with `capabilities` (none before the handshake's
/// answer: the server then sends no SQL state).
pub(super) fn server_error(body: &[u8], capabilities: CapabilityFlags) -> anyhow::Error {
    match ParseBuf(body).parse::<ErrPacket>(capabilities) {
        Ok(ErrPacket::Error(e)) => anyhow::Error::new(ServerError {
            code: e.error_code(),
            state: e.sql_state_ref().map(|s| s.as_str().into_owned()),
            message: e.message_str().into_owned(),
        }),
        Ok(ErrPacket::Progress(_)) => anyhow!("a progress report where an answer was due"),
        Err(e) => anyhow!(e).context("a malformed error packet"),
    }
}

/// A connection, once its handshake is done ([`super::handshake`]).
pub struct Wire {
    pub(super) conn: Conn<Packets>,
    /// The request's packets (kept: no allocation per request).
    pub(super) out: Vec<u8>,
    /// A request's payload, before it is cut into packets.
    pub(super) payload: Vec<u8>,
    pub(super) capabilities: CapabilityFlags,
    /// MariaDB's own capabilities in use (its cached result metadata).
    pub(super) mariadb: MariadbCapabilities,
}

impl Wire {
    /// Runs `sql` over the text protocol; every row of every result it gave, as text.
    pub async fn query(&mut self, sql: &str) -> Result<Table> {
        self.payload.clear();
        self.payload.push(COM_QUERY);
        self.payload.extend_from_slice(sql.as_bytes());
        let mut table = Table::default();
        let Table { columns, rows } = &mut table;
        self.exchange(Definitions::Names(columns), |body| {
            rows.push(text_row(body)?);
            Ok(())
        })
        .await
        .with_context(|| format!("running {}", first_words(sql)))?;
        Ok(table)
    }

    /// Prepares `sql`.
    pub async fn prepare(&mut self, sql: &str) -> Result<Statement> {
        self.payload.clear();
        self.payload.push(COM_STMT_PREPARE);
        self.payload.extend_from_slice(sql.as_bytes());
        let capabilities = self.capabilities;
        let mut request = self.conn.begin()?;
        let read = async {
            send(&mut request, &self.payload, &mut self.out).await?;
            let first = request.next().await?;
            if first.body.first() == Some(&0xFF) {
                return Ok(Err(server_error(&first.body, capabilities)));
            }
            let ok = ParseBuf(&first.body)
                .parse::<StmtPacket>(())
                .context("a malformed answer to PREPARE")?;
            let eof = !capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF);
            let mut columns = Vec::with_capacity(usize::from(ok.num_columns()));
            for (n, keep) in [(ok.num_params(), false), (ok.num_columns(), true)] {
                for _ in 0..n {
                    let packet = request.next().await?;
                    if keep {
                        columns.push(
                            ParseBuf(&packet.body)
                                .parse::<Column>(())
                                .context("a malformed column definition")?,
                        );
                    }
                }
                if n > 0 && eof {
                    request.next().await?;
                }
            }
            Ok(Ok(Statement {
                id: ok.statement_id(),
                params: ok.num_params(),
                columns: columns.into(),
            }))
        };
        let read = read.await;
        request
            .finish(read)?
            .with_context(|| format!("preparing {}", first_words(sql)))
    }

    /// Executes `statement` with `params`; each row it returns goes to `row`, in the binary
    /// protocol. What it did, when it returned no rows.
    pub async fn execute(
        &mut self,
        statement: &Statement,
        params: &[Value],
        row: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<Option<Done>> {
        if params.len() != usize::from(statement.params) {
            bail!(
                "{} parameters given for a statement of {}",
                params.len(),
                statement.params
            );
        }
        let (request, long) = ComStmtExecuteRequestBuilder::new(statement.id).build(params);
        if long {
            bail!("the parameters are longer than one packet may be");
        }
        self.payload.clear();
        request.serialize(&mut self.payload);
        self.exchange(Definitions::Check(&statement.columns), row)
            .await
    }

    /// Closes `statement` on the server (COM_STMT_CLOSE, which has no answer).
    pub async fn close_statement(&mut self, statement: Statement) -> Result<()> {
        self.payload.clear();
        self.payload.push(COM_STMT_CLOSE);
        self.payload.extend_from_slice(&statement.id.to_le_bytes());
        let mut request = self.conn.begin()?;
        let sent = send(&mut request, &self.payload, &mut self.out).await;
        request.finish(sent)
    }

    /// Says goodbye (COM_QUIT) and closes the socket.
    pub async fn close(mut self) -> Result<()> {
        self.out.clear();
        frame(&[COM_QUIT], 0, &mut self.out);
        self.conn.close(&self.out).await
    }

    /// Sends the payload and reads its answer to its end: an OK (returned), or the rows of
    /// every result, each to `row`. The first error the server sent is the result, once
    /// the answer is read: the connection stays usable.
    async fn exchange(
        &mut self,
        mut definitions: Definitions<'_>,
        mut row: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<Option<Done>> {
        let (capabilities, mariadb) = (self.capabilities, self.mariadb);
        let mut request = self.conn.begin()?;
        let read = async {
            send(&mut request, &self.payload, &mut self.out).await?;
            let mut failed: Option<anyhow::Error> = None;
            loop {
                let first = request.next().await?;
                let status = match first.body.first() {
                    Some(0x00) => {
                        let ok = ParseBuf(&first.body)
                            .parse::<OkPacketDeserializer<CommonOkPacket>>(capabilities)
                            .context("a malformed OK packet")?
                            .into_inner();
                        if !ok
                            .status_flags()
                            .contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS)
                        {
                            return Ok(failed.map_or(
                                Ok(Some(Done {
                                    affected_rows: ok.affected_rows(),
                                })),
                                Err,
                            ));
                        }
                        continue;
                    }
                    Some(0xFF) => return Ok(Err(server_error(&first.body, capabilities))),
                    Some(0xFB) => {
                        bail!("the server asks for a local file, which dbcompare never sends")
                    }
                    _ => {
                        let definitions = definitions.reborrow();
                        let (at, on) = (&first, (capabilities, mariadb));
                        read_result(&mut request, at, on, definitions, |body| {
                            if failed.is_none()
                                && let Err(e) = row(body)
                            {
                                failed = Some(e);
                            }
                        })
                        .await?
                    }
                };
                match status {
                    Err(e) => return Ok(Err(e)),
                    Ok(flags) if flags.contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS) => {}
                    Ok(_) => return Ok(failed.map_or(Ok(None), Err)),
                }
            }
        };
        let read = read.await;
        // The outer error is the connection's (it can no longer be used), the inner one
        // the request's.
        request.finish(read)?
    }
}

/// The first words of a statement, to name it in an error.
fn first_words(sql: &str) -> String {
    let words: Vec<&str> = sql.split_whitespace().take(4).collect();
    words.join(" ")
}

/// Cuts `payload` into packets from sequence number `seq` on, into `out`; the next
/// sequence number.
pub(super) fn frame(payload: &[u8], mut seq: u8, out: &mut Vec<u8>) -> u8 {
    let mut pieces = payload.chunks(MAX_PAYLOAD).peekable();
    loop {
        let piece = pieces.next().unwrap_or_default();
        let len = piece.len() as u32;
        out.extend_from_slice(&len.to_le_bytes()[..3]);
        out.push(seq);
        out.extend_from_slice(piece);
        seq = seq.wrapping_add(1);
        // A payload of whole pieces ends with an empty one.
        if pieces.peek().is_none() && piece.len() < MAX_PAYLOAD {
            return seq;
        }
    }
}

/// Sends a command's `payload` as a new exchange (sequence numbers from 0).
async fn send(request: &mut Request<'_, Packets>, payload: &[u8], out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    request.decoder_mut().next = frame(payload, 0, out);
    match request.send(out).await {
        Ok(()) => Ok(()),
        Err(e) => Err(last_words(request, e).await),
    }
}

/// Why the server ended the connection, when a request could not be sent: the error it
/// sent before closing, if it is still to be read (waiting a moment for it), else `e`.
async fn last_words(request: &mut Request<'_, Packets>, e: anyhow::Error) -> anyhow::Error {
    let said = request.leftover(Duration::from_millis(500), |packet| {
        (packet.body.first() == Some(&0xFF))
            .then(|| server_error(&packet.body, CapabilityFlags::CLIENT_PROTOCOL_41))
    });
    match said.await {
        Some(error) => error.context("the server ended the connection"),
        None => e,
    }
}

/// Whether `body` ends a result set (an EOF packet, or an OK packet in its place).
fn terminates(body: &[u8]) -> bool {
    body.first() == Some(&0xFE) && body.len() < MAX_PAYLOAD
}

/// What a result's column definitions are read for.
enum Definitions<'a> {
    /// A text query's: the first result's names, kept.
    Names(&'a mut Vec<String>),
    /// A prepared statement's: the types PREPARE gave, which its rows are decoded by.
    Check(&'a [Column]),
}

impl Definitions<'_> {
    fn reborrow(&mut self) -> Definitions<'_> {
        match self {
            Definitions::Names(names) => Definitions::Names(names),
            Definitions::Check(columns) => Definitions::Check(columns),
        }
    }
}

/// Reads a result set whose first packet (its column count) is `first`: its column
/// definitions (unless the server skips them), then each row to `row`, up to its end.
/// The status flags that ended it, or the error the server sent in its middle; a prepared
/// statement's result whose columns are not those PREPARE gave is an error, its rows left
/// unread by `row`.
async fn read_result(
    request: &mut Request<'_, Packets>,
    first: &Packet,
    (capabilities, mariadb): (CapabilityFlags, MariadbCapabilities),
    mut definitions: Definitions<'_>,
    mut row: impl FnMut(&[u8]),
) -> Result<Result<StatusFlags>> {
    let mut head = ParseBuf(&first.body);
    let count = head
        .checked_eat_lenenc_int()
        .context("a malformed column count")?;
    let mut changed = match &definitions {
        Definitions::Check(columns) => count != columns.len() as u64,
        Definitions::Names(_) => false,
    };
    // MariaDB's cached metadata: a byte says whether the definitions follow.
    let sent = !(mariadb.contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA)
        && head.0.first() == Some(&0x00));
    let eof = !capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF);
    if sent {
        let keep_names = matches!(&definitions, Definitions::Names(names) if names.is_empty());
        for i in 0..count {
            let packet = request.next().await?;
            let column = || {
                ParseBuf(&packet.body)
                    .parse::<Column>(())
                    .context("a malformed column definition")
            };
            match &mut definitions {
                Definitions::Names(names) if keep_names => {
                    names.push(column()?.name_str().into_owned());
                }
                Definitions::Names(_) => {}
                Definitions::Check(columns) => {
                    let sent = column()?.column_type();
                    let prepared = usize::try_from(i).ok().and_then(|i| columns.get(i));
                    if prepared.is_none_or(|c| c.column_type() != sent) {
                        changed = true;
                    }
                }
            }
        }
        if eof {
            request.next().await?;
        }
    }
    loop {
        let packet = request.next().await?;
        match packet.body.first() {
            Some(0xFF) => return Ok(Err(server_error(&packet.body, capabilities))),
            _ if terminates(&packet.body) => {
                let mut end = ParseBuf(&packet.body);
                let ok = if eof {
                    end.parse::<OkPacketDeserializer<OldEofPacket>>(capabilities)
                        .map(OkPacketDeserializer::into_inner)
                } else {
                    end.parse::<OkPacketDeserializer<ResultSetTerminator>>(capabilities)
                        .map(OkPacketDeserializer::into_inner)
                };
                let flags = ok.context("a malformed end of a result")?.status_flags();
                if changed {
                    return Ok(Err(anyhow!(
                        "the result's columns are not those the statement was prepared with \
                         (the table changed): prepare it again"
                    )));
                }
                return Ok(Ok(flags));
            }
            _ if changed => {}
            _ => row(&packet.body),
        }
    }
}

/// A row of the text protocol.
fn text_row(body: &[u8]) -> Result<TextRow> {
    let mut buf = ParseBuf(body);
    let mut row = Vec::new();
    while !buf.is_empty() {
        if buf.0[0] == 0xFB {
            buf.skip(1);
            row.push(None);
            continue;
        }
        let text = buf.checked_eat_lenenc_str().context("a malformed row")?;
        row.push(Some(String::from_utf8_lossy(text).into_owned()));
    }
    Ok(row)
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
