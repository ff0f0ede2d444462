//! Server URLs: parsing against the catalog's schemes and default ports, and masking of
//! passwords in every URL that is shown. The store's driver checks the rest of a URL (see
//! `registry::parse_url`).

use crate::catalog::StoreKind;
use crate::error::UsageError;

/// A server URL given for a store, checked against that store's schemes.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    raw: String,
    masked: String,
    host: String,
    port: u16,
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
        let url = ::url::Url::parse(raw).map_err(|e| bad(format!("not a valid URL ({e})")))?;
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
        Ok(StoreUrl {
            raw: raw.to_string(),
            masked,
            host,
            port: url.port().unwrap_or(server.default_port),
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

    /// `host:port`, for messages.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The password, so that reports can be scrubbed of it.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
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
