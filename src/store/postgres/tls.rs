//! libpq's TLS settings in a PostgreSQL URL (`sslmode`, `sslrootcert`), which the driver's
//! own parser only partly knows (it refuses `verify-ca` and `verify-full`, and has no root
//! certificate): taken out of the URL here, and turned into a rustls connector.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::store::tls::{Tls, Verify, take_query};

/// A URL with its TLS settings taken out: what the driver parses, and the TLS to use.
#[derive(Debug, PartialEq, Eq)]
pub struct Split {
    pub url: String,
    /// None: no TLS (no `sslmode`, or `disable`).
    pub tls: Option<Tls>,
    /// `sslmode=prefer`: TLS if the server offers it.
    pub optional: bool,
}

/// Splits the TLS settings off `raw`. Unlike libpq, dbcompare uses TLS only when the URL
/// asks for it: a benchmark's transport is stated, never negotiated behind its back.
pub fn split(raw: &str) -> Result<Split> {
    let (url, [mode, root]) = take_query(raw, ["sslmode", "sslrootcert"])?;
    // libpq: with a root certificate, `require` verifies the chain.
    let ca = root.filter(|r| r != "system").map(PathBuf::from);
    let (verify, optional) = match mode.as_deref() {
        None | Some("disable") => {
            if ca.is_some() {
                bail!("sslrootcert is given but sslmode is not: add sslmode=verify-full");
            }
            return Ok(Split {
                url,
                tls: None,
                optional: false,
            });
        }
        Some("prefer") => (Verify::Nothing, true),
        Some("require") if ca.is_some() => (Verify::Chain, false),
        Some("require") => (Verify::Nothing, false),
        Some("verify-ca") => (Verify::Chain, false),
        Some("verify-full") => (Verify::Full, false),
        Some(other) => {
            bail!("sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full")
        }
    };
    Ok(Split {
        url,
        tls: Some(Tls { verify, ca }),
        optional,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_settings_are_taken_out_of_the_url() {
        let s = split(
            "postgres://u:p@h:5/db?sslmode=verify-full&sslrootcert=/ca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(s.url, "postgres://u:p@h:5/db?application_name=x");
        assert_eq!(
            s.tls,
            Some(Tls {
                verify: Verify::Full,
                ca: Some("/ca.pem".into())
            })
        );
        let s = split("postgres://u@h/db?sslmode=require").unwrap();
        assert_eq!(s.url, "postgres://u@h/db");
        assert_eq!(s.tls.unwrap().verify, Verify::Nothing);
        let s = split("postgres://u@h/db?sslmode=require&sslrootcert=/ca.pem").unwrap();
        assert_eq!(s.tls.unwrap().verify, Verify::Chain, "libpq's rule");
        let s = split("postgres://u@h/db?sslmode=verify-ca&sslrootcert=system").unwrap();
        assert_eq!(s.tls.unwrap().ca, None);
        assert!(split("postgres://u@h/db?sslmode=prefer").unwrap().optional);
        assert_eq!(split("postgres://u@h/db").unwrap().tls, None);
        assert_eq!(
            split("postgres://u@h/db?sslmode=disable").unwrap().tls,
            None
        );
        assert!(split("postgres://u@h/db?sslmode=always").is_err());
        assert!(split("postgres://u@h/db?sslrootcert=/ca.pem").is_err());
    }
}
