//! The HTTP layer: one GET with size bounds, retries with backoff, `Retry-After`, and the
//! token bucket every request of a fetch shares (with the clock it runs on).

use std::io::Read;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{FetchOptions, Status};

/// Time source and sleeping, so tests can run rate limits and backoffs
/// without waiting.
pub trait Clock: Send + Sync {
    /// Time since some fixed start.
    fn now(&self) -> Duration;
    /// Waits `d`.
    fn sleep(&self, d: Duration);
}

/// The real clock.
#[derive(Debug)]
pub struct SystemClock(Instant);

impl Default for SystemClock {
    fn default() -> Self {
        Self(Instant::now())
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Token bucket shared by all workers; a 429 pauses it for everyone.
pub(super) struct Bucket {
    rate: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

struct BucketState {
    tokens: f64,
    last: Duration,
    paused_until: Duration,
}

impl Bucket {
    pub(super) fn new(rate: f64, burst: f64, now: Duration) -> Self {
        let burst = burst.max(1.0);
        Self {
            rate: rate.max(1e-3),
            burst,
            state: Mutex::new(BucketState { tokens: burst, last: now, paused_until: now }),
        }
    }

    /// Takes one token, sleeping (in slices, to notice cancellation) until one is there.
    fn acquire(&self, clock: &dyn Clock, cancel: &AtomicBool) -> bool {
        loop {
            if cancel.load(Ordering::Relaxed) {
                return false;
            }
            let wait = {
                let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                let now = clock.now();
                if now > s.last {
                    s.tokens = (s.tokens + (now - s.last).as_secs_f64() * self.rate).min(self.burst);
                    s.last = now;
                }
                if s.paused_until > now {
                    s.paused_until - now
                } else if s.tokens >= 1.0 {
                    s.tokens -= 1.0;
                    return true;
                } else {
                    Duration::from_secs_f64((1.0 - s.tokens) / self.rate)
                }
            };
            clock.sleep(wait.min(Duration::from_millis(250)));
        }
    }

    /// No request leaves before `until`; the bucket restarts empty then, so
    /// the server is not hit by a burst right after telling us to slow down.
    fn pause_until(&self, until: Duration) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if until > s.paused_until {
            s.paused_until = until;
            s.tokens = 0.0;
            s.last = until;
        }
    }
}

/// Why a request failed for good.
#[derive(Debug)]
pub(super) enum ReqError {
    Cancelled,
    TooLarge(String),
    RateLimited(String),
    Network(String),
    Truncated(String),
    Http(u16, String),
}

impl ReqError {
    pub(super) fn status(&self) -> Status {
        match self {
            ReqError::Cancelled => Status::Cancelled,
            ReqError::TooLarge(_) => Status::TooLarge,
            ReqError::RateLimited(_) => Status::RateLimited,
            ReqError::Network(_) => Status::Network,
            ReqError::Truncated(_) => Status::Truncated,
            ReqError::Http(..) => Status::HttpError,
        }
    }
    pub(super) fn message(&self) -> String {
        match self {
            ReqError::Cancelled => "cancelled".into(),
            ReqError::TooLarge(m) | ReqError::RateLimited(m) | ReqError::Network(m) | ReqError::Truncated(m) => {
                m.clone()
            }
            ReqError::Http(_, m) => m.clone(),
        }
    }
}

/// A request's answer: a checked body, or a "not there" status (404, 403, 410).
pub(super) enum Got {
    Body(Vec<u8>),
    Gone(u16),
}

/// One attempt's answer.
enum Once {
    Body(Vec<u8>),
    Status(u16),
    Limited(Option<Duration>),
}

pub(super) struct Http<'a> {
    pub(super) agent: ureq::Agent,
    pub(super) opts: &'a FetchOptions,
    pub(super) bucket: Bucket,
    pub(super) clock: &'a dyn Clock,
    pub(super) cancel: &'a AtomicBool,
    pub(super) requests: AtomicU64,
    pub(super) bytes: AtomicU64,
}

/// `Retry-After` in seconds (the HTTP-date form is not used by Scratch; it
/// falls back to the backoff).
fn parse_retry_after(v: &str) -> Option<Duration> {
    v.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(Duration::from_secs_f64)
}

impl Http<'_> {
    fn backoff(&self, attempt: u32) -> Duration {
        let f = 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
        self.opts.backoff_initial.mul_f64(f).min(self.opts.backoff_max)
    }

    fn once(&self, full_url: &str, max: u64) -> Result<Once, ReqError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        // Messages name the URL without its query: the project token is short-lived
        // and would make reports differ between otherwise identical runs.
        let url = full_url.split('?').next().unwrap_or(full_url);
        let resp = match self.agent.get(full_url).call() {
            Ok(r) => r,
            Err(ureq::Error::Timeout(t)) => return Err(ReqError::Network(format!("{url}: timed out ({t})"))),
            Err(e) => return Err(ReqError::Network(format!("{url}: {e}"))),
        };
        let status = resp.status().as_u16();
        if status == 429 {
            let ra = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
            return Ok(Once::Limited(ra));
        }
        if status != 200 {
            return Ok(Once::Status(status));
        }
        // When ureq decodes gzip it removes Content-Length (it counted compressed
        // bytes), so a length seen here is that of the bytes we read.
        let declared = resp
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(n) = declared
            && n > max
        {
            return Err(ReqError::TooLarge(format!("{url}: {n} bytes, over the limit of {max}")));
        }
        let mut reader = resp.into_body().into_with_config().limit(max.saturating_add(1)).reader();
        let mut body = Vec::with_capacity(declared.unwrap_or(0).min(max) as usize);
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(ReqError::Cancelled);
            }
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    body.extend_from_slice(&chunk[..n]);
                    if body.len() as u64 > max {
                        return Err(ReqError::TooLarge(format!("{url}: over the limit of {max} bytes")));
                    }
                }
                Err(e) => {
                    self.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
                    return Err(match ureq::Error::from(e) {
                        ureq::Error::BodyExceedsLimit(_) => {
                            ReqError::TooLarge(format!("{url}: over the limit of {max} bytes"))
                        }
                        ureq::Error::Timeout(t) => {
                            ReqError::Network(format!("{url}: timed out after {} bytes ({t})", body.len()))
                        }
                        other => ReqError::Truncated(format!(
                            "{url}: body ended after {} of {} bytes ({other})",
                            body.len(),
                            declared.map(|d| d.to_string()).unwrap_or_else(|| "?".into())
                        )),
                    });
                }
            }
        }
        self.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        if let Some(n) = declared
            && (body.len() as u64) < n
        {
            return Err(ReqError::Truncated(format!("{url}: body ended after {} of {n} bytes", body.len())));
        }
        Ok(Once::Body(body))
    }

    /// GET with rate limiting, retries and a content check. `check` returning
    /// an error means the body is damaged (retried like a truncated download).
    pub(super) fn get(
        &self,
        full_url: &str,
        max: u64,
        check: &dyn Fn(&[u8]) -> Result<(), String>,
    ) -> Result<Got, ReqError> {
        let url = full_url.split('?').next().unwrap_or(full_url);
        let (mut attempts, mut limited) = (0u32, 0u32);
        loop {
            if !self.bucket.acquire(self.clock, self.cancel) {
                return Err(ReqError::Cancelled);
            }
            attempts += 1;
            let failure = match self.once(full_url, max) {
                Ok(Once::Body(b)) => match check(&b) {
                    Ok(()) => return Ok(Got::Body(b)),
                    Err(e) => ReqError::Truncated(format!("{url}: {e}")),
                },
                Ok(Once::Status(s @ (403 | 404 | 410))) => return Ok(Got::Gone(s)),
                Ok(Once::Status(s)) if s >= 500 || s == 408 => ReqError::Http(s, format!("{url}: HTTP {s}")),
                Ok(Once::Status(s)) => return Err(ReqError::Http(s, format!("{url}: HTTP {s}"))),
                Ok(Once::Limited(after)) => {
                    limited += 1;
                    attempts -= 1; // being told to wait is not a failed attempt
                    if limited > self.opts.max_rate_limited {
                        return Err(ReqError::RateLimited(format!(
                            "{url}: HTTP 429 (too many requests) {limited} times; lower --rate"
                        )));
                    }
                    let wait = after.unwrap_or_else(|| self.backoff(limited)).min(self.opts.max_retry_after);
                    self.bucket.pause_until(self.clock.now() + wait);
                    continue;
                }
                Err(e @ (ReqError::Cancelled | ReqError::TooLarge(_))) => return Err(e),
                Err(e) => e,
            };
            if attempts >= self.opts.max_attempts {
                let msg = format!("{} (after {attempts} attempts)", failure.message());
                return Err(match failure {
                    ReqError::Truncated(_) => ReqError::Truncated(msg),
                    ReqError::Http(s, _) => ReqError::Http(s, msg),
                    _ => ReqError::Network(msg),
                });
            }
            self.clock.sleep(self.backoff(attempts));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    struct Fake(Mutex<Duration>);
    impl Clock for Fake {
        fn now(&self) -> Duration {
            *self.0.lock().unwrap()
        }
        fn sleep(&self, d: Duration) {
            *self.0.lock().unwrap() += d;
        }
    }

    #[test]
    fn bucket_limits_the_rate_and_pauses() {
        let clock = Fake(Mutex::new(Duration::ZERO));
        let cancel = AtomicBool::new(false);
        let b = Bucket::new(2.0, 3.0, clock.now());
        for _ in 0..3 {
            assert!(b.acquire(&clock, &cancel));
        }
        assert_eq!(clock.now(), Duration::ZERO, "the burst goes out at once");
        for _ in 0..4 {
            assert!(b.acquire(&clock, &cancel));
        }
        assert!((clock.now().as_secs_f64() - 2.0).abs() < 1e-6, "4 more at 2/s take 2 s: {:?}", clock.now());
        b.pause_until(clock.now() + Duration::from_secs(10));
        assert!(b.acquire(&clock, &cancel));
        assert!(clock.now().as_secs_f64() >= 12.0 - 1e-6);
        cancel.store(true, Ordering::Relaxed);
        assert!(!b.acquire(&clock, &cancel));
    }
}
