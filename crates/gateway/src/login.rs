//! Logins: whether the server asks for one, and checking a password, a bearer token (JWT) or
//! a Kerberos ticket's principal, with each outcome written to the audit log.

use crate::IpAddr;
use crate::{audit, Gateway, GatewayError};

impl Gateway {
    /// Whether clients must prove who they are (a password mode, JWT, Kerberos, or several).
    pub fn requires_login(&self) -> bool {
        self.config.authenticator.is_some() || self.config.jwt.is_some() || self.config.kerberos
    }

    /// Whether a password can log in (NONE, or a password mode such as LDAP).
    pub fn takes_passwords(&self) -> bool {
        self.config.authenticator.is_some() || !self.requires_login()
    }

    /// Checks a front end's credentials as the authentication mode says: NONE accepts any;
    /// a password mode refuses a blank user or password before asking its directory; a
    /// server that takes only JWTs refuses every password. A refusal is logged with its
    /// reason (never the password); the client is told only Hive's "Error validating the
    /// login", and nothing is held for it.
    pub async fn authenticate(
        &self,
        address: Option<IpAddr>,
        user: &str,
        password: &str,
    ) -> Result<(), GatewayError> {
        let checked = match (&self.config.authenticator, &self.config.jwt) {
            (None, _) if !self.requires_login() => return Ok(()),
            (None, Some(_)) => Err(apiary_auth::AuthError::Refused(
                "password logins are off: this server takes JWT bearer tokens over HTTP".into(),
            )),
            (None, None) => Err(apiary_auth::AuthError::Refused(
                "password logins are off: this server takes Kerberos tickets".into(),
            )),
            (Some(auth), _) => match apiary_auth::check_blank(user, password) {
                Ok(()) => auth.authenticate(user, password).await,
                Err(e) => Err(e),
            },
        };
        self.login_outcome(address, user, "password", checked)
    }

    /// Checks a bearer token (Hive's JWT mode) and says whose it is and until when.
    pub fn authenticate_bearer(
        &self,
        address: Option<IpAddr>,
        token: &str,
    ) -> Result<apiary_auth::TokenLogin, GatewayError> {
        let checked = match &self.config.jwt {
            None => Err(apiary_auth::AuthError::Refused(
                "JWT authentication is not enabled (hive.server2.authentication)".into(),
            )),
            Some(jwt) => jwt.verify(token),
        };
        let user = checked.as_ref().map(|l| l.user.clone()).unwrap_or_default();
        self.login_outcome(
            address,
            &user,
            "JWT",
            checked
                .as_ref()
                .map(|_| ())
                .map_err(|e| apiary_auth::AuthError::Refused(e.to_string())),
        )?;
        checked.map_err(|e| GatewayError::Authentication(e.to_string()))
    }

    /// Records the end of a front end's Kerberos exchange (SASL GSSAPI or SPNEGO) and says
    /// which user the session runs as: the audit log gets the login line either way.
    pub fn ticket_login(
        &self,
        address: Option<IpAddr>,
        outcome: Result<apiary_auth::TicketLogin, apiary_auth::AuthError>,
    ) -> Result<String, GatewayError> {
        let user = outcome.as_ref().map(|l| l.user.clone()).unwrap_or_default();
        if let Ok(login) = &outcome {
            tracing::debug!(principal = %login.principal, user = %login.user, "Kerberos login");
        }
        self.login_outcome(address, &user, "KERBEROS", outcome.map(|_| ()))?;
        Ok(user)
    }

    fn login_outcome(
        &self,
        address: Option<IpAddr>,
        user: &str,
        method: &str,
        checked: Result<(), apiary_auth::AuthError>,
    ) -> Result<(), GatewayError> {
        self.audit(audit::AuditEvent::Login {
            user,
            address,
            method,
            accepted: checked.is_ok(),
        });
        checked.map_err(|e| {
            tracing::warn!(user, method, reason = %e, "login refused");
            GatewayError::Authentication(e.to_string())
        })
    }
}
