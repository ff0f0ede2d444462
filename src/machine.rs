//! The machine a run is made on, read from the operating system.

use serde::{Deserialize, Serialize};

/// What the figures of a run depend on outside the stores themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Machine {
    /// CPU model name (`/proc/cpuinfo`).
    pub cpu_model: String,
    /// Logical cores available to this process.
    pub cores: usize,
    /// Total memory in bytes (`/proc/meminfo`).
    pub memory_bytes: u64,
    /// Operating system name and version (`/etc/os-release`).
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
}

impl Machine {
    /// Reads the current machine. Fields that cannot be read are `unknown` (or 0).
    pub fn detect() -> Self {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = field(&cpuinfo, "model name", ':')
            .or_else(|| field(&cpuinfo, "Model", ':'))
            .unwrap_or_else(|| "unknown".to_string());
        let memory_bytes = field(&read("/proc/meminfo"), "MemTotal", ':')
            .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024);
        let os = field(&read("/etc/os-release"), "PRETTY_NAME", '=')
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let kernel = read("/proc/sys/kernel/osrelease").trim().to_string();
        Machine {
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
            os,
            kernel: if kernel.is_empty() {
                "unknown".to_string()
            } else {
                kernel
            },
            arch: std::env::consts::ARCH.to_string(),
        }
    }
}

/// The value of the first `key<sep>value` line of `text`.
fn field(text: &str, key: &str, sep: char) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(sep)?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_key_value_lines() {
        let text = "processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz\n";
        assert_eq!(
            field(text, "model name", ':').as_deref(),
            Some("Example CPU @ 2.0GHz")
        );
        assert_eq!(field(text, "missing", ':'), None);
    }

    #[test]
    fn detects_this_machine() {
        let m = Machine::detect();
        assert!(m.cores >= 1);
        if cfg!(target_os = "linux") {
            assert!(m.memory_bytes > 0);
            assert_ne!(m.cpu_model, "unknown");
        }
    }
}
