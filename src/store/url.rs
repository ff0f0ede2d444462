//! Server URLs: parsing against the catalog's schemes and default ports, and masking of
//! passwords in every URL that is shown. The store's driver checks the rest of a URL (see
//! `registry::parse_url`).

use crate::catalog::{Hosts, StoreKind};
use crate::error::UsageError;

/// A server URL given for a store, checked against that store's schemes.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    raw: String,
    masked: String,
    /// Every host the URL names, as `host:port` (the default port filled in).
    hosts: Vec<String>,
    password: Option<String>,
}

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.masked)
    }
}

/// The usage error of a `--url` for `kind`.
pub fn bad_url(kind: StoreKind, why: impl std::fmt::Display) -> UsageError {
    UsageError::new(format!("--url {kind}=...: {why}"))
}

impl StoreUrl {
    /// Parses `raw` as a URL for `kind`; refuses another store's scheme and a URL without a
    /// host. Errors never show the password.
    pub fn parse(kind: StoreKind, raw: &str) -> Result<Self, UsageError> {
        let bad = |why: String| bad_url(kind, why);
        let Some(server) = kind.server() else {
            return Err(bad(format!("{kind} is embedded and takes no URL")));
        };
        let list = HostList::of(raw);
        let url =
            ::url::Url::parse(&list.first).map_err(|e| bad(format!("not a valid URL ({e})")))?;
        let mut masked_url = url.clone();
        if url.password().is_some() {
            let _ = masked_url.set_password(Some("***"));
        }
        let masked = masked_url.to_string();
        if !server.schemes.contains(&url.scheme()) {
            let owner = StoreKind::all()
                .iter()
                .find(|k| k.schemes().contains(&url.scheme()));
            let hint = owner.map_or(String::new(), |k| format!(" (that is a {k} URL)"));
            return Err(bad(format!(
                "{masked}: scheme '{}' is not one of {}{hint}",
                url.scheme(),
                server.schemes.join(", ")
            )));
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad(format!("{masked}: no host")))?
            .to_string();
        let mut hosts = vec![format!(
            "{host}:{}",
            url.port().unwrap_or(server.default_port)
        )];
        let masked = if list.hosts.len() > 1 {
            let masked = mask_userinfo(raw);
            if let Hosts::One(why) = server.hosts {
                return Err(bad(format!("{masked}: several hosts, but {why}")));
            }
            for other in &list.hosts[1..] {
                let one = ::url::Url::parse(&format!("{}://{other}", url.scheme()))
                    .ok()
                    .filter(|u| u.host_str().is_some_and(|h| !h.is_empty()))
                    .ok_or_else(|| bad(format!("{masked}: '{other}' is not a host[:port]")))?;
                let host = one.host_str().unwrap_or_default();
                hosts.push(format!(
                    "{host}:{}",
                    one.port().unwrap_or(server.default_port)
                ));
            }
            masked
        } else {
            masked
        };
        Ok(StoreUrl {
            raw: raw.to_string(),
            masked,
            hosts,
            password: url.password().map(str::to_string).filter(|p| !p.is_empty()),
        })
    }

    /// The URL itself, password included: only for the driver.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// The URL with its password replaced by `***`: for every message and report.
    pub fn masked(&self) -> &str {
        &self.masked
    }

    /// `host:port`, for messages (`h1:p1,h2:p2` for several hosts).
    pub fn address(&self) -> String {
        self.hosts.join(",")
    }

    /// Every host the URL names, as `host:port`.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The password, so that reports can be scrubbed of it.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }
}

/// The host list of a URL (`scheme://user:pass@h1:1,h2:2/path?query`), which a URL parser
/// refuses: the URL with only its first host, for the parts every host shares, and every
/// host as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostList {
    pub first: String,
    pub hosts: Vec<String>,
}

impl HostList {
    pub fn of(raw: &str) -> HostList {
        let Some((scheme, after)) = raw.split_once("://") else {
            return HostList {
                first: raw.to_string(),
                hosts: Vec::new(),
            };
        };
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let (authority, rest) = after.split_at(end);
        let (userinfo, list) = match authority.rfind('@') {
            Some(at) => authority.split_at(at + 1),
            None => ("", authority),
        };
        let hosts: Vec<String> = list.split(',').map(str::to_string).collect();
        HostList {
            first: format!("{scheme}://{userinfo}{}{rest}", hosts[0]),
            hosts,
        }
    }

    /// Every host's own URL: the URL with that host alone (`s://u:p@h1,h2/x` gives
    /// `s://u:p@h1/x` and `s://u:p@h2/x`).
    pub fn urls(&self) -> Vec<String> {
        let Some((scheme, after)) = self.first.split_once("://") else {
            return vec![self.first.clone()];
        };
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let at = after[..end].rfind('@').map_or(0, |i| i + 1);
        let (userinfo, rest) = (&after[..at], &after[end..]);
        self.hosts
            .iter()
            .map(|host| format!("{scheme}://{userinfo}{host}{rest}"))
            .collect()
    }
}

/// A URL's percent-encoded user or password, decoded (`p%40ss` -> `p@ss`).
pub fn percent_decode(s: &str) -> String {
    ::url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map_or_else(|| s.to_string(), |(_, v)| v.into_owned())
}

/// `text` with the password of every `scheme://user:password@` in it replaced by `***`.
pub fn mask_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail.find(['/', ' ', '\'', '"']).unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                let userinfo = &tail[..at];
                match userinfo.find(':') {
                    Some(colon) => {
                        out.push_str(&userinfo[..colon]);
                        out.push_str(":***");
                    }
                    None => out.push_str(userinfo),
                }
                out.push_str(&tail[at..end]);
            }
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Secrets shorter than this are masked only inside URLs: replacing every `p` of a
/// message would make it unreadable, and a password that short guards nothing.
const MIN_SCRUBBED_SECRET: usize = 4;

/// `text` with every URL's password, and every secret, replaced by `***`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let masked = mask_userinfo(text);
    secrets
        .iter()
        .filter(|s| s.len() >= MIN_SCRUBBED_SECRET)
        .fold(masked, |t, s| t.replace(s.as_str(), "***"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_text_are_masked() {
        assert_eq!(
            mask_userinfo("x redis://:pw@h:1/0 and postgres://u:p@ss@h/db, mysql://root@h/db"),
            "x redis://:***@h:1/0 and postgres://u:***@h/db, mysql://root@h/db"
        );
        assert_eq!(mask_userinfo("no url"), "no url");
    }

    #[test]
    fn urls_are_masked_and_checked_against_their_store() {
        let u = StoreUrl::parse(
            StoreKind::Postgres,
            "postgres://bob:s3cret@db.example:6000/x",
        )
        .unwrap();
        assert_eq!(u.masked(), "postgres://bob:***@db.example:6000/x");
        assert_eq!(u.address(), "db.example:6000");
        assert_eq!(u.password(), Some("s3cret"));
        assert!(!format!("{u:?}").contains("s3cret"));

        let wrong = StoreUrl::parse(StoreKind::Postgres, "redis://:pw@h/0")
            .unwrap_err()
            .to_string();
        assert!(wrong.contains("that is a redis URL"), "{wrong}");
        assert!(!wrong.contains("pw@"), "{wrong}");

        let e = StoreUrl::parse(StoreKind::Mysql, "not a url")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--url mysql=...: not a valid URL"), "{e}");
        assert!(StoreUrl::parse(StoreKind::Sqlite, "sqlite://x").is_err());
        assert_eq!(
            StoreUrl::parse(StoreKind::Redis, "redis://127.0.0.1/0")
                .unwrap()
                .address(),
            "127.0.0.1:6379"
        );
        assert_eq!(
            StoreUrl::parse(StoreKind::Mysql, "mysql://root@h/db")
                .unwrap()
                .address(),
            "h:3306"
        );
    }

    #[test]
    fn several_hosts_are_named_where_the_driver_takes_them() {
        let u = StoreUrl::parse(
            StoreKind::Mongodb,
            "mongodb://bob:s3cret@127.0.0.1:27999,127.0.0.1:27998,db3/dbcompare?replicaSet=rs0",
        )
        .unwrap();
        assert_eq!(
            u.masked(),
            "mongodb://bob:***@127.0.0.1:27999,127.0.0.1:27998,db3/dbcompare?replicaSet=rs0"
        );
        assert_eq!(u.address(), "127.0.0.1:27999,127.0.0.1:27998,db3:27017");
        assert_eq!(u.password(), Some("s3cret"));
        let u =
            StoreUrl::parse(StoreKind::Couchbase, "couchbase://u:pw@h1,h2:11210/bucket").unwrap();
        assert_eq!(u.hosts(), ["h1:11210", "h2:11210"]);
        assert!(StoreUrl::parse(StoreKind::Postgres, "postgres://u@[::1]:5,h2/db").is_ok());
        for (kind, raw, why) in [
            (
                StoreKind::Mysql,
                "mysql://root:pw@h1,h2/db",
                "MySQL connections (dbcompare's and mysql_async) go to one host",
            ),
            (StoreKind::Redis, "redis://:pw@h1:1,h2:2/0", "Redis Cluster"),
            (
                StoreKind::Postgres,
                "postgres://u:pw@h1,:5/db",
                "':5' is not a host[:port]",
            ),
            (
                StoreKind::Postgres,
                "postgres://u:pw@h1,h2:x/db",
                "'h2:x' is not a host[:port]",
            ),
        ] {
            let e = StoreUrl::parse(kind, raw).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
            assert!(!e.contains("pw@"), "{e}");
        }
        assert_eq!(
            HostList::of("redis://h/0"),
            HostList {
                first: "redis://h/0".into(),
                hosts: vec!["h".into()]
            }
        );
        assert_eq!(
            HostList::of("redis://:h1@h1:1,h2:2/0?x=h1#y").urls(),
            ["redis://:h1@h1:1/0?x=h1#y", "redis://:h1@h2:2/0?x=h1#y"]
        );
        assert_eq!(HostList::of("nothing").urls(), ["nothing"]);
    }

    #[test]
    fn secrets_are_scrubbed_from_messages() {
        let secrets = vec!["hunter2".to_string(), "p".to_string()];
        assert_eq!(
            scrub(
                "auth hunter2 failed for redis://:p@h:1/0 (http://h)",
                &secrets
            ),
            "auth *** failed for redis://:***@h:1/0 (http://h)"
        );
    }
}
