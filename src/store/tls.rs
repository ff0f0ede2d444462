//! TLS for the stores whose drivers take a rustls configuration (PostgreSQL, MySQL, Redis):
//! how much of the server's certificate is checked, against which roots. MongoDB's driver
//! builds its own from its URL (`tls=true&tlsCAFile=...`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// How much of the server's certificate is checked (libpq's `sslmode` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Encrypted, the certificate not checked (`sslmode=require`): safe from listeners, not
    /// from a server that pretends.
    Nothing,
    /// The certificate is signed by a trusted root, whatever host it names (`verify-ca`).
    Chain,
    /// Signed by a trusted root and naming the host connected to (`verify-full`).
    Full,
}

impl Verify {
    pub fn name(self) -> &'static str {
        match self {
            Verify::Nothing => "certificate not verified",
            Verify::Chain => "certificate chain verified",
            Verify::Full => "certificate and host name verified",
        }
    }
}

/// TLS as a URL asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub verify: Verify,
    /// The roots to trust (a PEM file); the system's when none.
    pub ca: Option<PathBuf>,
}

impl Tls {
    /// The rustls configuration, its roots loaded.
    pub fn client_config(&self) -> Result<ClientConfig> {
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .context("the TLS versions")?;
        let config = match self.verify {
            Verify::Nothing => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
                .with_no_client_auth(),
            Verify::Chain | Verify::Full => {
                let roots = Arc::new(self.roots()?);
                let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .context("building the certificate verifier")?;
                if self.verify == Verify::Full {
                    builder.with_webpki_verifier(webpki).with_no_client_auth()
                } else {
                    builder
                        .dangerous()
                        .with_custom_certificate_verifier(Arc::new(AnyName(webpki)))
                        .with_no_client_auth()
                }
            }
        };
        Ok(config)
    }

    fn roots(&self) -> Result<RootCertStore> {
        let mut roots = RootCertStore::empty();
        match &self.ca {
            Some(file) => {
                for cert in certificates(file)? {
                    roots
                        .add(cert)
                        .with_context(|| format!("a certificate in {}", file.display()))?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                let (added, _) = roots.add_parsable_certificates(found.certs);
                if added == 0 {
                    bail!(
                        "no trusted root certificates on this system: name one with the URL's CA \
                         file setting"
                    );
                }
            }
        }
        Ok(roots)
    }

    /// What the report shows.
    pub fn describe(&self) -> String {
        match &self.ca {
            Some(ca) => format!("TLS, {} (roots: {})", self.verify.name(), ca.display()),
            None if self.verify == Verify::Nothing => format!("TLS, {}", self.verify.name()),
            None => format!("TLS, {} (the system's roots)", self.verify.name()),
        }
    }
}

/// `raw` without the query parameters `names`, and their values (the last of each), for
/// settings dbcompare reads that the driver's own URL parser would refuse.
pub fn take_query<const N: usize>(
    raw: &str,
    names: [&str; N],
) -> Result<(String, [Option<String>; N])> {
    let mut url = ::url::Url::parse(raw)?;
    let mut taken: [Option<String>; N] = std::array::from_fn(|_| None);
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter_map(|(k, v)| match names.iter().position(|n| *n == k) {
            Some(i) => {
                taken[i] = Some(v.into_owned());
                None
            }
            None => Some((k.into_owned(), v.into_owned())),
        })
        .collect();
    if taken.iter().all(Option::is_none) {
        return Ok((raw.to_string(), taken));
    }
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    Ok((url.into(), taken))
}

/// The certificates in a PEM file.
pub fn certificates(file: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(file)
        .with_context(|| format!("reading the CA file {}", file.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("reading the CA file {}", file.display()))?;
    if certs.is_empty() {
        bail!("the CA file {} holds no certificate", file.display());
    }
    Ok(certs)
}

/// The one crypto provider every TLS connection uses, also the process default, so that
/// drivers building their own configuration (MongoDB's) find one.
pub fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: std::sync::OnceLock<Arc<CryptoProvider>> = std::sync::OnceLock::new();
    PROVIDER
        .get_or_init(|| {
            let provider = rustls::crypto::ring::default_provider();
            let _ = provider.clone().install_default();
            Arc::new(provider)
        })
        .clone()
}

/// Accepts any certificate, but still checks that the server holds its key.
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The chain checked, the host name not (`verify-ca`).
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
