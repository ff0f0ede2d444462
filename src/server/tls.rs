//! A certificate for a throw-away server that serves TLS (`--tls`): a certificate authority
//! made for this server alone, and the server's certificate for 127.0.0.1 and localhost
//! signed by it, written into the server's directory. The CA's key is never written: no
//! other certificate can be signed by it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use super::host::write_file;
use crate::catalog::Launcher;

/// The PEM files of a server's certificate, in its directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The certificate authority a client verifies the server with.
    pub ca: PathBuf,
    /// The server's certificate.
    pub cert: PathBuf,
    /// The server's private key (0600).
    pub key: PathBuf,
}

impl Files {
    /// Makes the CA and the server's certificate, and writes them into `dir/tls`.
    pub fn make(dir: &Path) -> Result<Files> {
        let made = make_certificates().context("making the server's TLS certificate")?;
        let tls = dir.join("tls");
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&tls)
                .with_context(|| format!("creating {}", tls.display()))?;
        }
        let files = Files {
            ca: tls.join("ca.pem"),
            cert: tls.join("server.pem"),
            key: tls.join("server.key"),
        };
        write_file(&files.ca, &made.ca)?;
        write_file(&files.cert, &made.cert)?;
        write_file(&files.key, &made.key)?;
        Ok(files)
    }

    /// Applies `give` (a chown to the server's user) to the directory and each file.
    pub fn give_to(&self, give: impl Fn(&Path) -> Result<()>) -> Result<()> {
        if let Some(dir) = self.ca.parent() {
            give(dir)?;
        }
        [&self.ca, &self.cert, &self.key]
            .into_iter()
            .try_for_each(|f| give(f))
    }
}

/// PEM text of a CA certificate, a server certificate it signed and the server's key.
pub struct Made {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

/// A CA, and a certificate for 127.0.0.1 and localhost signed by it.
pub fn make_certificates() -> Result<Made, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.distinguished_name
        .push(DnType::CommonName, "dbcompare throw-away server CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);

    let key = KeyPair::generate()?;
    let mut server = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".into()])?;
    server
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = server.signed_by(&key, &issuer)?;
    Ok(Made {
        ca: ca_cert.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// The URL query that makes a client verify the server against `ca`, in the driver's own
/// words (dbcompare's, named after the store's own client's option, where the driver's URL
/// has none).
pub fn url_settings(launcher: Launcher, ca: &Path) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    let ca = ca.to_string_lossy();
    match launcher {
        Launcher::Postgres => query
            .append_pair("sslmode", "verify-full")
            .append_pair("sslrootcert", &ca),
        Launcher::Mysql => query
            .append_pair("require_ssl", "true")
            .append_pair("ssl_ca", &ca),
        Launcher::Redis | Launcher::RedisCluster => query.append_pair("cacert", &ca),
    };
    query.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

    /// The server's certificate verifies against its CA for 127.0.0.1 and localhost, and
    /// not for another name, nor against another CA.
    #[test]
    fn the_certificate_verifies_against_its_own_ca_only() {
        let made = make_certificates().unwrap();
        let other = make_certificates().unwrap();
        let cert = CertificateDer::from_pem_slice(made.cert.as_bytes()).unwrap();
        let verifier = |ca: &str| {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
                .unwrap();
            rustls::client::WebPkiServerVerifier::builder_with_provider(
                roots.into(),
                rustls::crypto::ring::default_provider().into(),
            )
            .build()
            .unwrap()
        };
        let check = |ca: &str, name: &str| {
            use rustls::client::danger::ServerCertVerifier;
            verifier(ca).verify_server_cert(
                &cert,
                &[],
                &ServerName::try_from(name.to_string()).unwrap(),
                &[],
                UnixTime::now(),
            )
        };
        assert!(check(&made.ca, "127.0.0.1").is_ok());
        assert!(check(&made.ca, "localhost").is_ok());
        assert!(check(&made.ca, "example.com").is_err());
        assert!(check(&other.ca, "127.0.0.1").is_err());
    }
}
