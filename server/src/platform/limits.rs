//! Limits on the work a request can cause. CPU-bound jobs (schema parsing
//! and comparison, password hashing) run on tokio's blocking pool, a few
//! at a time, so a burst of big checks or sign-ins waits its turn there
//! while the async threads keep answering everything else (`/healthz`,
//! pages, the API). A schema is measured before any parser sees it, and
//! request bodies are measured as they arrive.

use std::num::NonZeroUsize;
use std::sync::Arc;
use streamkeeper::platform::limit::TooLarge;
use streamkeeper::schemas::check::ParsedSchema;
use streamkeeper::schemas::{SchemaError, SchemaText};
use streamkeeper_app::error::AppError;
use tokio::sync::Semaphore;

/// `STREAMKEEPER_MAX_SCHEMA_BYTES`' default: 1 MiB, well above real
/// schemas (a 1,000-field Avro record is about 60 KiB).
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 1 << 20;

/// The setting refusals name, so an operator knows what to raise.
pub const MAX_SCHEMA_BYTES_SETTING: &str = "STREAMKEEPER_MAX_SCHEMA_BYTES";

/// At most `permits` CPU-bound jobs at once on tokio's blocking pool.
#[derive(Clone, Debug)]
pub struct Blocking {
    permits: Arc<Semaphore>,
}

impl Blocking {
    pub fn new(permits: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(permits.max(1))),
        }
    }

    /// One job per core: more would only queue inside the OS, with more
    /// memory held (an argon2 hash holds 19 MiB while it runs).
    pub fn per_core() -> Self {
        Self::new(std::thread::available_parallelism().map_or(2, NonZeroUsize::get))
    }

    /// Runs `job` on the blocking pool once a permit is free. The permit
    /// goes with the job, so a request given up by its client still
    /// counts until its job is done. A job that panics is an internal
    /// error (logged under a reference), never a dead server.
    pub async fn run<T, F>(&self, job: F) -> Result<T, AppError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let failed = |e: &dyn std::fmt::Display| {
            let reference = crate::platform::errors::reference();
            tracing::error!(%reference, error = %e, "a blocking job failed");
            AppError::Internal(reference)
        };
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| failed(&e))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            job()
        })
        .await
        .map_err(|e| failed(&e))
    }
}

/// The process's decoding of big request bodies (see `api::ApiJson`).
pub fn decoding() -> &'static Blocking {
    static DECODING: std::sync::OnceLock<Blocking> = std::sync::OnceLock::new();
    DECODING.get_or_init(Blocking::per_core)
}

/// Why a schema was not parsed.
#[derive(Debug, thiserror::Error)]
pub enum Unparsed {
    #[error("{0} ({MAX_SCHEMA_BYTES_SETTING})")]
    TooLarge(TooLarge),
    #[error(transparent)]
    Invalid(#[from] SchemaError),
}

impl From<Unparsed> for AppError {
    fn from(e: Unparsed) -> Self {
        match e {
            Unparsed::TooLarge(_) => AppError::TooLarge(sentence(&e.to_string())),
            Unparsed::Invalid(e) => AppError::Invalid(e.to_string()),
        }
    }
}

/// `the schema is …` as a sentence: capitalised, with a full stop.
pub fn sentence(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// The one way into the schema parsers for everything a user sends: the
/// size cap first, then the parse and the comparisons on the blocking
/// pool (see [`Blocking`]).
#[derive(Clone, Debug)]
pub struct SchemaLimits {
    max_bytes: usize,
    blocking: Blocking,
}

impl SchemaLimits {
    pub fn new(max_bytes: usize, blocking: Blocking) -> Self {
        Self {
            max_bytes,
            blocking,
        }
    }

    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Refuses a schema over the cap (its text, a reference, or all
    /// together) before anything parses it.
    pub fn admit(&self, schema: &SchemaText) -> Result<(), Unparsed> {
        schema.within(self.max_bytes).map_err(Unparsed::TooLarge)
    }

    /// [`admit`](Self::admit), then parses on the calling thread: for jobs
    /// already on the blocking pool, and for the CLI.
    pub fn parse_here(&self, schema: &SchemaText) -> Result<ParsedSchema, Unparsed> {
        self.admit(schema)?;
        Ok(ParsedSchema::parse(schema)?)
    }

    /// Admits the schema at once (a refusal does not wait for a permit),
    /// then parses it on the blocking pool.
    pub async fn parse(&self, schema: SchemaText) -> Result<ParsedSchema, AppError> {
        self.admit(&schema)?;
        let limits = self.clone();
        Ok(self.run(move || limits.parse_here(&schema)).await??)
    }

    /// A comparison (or any other CPU-bound step of a check) on the
    /// blocking pool, sharing the parses' permits.
    pub async fn run<T, F>(&self, job: F) -> Result<T, AppError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.blocking.run(job).await
    }
}

impl Default for SchemaLimits {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SCHEMA_BYTES, Blocking::per_core())
    }
}

/// The request body limit in force, set by the body-limit layer so an
/// extractor that overruns it can name it.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit(pub usize);

impl BodyLimit {
    /// A refusal naming the limit; `bytes` when the body's length is known.
    pub fn refusal(self, bytes: Option<u64>) -> AppError {
        let limit = u64::try_from(self.0).unwrap_or(u64::MAX);
        let why = match bytes {
            Some(bytes) => TooLarge {
                what: "the request body".into(),
                bytes,
                limit,
            }
            .to_string(),
            None => format!(
                "the request body is over the limit of {}",
                streamkeeper::platform::limit::shown(limit)
            ),
        };
        AppError::TooLarge(sentence(&format!(
            "{why} (8 × {MAX_SCHEMA_BYTES_SETTING}, at least 2 MiB)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamkeeper::schemas::SchemaType;

    #[test]
    fn a_schema_over_the_cap_is_refused_with_the_setting_named() {
        let limits = SchemaLimits::new(1024, Blocking::new(1));
        let big = SchemaText::new(SchemaType::Avro, "x".repeat(5 * 1024 * 1024));
        let e = AppError::from(limits.parse_here(&big).expect_err("too large"));
        assert_eq!(e.status(), 413);
        assert_eq!(
            e.to_string(),
            "The schema is 5 MiB (5,242,880 bytes); the limit is 1 KiB (STREAMKEEPER_MAX_SCHEMA_BYTES)."
        );
    }

    #[test]
    fn a_schema_within_the_cap_is_parsed_and_bad_ones_are_invalid() {
        let limits = SchemaLimits::new(1024, Blocking::new(1));
        let ok = SchemaText::new(SchemaType::Avro, r#""string""#);
        assert!(limits.parse_here(&ok).is_ok());
        let bad = SchemaText::new(SchemaType::Avro, "{");
        let e = AppError::from(limits.parse_here(&bad).expect_err("invalid"));
        assert_eq!(e.status(), 422);
    }

    #[tokio::test]
    async fn jobs_run_a_few_at_a_time_and_a_panic_is_an_internal_error() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let blocking = Blocking::new(2);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let jobs = (0..8).map(|_| {
            let (running, most, blocking) = (running.clone(), most.clone(), blocking.clone());
            tokio::spawn(async move {
                blocking
                    .run(move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await
            })
        });
        for j in jobs.collect::<Vec<_>>() {
            j.await.expect("task").expect("job");
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
        let e = blocking
            .run(|| -> () { panic!("a parser bug") })
            .await
            .expect_err("panicked");
        assert!(matches!(e, AppError::Internal(_)), "{e:?}");
        // The permit came back: the next job runs.
        assert_eq!(blocking.run(|| 7).await.expect("runs"), 7);
    }

    #[test]
    fn a_body_refusal_names_the_limit() {
        let e = BodyLimit(8 << 20).refusal(Some(9 << 20));
        assert_eq!(e.status(), 413);
        assert!(
            e.to_string()
                .starts_with("The request body is 9 MiB (9,437,184 bytes); the limit is 8 MiB"),
            "{e}"
        );
        let e = BodyLimit(8 << 20).refusal(None);
        assert!(e.to_string().contains("over the limit of 8 MiB"), "{e}");
    }
}
