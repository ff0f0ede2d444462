//! libpq's TLS settings in a PostgreSQL URL (`sslmode`, `sslrootcert`), which the driver's
//! own parser only partly knows (it refuses `verify-ca` and `verify-full`, and has no root
//! certificate): taken out of the URL here, and turned into a rustls connector.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::store::tls::{Tls, Verify, take_query};

/// A URL with its TLS settings taken out: what the driver parses, and the TLS to use.
#[derive(PartialEq, Eq)]
pub struct Split {
    pub url: String,
    /// None: no TLS (no `sslmode`, or `disable`).
    pub tls: Option<Tls>,
    /// `sslmode=prefer`: TLS if the server offers it.
    pub optional: bool,
}

impl std::fmt::Debug for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL holds the password.
        f.debug_struct("Split")
            .field("url", &crate::store::url::mask_userinfo(&self.url))
            .field("tls", &self.tls)
            .field("optional", &self.optional)
            .finish()
    }
}

/// Splits the TLS settings off `raw`. Unlike libpq, dbcompare uses TLS only when the URL
/// asks for it: a benchmark's transport is stated, never negotiated behind its back.
pub fn split(raw: &str) -> Result<Split> {
    let (url, [mode, root]) = take_query(raw, ["sslmode", "sslrootcert"])?;
    // libpq 16: the system's roots only with full verification.
    if root.as_deref() == Some("system") && mode.as_deref() != Some("verify-full") {
        bail!("sslrootcert=system needs sslmode=verify-full");
    }
    // libpq: with a root certificate, `prefer` and `require` verify the chain.
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
        Some("prefer") if ca.is_some() => (Verify::Chain, true),
        Some("prefer") => (Verify::Nothing, true),
        Some("allow") => bail!(
            "sslmode=allow (plain first, TLS if the server insists) is not supported by the \
             driver: use disable, prefer or require"
        ),
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
        let s = split("postgres://u@h/db?sslmode=verify-full&sslrootcert=system").unwrap();
        assert_eq!(s.tls.unwrap().ca, None);
        assert!(split("postgres://u@h/db?sslmode=require&sslrootcert=system").is_err());
        let s = split("postgres://u@h/db?sslmode=prefer&sslrootcert=/ca.pem").unwrap();
        assert_eq!(
            (s.tls.unwrap().verify, s.optional),
            (Verify::Chain, true),
            "libpq's rule"
        );
        assert!(split("postgres://u@h/db?sslmode=allow").is_err());
        // The rest of the query as written: libpq reads `+` as itself.
        let s = split("postgres://u@h/db?options=-c%20a%3D1&sslmode=require&application_name=a+b")
            .unwrap();
        assert_eq!(
            s.url,
            "postgres://u@h/db?options=-c%20a%3D1&application_name=a+b"
        );
        let s =
            split("postgres://u@h/db?sslmode=verify-full&sslrootcert=/x/my+ca%20b.pem").unwrap();
        assert_eq!(s.tls.unwrap().ca, Some("/x/my+ca b.pem".into()));
        assert!(!format!("{:?}", split("postgres://u:Secret9@h/db").unwrap()).contains("Secret9"));
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
