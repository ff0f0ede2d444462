//! The command line (clap derive). Parsing does no I/O; [`crate::plan`] resolves it.

use std::num::NonZeroU64;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::catalog::Suite;
use crate::catalog::{Durability, StoreOptions};
use crate::workload::levels::Concurrency;
use crate::workload::record::{DEFAULT_SEED, Size};

mod values;
pub use values::{StoreSelector, parse_positive, parse_store};
use values::{
    parse_alpha, parse_count, parse_percent, parse_scale, parse_server_store, parse_time,
};

/// Benchmark key/document stores side by side on the same workload and publish the tables.
///
/// With no subcommand, runs `run` (by default every store that can run here, classic suite).
#[derive(Debug, Parser)]
#[command(name = "dbcompare", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,
}

// `run`'s arguments are most of the enum's size; a command line is parsed once.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a suite against one or more stores (the default).
    Run(RunArgs),
    /// List every store: whether it can run here, and how (embedded, local server, URL).
    List(ListArgs),
    /// Check each store's setup without benchmarking it: how it would run, whether it
    /// answers, its settings read back against configs/, the privileges the suites need,
    /// and what fixes each problem. Exit 0 when every checked store is ready, 1 otherwise.
    Check(CheckArgs),
    /// Start a throw-away server of a store with the settings in configs/, print its URL,
    /// and keep it until Ctrl-C (then stop it and delete its directory). For running other
    /// tools against the same server (bench/peers.sh).
    Server(ServerCommandArgs),
    /// Re-render a saved run (its run.json) without touching any database: the markdown
    /// report, the HTML report, CSV, JSON, the SVG charts or the console's recap.
    Report(ReportArgs),
    /// Compare two saved runs: per store and phase, the change in throughput, p50 and p99
    /// with its confidence interval and a Welch t-test verdict; the differences between the
    /// runs' plans, versions, settings and machines first.
    Compare(CompareArgs),
    /// Merge the run.json files of N load clients (`run --client K/N`, one --start-at) into
    /// one run: counts added, latency histograms merged exactly, time series added from the
    /// common start; every output written to --out. Shares of different runs, a missing
    /// share or one given twice are refused.
    Merge(MergeArgs),
    /// Print the JSON Schema of run.json (the file schema/run.schema.json holds).
    Schema,
    /// Stop the throw-away servers and delete the directories that a killed dbcompare left
    /// behind (every run does this first too). Only directories marked as dbcompare's whose
    /// dbcompare process is gone are touched.
    Clean(CleanArgs),
}

/// Arguments of `dbcompare merge`.
#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Every client's run.json, in any order.
    #[arg(value_name = "RUN.json", required = true)]
    pub runs: Vec<PathBuf>,

    /// Write the merged run's files here (created if needed).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
}

/// Arguments of `dbcompare clean`.
#[derive(Debug, Clone, Args)]
pub struct CleanArgs {
    /// Where the killed run kept its data (its `--data-dir`), besides the system's
    /// temporary directory.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
}

/// An output `dbcompare report` renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// results.md: the blog-style report with its tables (and charts, with --out).
    Md,
    /// report.html: one self-contained page with every table and chart.
    Html,
    /// results.csv: one row per store, suite, phase and concurrency; units in the header.
    Csv,
    /// run.json, rewritten in this dbcompare's layout.
    Json,
    /// The SVG charts (needs --out: one file per chart).
    Svg,
    /// The console's recap tables.
    Text,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The run to render: a run.json that dbcompare wrote.
    #[arg(value_name = "RUN.json")]
    pub run: PathBuf,

    /// What to render: a comma list. Without --out, one format, printed (default md);
    /// with --out, the files of each (default all of them).
    #[arg(long, value_enum, ignore_case = true, value_delimiter = ',')]
    pub format: Vec<ReportFormat>,

    /// Write the files here (created if needed) instead of printing.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// The time series instead of the results' CSV (one row per store, phase, run and
    /// interval), as `series.csv` with --out; alone, it is `--format csv --series`.
    #[arg(long)]
    pub series: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The run compared against (a run.json).
    #[arg(value_name = "BASE.json")]
    pub base: PathBuf,

    /// The run being judged (a run.json).
    #[arg(value_name = "NEW.json")]
    pub new: PathBuf,

    /// Exit 1 when any figure got significantly worse by more than PCT percent (throughput
    /// down; p50 or p99 latency, the server's CPU or bytes written per operation up), when
    /// a throughput or latency could not be judged (fewer than 3 runs on a side), or when
    /// the new run lacks a store or phase the base measured: for a driver's CI.
    #[arg(long, value_name = "PCT", value_parser = parse_percent, allow_negative_numbers = true)]
    pub fail_if_slower: Option<f64>,

    /// Significance level of the t-test (a change is significant when p < ALPHA).
    #[arg(long, value_name = "ALPHA", default_value = "0.05", value_parser = parse_alpha, allow_negative_numbers = true)]
    pub alpha: f64,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Stores to check: a comma list of names, or `all` (every store; those that cannot run
    /// here are listed with what would make them run). A variant is NAME@LABEL, as `run`
    /// takes it.
    #[arg(long = "store", value_name = "STORES", value_delimiter = ',', default_value = "all", value_parser = parse_store)]
    pub stores: Vec<StoreSelector>,

    /// The durability modes the settings are checked against: `durable,relaxed` checks
    /// every store as two variants, @durable and @relaxed, as `run` does.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        value_delimiter = ',',
        default_value = "durable"
    )]
    pub durability: Vec<Durability>,

    /// Seconds a connect may take before that store fails.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_positive, allow_negative_numbers = true)]
    pub connect_timeout: NonZeroU64,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten, next_help_heading = "Options of one store")]
    pub options: StoreOptions,
}

#[derive(Debug, Clone, Args)]
pub struct ServerCommandArgs {
    /// postgres, mysql, redis or redis-cluster.
    #[arg(value_parser = parse_server_store)]
    pub store: StoreSelector,

    /// Whether the server acknowledges a commit before or after it is on disk.
    #[arg(long, value_enum, ignore_case = true, default_value_t)]
    pub durability: Durability,

    #[command(flatten)]
    pub serve: ServeArgs,
}

/// How the throw-away servers serve.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Start the throw-away servers serving TLS only, each with a certificate made for it
    /// that the client verifies (host name included): to measure what TLS costs. A --url
    /// server uses TLS as its URL says.
    #[arg(long)]
    pub tls: bool,

    /// The masters of the throw-away Redis Cluster (the redis-cluster store), on free
    /// 127.0.0.1 ports, no replicas.
    #[arg(long, value_name = "N", default_value_t = crate::server::CLUSTER_MASTERS,
          value_parser = clap::value_parser!(u16).range(3..=64))]
    pub redis_cluster_masters: u16,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            tls: false,
            redis_cluster_masters: crate::server::CLUSTER_MASTERS,
        }
    }
}

impl ServeArgs {
    pub fn serve(&self) -> crate::server::Serve {
        crate::server::Serve {
            tls: self.tls,
            cluster_masters: self.redis_cluster_masters,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Stores to run: a comma list of names, or `all` (every store that can run here). A
    /// store may run more than once as variants under labels, NAME@LABEL
    /// (`postgres@sync,postgres@async`), each with its own --url, --config and --set; the
    /// variants of one store run interleaved, run by run.
    #[arg(long = "store", value_name = "STORES", value_delimiter = ',', default_value = "all", value_parser = parse_store)]
    pub stores: Vec<StoreSelector>,

    /// The suite to run.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Suite::Classic)]
    pub suite: Suite,

    /// Workload sizes, in order: names (micro=100, tiny=1000, small=10000, medium=100000)
    /// or numbers of records.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "micro,tiny,small",
        allow_hyphen_values = true
    )]
    pub sizes: Vec<Size>,

    /// Searches per inserted record (the blog's 40).
    #[arg(long, value_name = "N", default_value = "40", value_parser = parse_positive, allow_negative_numbers = true)]
    pub searches_per_insert: NonZeroU64,

    /// YCSB suite: the core workloads to run, in order, after the load (YCSB's recommended
    /// order by default: a,b,c,f,d,e; e's scans need ordered keys).
    #[arg(long = "workload", value_name = "LETTERS", value_delimiter = ',')]
    pub workloads: Option<Vec<String>>,

    /// YCSB suite: a workload file in YCSB's property format, run after `--workload`'s
    /// (alone when `--workload` is not given). Repeatable.
    #[arg(long = "workload-file", value_name = "PATH")]
    pub workload_files: Vec<PathBuf>,

    /// YCSB suite: a property set on top of every workload, as YCSB's `-p` (for example
    /// `-p recordcount=100000 -p operationcount=100000`). Repeatable.
    #[arg(long = "property", short = 'p', value_name = "KEY=VALUE")]
    pub properties: Vec<String>,

    /// Driver suite: multiplies the Go SQL driver benchmark's iteration counts (1 = its
    /// 250,000 / 50,000 / 500,000).
    #[arg(long, value_name = "FACTOR", default_value = "0.1", value_parser = parse_scale, allow_negative_numbers = true)]
    pub scale: f64,

    /// Runs of the whole suite made first and discarded (warming caches and connections).
    #[arg(
        long,
        value_parser = parse_count::<u32>,
        value_name = "N",
        default_value = "1",
        allow_negative_numbers = true
    )]
    pub warmup_runs: u32,

    /// Measured runs of the whole suite; every figure is their median (with min and max).
    #[arg(long, value_name = "K", default_value = "3", value_parser = parse_positive, allow_negative_numbers = true)]
    pub runs: NonZeroU64,

    /// Concurrency levels of the search phases, the YCSB workloads and the pool tests: a
    /// comma list of task counts, each task on its own connection (the classic suite's
    /// inserts stay on one connection, as in the blog; the driver suite's tests run at their
    /// own).
    #[arg(
        long,
        value_name = "LEVELS",
        value_delimiter = ',',
        default_value = "1",
        allow_negative_numbers = true
    )]
    pub concurrency: Vec<Concurrency>,

    /// Client threads for every store, each running one event loop that drives its own
    /// connections (connection i on loop i mod N, no work stealing). By default each store's
    /// own: one per core, up to the concurrency, for a store that serves each connection on a
    /// thread of its own (SQLite, PostgreSQL, MySQL, MongoDB), one for Redis, Aerospike and
    /// Couchbase, whose servers are event loops that need the cores. The pool suite runs on
    /// one loop, as the asyncmy suite's client does (more is refused there).
    #[arg(long, value_name = "N", value_parser = parse_positive, allow_negative_numbers = true)]
    pub client_threads: Option<NonZeroU64>,

    /// Open loop (classic and YCSB suites): issue searches (YCSB: operations) on a fixed
    /// schedule of OPS per second over all tasks, and time each from when it was due, so
    /// stalls are not hidden.
    #[arg(long, value_name = "OPS", value_parser = parse_positive, allow_negative_numbers = true)]
    pub rate: Option<NonZeroU64>,

    /// Classic suite: an operation that fails (a dropped connection, a server restarted)
    /// may be made again on a new connection, up to N times, after a wait of 50 ms doubling
    /// to 1.6 s. Every retry is counted and shown beside its phase; its time stays in the
    /// operation's latency. By default an error fails the phase at once.
    #[arg(
        long,
        value_parser = parse_count::<u32>,
        value_name = "N",
        default_value = "0",
        allow_negative_numbers = true
    )]
    pub retries: u32,

    /// Classic or YCSB suite, one of several load clients on the same --url servers: do the
    /// K-th of N shares of the work (classic: every N-th record to insert and search, from
    /// the K-th, with the same seed; YCSB: every N-th record of the load and a share of
    /// every run's operations, drawn from the seed varied per client). Client 1 resets the
    /// store and measures its sizes; the clients meet before every phase through the store
    /// itself. `dbcompare merge` makes one run of the N run.json files.
    #[arg(
        long,
        value_name = "K/N",
        requires = "start_at",
        allow_hyphen_values = true
    )]
    pub client: Option<crate::workload::share::Share>,

    /// With --client: when the clients begin, the same time for all of them (RFC 3339, for
    /// example 2026-12-02T03:00:00Z, or Unix seconds); it also names the coordinated run, so
    /// give each run a new one.
    #[arg(long, value_name = "TIME", requires = "client", value_parser = parse_time)]
    pub start_at: Option<chrono::DateTime<chrono::Utc>>,

    /// With --client: seconds a client waits for the others at a meeting point (a slower
    /// machine still finishing the phase before); 0 waits for ever.
    #[arg(
        long,
        value_parser = parse_count::<u64>,
        value_name = "SECONDS",
        default_value = "3600",
        requires = "client",
        allow_negative_numbers = true
    )]
    pub meet_timeout: u64,

    /// Seed of the record and search generator (the same seed gives the same workload
    /// everywhere).
    #[arg(long, value_parser = parse_count::<u64>, default_value_t = DEFAULT_SEED,
          allow_negative_numbers = true)]
    pub seed: u64,

    /// Directory for run.json, results.md, report.html, results.csv, series.csv and the
    /// charts (created if needed).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,

    /// Print nothing but warnings and errors (the files are still written).
    #[arg(long, short)]
    pub quiet: bool,

    /// Also print every run's lines as each phase completes (warm-up runs too) and the
    /// per-run blocks; by default only the medians and a summary per phase (all of it is
    /// in run.json and results.md either way).
    #[arg(long, short, conflicts_with = "quiet")]
    pub verbose: bool,

    /// Skip measuring the machine's floor before the stores (the loopback round trip at
    /// concurrency 1 and 8 and the durable write in the servers' data directory; a few
    /// seconds), which every phase's latency is otherwise shown as a multiple of.
    #[arg(long)]
    pub no_floor: bool,

    /// Also find where the client's allocations come from: the stack of every allocation
    /// is taken, and each phase lists its call sites and the crates whose code allocated,
    /// per operation (results.md, run.json). Exact counts, but slow: the run's times are
    /// not for comparing.
    #[arg(long)]
    pub alloc_sites: bool,

    /// Leave out the 2016 blog's figures, which a classic run at the blog's sizes (micro,
    /// tiny, small; 40 searches per record) shows beside its own.
    #[arg(long)]
    pub no_blog_reference: bool,

    /// `durable`: every commit is on disk before it is acknowledged. `relaxed`: each
    /// store's documented fast mode (the blog's unmatched settings). Both, `durable,relaxed`:
    /// every store runs as two variants, @durable and @relaxed.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        value_delimiter = ',',
        default_value = "durable"
    )]
    pub durability: Vec<Durability>,

    /// Seconds a connect may take before the store fails.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_positive, allow_negative_numbers = true)]
    pub connect_timeout: NonZeroU64,

    /// Seconds without a single finished operation after which a store that stopped
    /// answering is failed and the run goes on with the next store (the phases it finished
    /// are kept). 0: wait for ever.
    #[arg(
        long,
        value_parser = parse_count::<u64>,
        value_name = "SECONDS",
        default_value = "300",
        allow_negative_numbers = true
    )]
    pub stall_timeout: u64,

    /// Keep the data directories of the local servers dbcompare starts (their paths are
    /// printed), for inspection.
    #[arg(long)]
    pub keep_data: bool,

    /// Where the throw-away servers and the SQLite file keep their data (one new directory
    /// each, deleted after the run), and where the durable write floor is measured. By
    /// default the system's temporary directory ($TMPDIR or /tmp).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten, next_help_heading = "Options of one store")]
    pub options: StoreOptions,
}

/// Where the servers are.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerArgs {
    /// Use this server for a store instead of starting a throw-away one: STORE=URL, for
    /// example postgres=postgres://user:pass@host:5432/db, mysql=mysql://root@host/db,
    /// redis=redis://host:6379/0. Repeatable. Also read from DBCOMPARE_{STORE}_URL
    /// (DBCOMPARE_POSTGRES_URL, ...).
    #[arg(long = "url", value_name = "STORE=URL")]
    pub urls: Vec<String>,

    /// A configuration file for a store's throw-away server, read after the file of
    /// configs/ it starts with (so its lines win): STORE=FILE or STORE@LABEL=FILE for one
    /// variant (--config postgres@tuned=my-postgresql.conf). Repeatable.
    #[arg(long = "config", value_name = "STORE=FILE")]
    pub configs: Vec<String>,

    /// One server setting on top: STORE:KEY=VALUE or STORE@LABEL:KEY=VALUE (--set
    /// postgres@async:synchronous_commit=off). A throw-away server starts with it as a
    /// configuration line; a server given by URL gets it the way it takes it (PostgreSQL:
    /// SET on every connection, MySQL: SET GLOBAL, Redis: CONFIG SET). Each one is read back
    /// before the run: one not read back as asked fails that store. Repeatable.
    #[arg(long = "set", value_name = "STORE:KEY=VALUE")]
    pub sets: Vec<String>,

    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub server: ServerArgs,
}
