//! Hive's `PAM` mode: a password checked by the machine's Pluggable Authentication Modules,
//! through every service `hive.server2.authentication.pam.services` names (`/etc/pam.d/<name>`).
//!
//! Built only with the `pam` feature (libpam's headers and clang are needed to build it);
//! without it, [`PamAuthenticator::new`] says so.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::{AuthError, Authenticator};

/// Checks passwords against PAM services, one after another: a login must pass all of them
/// (authentication and account management), as Hive's PAM provider requires.
#[derive(Debug)]
pub struct PamAuthenticator {
    services: Vec<String>,
    timeout: Duration,
    /// PAM checks running at once: a check that outlives its timeout keeps its thread (a PAM
    /// module cannot be interrupted) and its slot, so stuck checks cannot fill the blocking
    /// pool other work needs.
    slots: Arc<Semaphore>,
}

/// Most PAM checks running at once.
const MAX_CHECKS: usize = 16;

impl PamAuthenticator {
    /// An authenticator for `services`; a service that answers nothing within `timeout`
    /// refuses the login (its thread finishes in the background).
    pub fn new(services: Vec<String>, timeout: Duration) -> Result<PamAuthenticator, String> {
        if !cfg!(feature = "pam") {
            return Err("this build of Apiary has no PAM support: build it with `--features pam` (needs Debian's libpam0g-dev and clang)".into());
        }
        if services.is_empty() {
            return Err(
                "hive.server2.authentication=PAM needs hive.server2.authentication.pam.services"
                    .into(),
            );
        }
        if let Some(bad) = services
            .iter()
            .find(|s| s.is_empty() || s.contains('/') || s.starts_with('.'))
        {
            return Err(format!("{bad:?} is not a PAM service name"));
        }
        Ok(PamAuthenticator {
            services,
            timeout,
            slots: Arc::new(Semaphore::new(MAX_CHECKS)),
        })
    }
}

#[async_trait::async_trait]
impl Authenticator for PamAuthenticator {
    fn mode(&self) -> &'static str {
        "PAM"
    }

    async fn authenticate(&self, user: &str, password: &str) -> Result<(), AuthError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        for service in &self.services {
            let refused = || {
                AuthError::Refused(format!(
                    "Error authenticating with the PAM service: {service}"
                ))
            };
            let slot = tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await;
            let Ok(Ok(slot)) = slot else {
                return Err(AuthError::Unavailable(format!(
                    "{MAX_CHECKS} PAM checks were already running for {} s",
                    self.timeout.as_secs()
                )));
            };
            let (s, u, p) = (service.clone(), user.to_string(), password.to_string());
            let check = tokio::task::spawn_blocking(move || {
                let outcome = check(&s, &u, &p);
                drop(slot);
                outcome
            });
            match tokio::time::timeout_at(deadline, check).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(reason))) => {
                    tracing::warn!(service = %service, user, reason = %reason, "PAM refused the login");
                    return Err(refused());
                }
                Ok(Err(join)) => {
                    return Err(AuthError::Unavailable(format!(
                        "the PAM check of service {service} failed: {join}"
                    )))
                }
                Err(_) => {
                    return Err(AuthError::Unavailable(format!(
                        "PAM service {service} did not answer within {} s",
                        self.timeout.as_secs()
                    )))
                }
            }
        }
        Ok(())
    }
}

/// One PAM transaction: authenticate `user` with `password`, then check the account.
#[cfg(feature = "pam")]
fn check(service: &str, user: &str, password: &str) -> Result<(), String> {
    let mut client = pam::Client::with_password(service).map_err(|e| e.to_string())?;
    client.conversation_mut().set_credentials(user, password);
    client.authenticate().map_err(|e| e.to_string())
}

#[cfg(not(feature = "pam"))]
fn check(_service: &str, _user: &str, _password: &str) -> Result<(), String> {
    Err("this build has no PAM support".into())
}
