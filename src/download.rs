//! Downloads for `voml fetch`: one bounded HTTP GET. Only `https`, or plain `http` to this
//! machine (a local mirror, a test server); at most [`MAX_BYTES`], within time limits, and
//! through at most [`MAX_REDIRECTS`] redirects, each checked as the first URL is.

use std::io::Read;
use std::time::Duration;

use ureq::http::{StatusCode, Uri};
use voml_compiler::source::is_loopback_host;

/// The largest component file taken.
pub const MAX_BYTES: u64 = 16 << 20;
/// Redirects followed for one download.
pub const MAX_REDIRECTS: usize = 5;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// One request, from connecting to the last byte of the body (a redirect starts another).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// An HTTP client for component files.
pub struct Downloader {
    /// For other machines: honours the usual proxy variables (`HTTPS_PROXY`, `NO_PROXY`).
    network: ureq::Agent,
    /// For this machine: never through a proxy.
    local: ureq::Agent,
}

impl Default for Downloader {
    fn default() -> Downloader {
        let agent = |proxy: Option<ureq::Proxy>| {
            ureq::Agent::config_builder()
                .proxy(proxy)
                // Redirects are followed here, so that each one is checked.
                .max_redirects(0)
                .http_status_as_error(false)
                .timeout_connect(Some(CONNECT_TIMEOUT))
                .timeout_global(Some(REQUEST_TIMEOUT))
                .user_agent(concat!("voml/", env!("CARGO_PKG_VERSION")))
                .build()
                .new_agent()
        };
        Downloader {
            network: agent(ureq::Proxy::try_from_env()),
            local: agent(None),
        }
    }
}

impl Downloader {
    /// The bytes at `url`, or why not (a sentence without the URL, which callers show).
    pub fn get(&self, url: &str) -> Result<Vec<u8>, String> {
        let first = checked(url)?;
        let from_here = is_local(&first);
        let mut uri = first;
        for _ in 0..=MAX_REDIRECTS {
            let agent = if is_local(&uri) {
                &self.local
            } else {
                &self.network
            };
            let response = agent.get(&uri).call().map_err(describe)?;
            let status = response.status();
            if is_followed_redirect(status) {
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| {
                        format!("the server answered {status} without saying where to")
                    })?;
                let next = checked(&resolve(&uri, location))
                    .map_err(|why| format!("the server redirects to `{location}`: {why}"))?;
                if is_local(&next) && !from_here {
                    return Err(format!(
                        "the server redirects to `{location}`, on this machine: refused"
                    ));
                }
                uri = next;
                continue;
            }
            if !status.is_success() {
                return Err(format!("the server answered {status}"));
            }
            return read_body(response.into_body());
        }
        Err(format!(
            "more than {MAX_REDIRECTS} redirects (the last to `{uri}`)"
        ))
    }
}

/// The URL parsed as it will be requested, if it may be: `https`, or `http` to a loopback
/// host.
fn checked(url: &str) -> Result<Uri, String> {
    let uri: Uri = url
        .parse()
        .map_err(|e| format!("not a URL this client can request ({e})"))?;
    let host = uri.host().unwrap_or("");
    if host.is_empty() {
        return Err("the URL names no host".into());
    }
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if is_loopback_host(host) => Ok(uri),
        Some("http") => Err("plain http is refused for another machine: use https".into()),
        _ => Err("only https URLs are fetched".into()),
    }
}

fn is_local(uri: &Uri) -> bool {
    uri.host().is_some_and(is_loopback_host)
}

fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// A `Location` resolved against the URL that answered with it.
fn resolve(base: &Uri, location: &str) -> String {
    let scheme = base.scheme_str().unwrap_or("https");
    let authority = base.authority().map_or("", |a| a.as_str());
    if location.contains("://") {
        location.to_string()
    } else if location.starts_with("//") {
        format!("{scheme}:{location}")
    } else if location.starts_with('/') {
        format!("{scheme}://{authority}{location}")
    } else {
        let path = base.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let dir = if dir.is_empty() { "/" } else { dir };
        format!("{scheme}://{authority}{dir}{location}")
    }
}

/// The body, refused past [`MAX_BYTES`] (before reading it when the server says its size).
fn read_body(body: ureq::Body) -> Result<Vec<u8>, String> {
    let limit = format!("the {} MiB limit", MAX_BYTES >> 20);
    if let Some(length) = body.content_length().filter(|n| *n > MAX_BYTES) {
        return Err(format!(
            "the file is larger than {limit} ({length} bytes announced)"
        ));
    }
    let mut bytes = Vec::new();
    body.into_reader()
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("the download broke off: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("the file is larger than {limit}"));
    }
    Ok(bytes)
}

fn describe(e: ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(what) => format!("no answer in time ({what})"),
        ureq::Error::Io(io) => format!("cannot reach the server: {io}"),
        ureq::Error::HostNotFound => "the host is not found".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_is_requested() {
        assert!(checked("https://vendor.example/x.voml").is_ok());
        assert!(checked("http://127.0.0.1:8000/x.voml").is_ok());
        assert!(checked("http://[::1]/x.voml").is_ok());
        assert!(checked("http://localhost/x.voml").is_ok());
        for refused in [
            "http://vendor.example/x.voml",
            "http://127.0.0.1@vendor.example/x.voml",
            "ftp://vendor.example/x.voml",
            "https:///x.voml",
        ] {
            assert!(checked(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn locations_resolve_against_the_answering_url() {
        let base: Uri = "https://vendor.example/voml/a.voml".parse().unwrap();
        assert_eq!(
            resolve(&base, "b.voml"),
            "https://vendor.example/voml/b.voml"
        );
        assert_eq!(resolve(&base, "/c.voml"), "https://vendor.example/c.voml");
        assert_eq!(
            resolve(&base, "//mirror.example/d.voml"),
            "https://mirror.example/d.voml"
        );
        assert_eq!(
            resolve(&base, "http://127.0.0.1/e.voml"),
            "http://127.0.0.1/e.voml"
        );
    }
}
