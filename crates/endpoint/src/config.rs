//! The endpoints' settings: transports, authentication mode, login cookie, limits.

use std::sync::Arc;
use std::time::Duration;

/// How clients authenticate (`hive.server2.authentication`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// SASL PLAIN accepting any user (NOSASL clients are served on the same port too).
    None,
    /// Raw Thrift without SASL only.
    NoSasl,
    /// A checked mode (LDAP, JWT, KERBEROS, or a comma list of them): SASL PLAIN with a
    /// password mode, SASL GSSAPI with Kerberos; NOSASL clients are refused, and every HTTP
    /// request carries Basic credentials, a bearer token, a `Negotiate` token or a login
    /// cookie.
    Password,
}

/// Hive's HTTP login cookie (`hive.server2.thrift.http.cookie.*`).
#[derive(Debug, Clone)]
pub struct HttpCookie {
    /// Issues and checks the cookie's signed value.
    pub signer: Arc<apiary_auth::CookieSigner>,
    /// `Domain` attribute (`...cookie.domain`), if set.
    pub domain: Option<String>,
    /// `Path` attribute (`...cookie.path`), if set.
    pub path: Option<String>,
    /// `HttpOnly` attribute (`...cookie.is.httponly`).
    pub http_only: bool,
}

/// Which transports run (`hive.server2.transport.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportMode {
    /// Binary TCP only.
    Binary,
    /// HTTP only.
    Http,
    /// Both.
    All,
}

/// Settings of the endpoints.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Address to bind.
    pub bind: String,
    /// Binary port (0 picks a free one).
    pub binary_port: u16,
    /// HTTP port (0 picks a free one).
    pub http_port: u16,
    /// HTTP path of the service, without slashes.
    pub http_path: String,
    /// Which transports run.
    pub transport: TransportMode,
    /// Authentication.
    pub auth: AuthMode,
    /// Largest Thrift message accepted, in bytes.
    pub max_message_size: usize,
    /// Most connections served at once, per transport.
    pub max_connections: usize,
    /// Time allowed for a client's first bytes and SASL handshake.
    pub handshake_timeout: Duration,
    /// A connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// Time given to open connections to finish at shutdown.
    pub shutdown_grace: Duration,
    /// TLS on both transports (`hive.server2.use.SSL`), or plain sockets.
    pub tls: Option<apiary_tls::ServerTls>,
    /// The HTTP login cookie, when cookies are on and logins are checked.
    pub cookie: Option<HttpCookie>,
    /// Hive's KERBEROS mode on the binary port: the server's identity for SASL GSSAPI
    /// (`hive.server2.authentication.kerberos.*`).
    pub kerberos: Option<Arc<apiary_auth::KerberosAcceptor>>,
    /// Hive's KERBEROS mode over HTTP: the identity for SPNEGO `Negotiate`
    /// (`hive.server2.authentication.spnego.*`).
    pub spnego: Option<Arc<apiary_auth::KerberosAcceptor>>,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1".into(),
            binary_port: 10000,
            http_port: 10001,
            http_path: "cliservice".into(),
            transport: TransportMode::All,
            auth: AuthMode::None,
            max_message_size: 104_857_600,
            max_connections: 500,
            handshake_timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(3600),
            shutdown_grace: Duration::from_secs(5),
            tls: None,
            cookie: None,
            kerberos: None,
            spnego: None,
        }
    }
}
