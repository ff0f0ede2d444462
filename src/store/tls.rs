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
    /// The rustls configuration, its roots loaded once per process and setting: a
    /// reconnect (`--retries`, the pool suite) pays the handshake, not a reading of the
    /// system's roots.
    pub fn client_config(&self) -> Result<ClientConfig> {
        static MADE: std::sync::Mutex<Vec<(Tls, ClientConfig)>> = std::sync::Mutex::new(Vec::new());
        let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, config)) = made.iter().find(|(t, _)| t == self) {
            return Ok(config.clone());
        }
        let config = self.make_config()?;
        made.push((self.clone(), config.clone()));
        Ok(config)
    }

    fn make_config(&self) -> Result<ClientConfig> {
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
/// settings dbcompare reads that the driver's own URL parser would refuse. Works on the
/// text, so that a URL naming several hosts (which no URL parser takes) keeps them, and the
/// rest of the URL is left as it was written.
pub fn take_query<const N: usize>(
    raw: &str,
    names: [&str; N],
) -> Result<(String, [Option<String>; N])> {
    let mut taken: [Option<String>; N] = std::array::from_fn(|_| None);
    let (before_fragment, fragment) = match raw.find('#') {
        Some(i) => raw.split_at(i),
        None => (raw, ""),
    };
    let Some((base, query)) = before_fragment.split_once('?') else {
        return Ok((raw.to_string(), taken));
    };
    let mut kept = Vec::new();
    for pair in query.split('&') {
        // Only `%XX` is decoded: libpq reads a `+` as itself, and so does a file path.
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let key = pair.split('=').next().unwrap_or_default();
        match names.iter().position(|n| *n == decode(key)) {
            Some(i) => {
                let value = pair.split_once('=').map_or("", |(_, v)| v);
                taken[i] = Some(decode(value));
            }
            // Kept as written, byte for byte.
            None => kept.push(pair),
        }
    }
    if taken.iter().all(Option::is_none) {
        return Ok((raw.to_string(), taken));
    }
    let query = if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    };
    Ok((format!("{base}{query}{fragment}"), taken))
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

/// The one crypto provider every TLS connection uses, also the process default: MySQL's and
/// Redis's drivers build their configurations with the default, and rustls has none when
/// two providers are compiled in (as here, through other crates).
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
