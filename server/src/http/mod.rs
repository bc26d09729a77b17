//! The HTTP server: the Leptos pages and server functions, sign-in, the
//! REST API (each feature's routes, merged in `api`) and static assets,
//! behind the security layers. It imports the features; no feature imports it.

pub mod api;
pub mod auth;
pub mod body_limit;
pub mod listener;
pub mod metrics;
pub mod outage;
pub mod refusals;
pub mod request_id;
pub mod security;
pub mod server_fns;
pub mod signin;
pub mod site;
pub mod sso;

use crate::accounts::AccountService;
use crate::audit::AuditService;
use crate::config::ServeConfig;
use crate::connect::ConnectService;
use crate::review::ReviewService;
use crate::schemas::SchemaService;
use crate::watch::ClusterService;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::http::{HeaderValue, header};
use axum::routing::{get, post};
use axum::{Router, middleware};
use leptos::prelude::{LeptosOptions, provide_context, use_context};
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};
use sqlx::PgPool;
use std::sync::{Arc, OnceLock};
use streamkeeper_app::app::{App, shell};
use streamkeeper_app::port::Backend;
use streamkeeper_app::ui::time::ReaderZone;
use tower::ServiceBuilder;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};
use tower_sessions_sqlx_store::PostgresStore;

/// The router's state. Every layer and extractor clones it per request,
/// so it is one shared pointer, not a struct of a dozen (cloning the
/// fields was about 6% of the lineage ingest bench's samples).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What [`AppState`] shares.
pub struct Shared {
    pub leptos: LeptosOptions,
    pub config: Arc<ServeConfig>,
    pub accounts: Arc<AccountService>,
    pub clusters: Arc<ClusterService>,
    pub schemas: Arc<SchemaService>,
    pub connect: Arc<ConnectService>,
    pub reviews: Arc<ReviewService>,
    pub lineage: Arc<crate::lineage::LineageService>,
    pub pilot: Arc<crate::pilot::PilotService>,
    pub backend: Backend,
    pub limiter: crate::platform::limiter::LoginLimiter,
    pub routines: crate::platform::routine::Routines,
    /// The pool, for what reads across features (`/metrics`, `/readyz`).
    pub pool: PgPool,
    /// The routine runner's health, set by `serve` (none in tests that
    /// build the router alone, whose `/readyz` says so).
    pub runner: Option<crate::platform::routine::Health>,
    /// Single sign-on, when an issuer is set.
    pub sso: Option<Arc<crate::accounts::sso::SsoService>>,
    /// Whether Postgres answers (watched once `serve` spawns it).
    pub db: crate::platform::db_watch::DbWatch,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> Self {
        s.leptos.clone()
    }
}

/// What each feature's REST handlers take from the state: its own service
/// (or the backend port), never the state itself, so no feature imports
/// the router's module.
macro_rules! part_of_state {
    ($($ty:ty => $field:ident),* $(,)?) => {$(
        impl FromRef<AppState> for $ty {
            fn from_ref(s: &AppState) -> Self {
                s.$field.clone()
            }
        }
    )*};
}

part_of_state! {
    Arc<AccountService> => accounts,
    Arc<ClusterService> => clusters,
    Arc<SchemaService> => schemas,
    Arc<ConnectService> => connect,
    Arc<ReviewService> => reviews,
    Arc<crate::lineage::LineageService> => lineage,
    Arc<crate::pilot::PilotService> => pilot,
    Backend => backend,
    crate::platform::routine::Routines => routines,
}

impl AppState {
    pub fn new(pool: PgPool, config: ServeConfig) -> Self {
        Self::with_runner(pool, config, None)
    }

    /// The shared part while this is its only holder (before the router
    /// has it): for a test that swaps a service.
    pub fn unshared(&mut self) -> Option<&mut Shared> {
        Arc::get_mut(&mut self.0)
    }

    /// The state of a console whose routine runner reports `runner`.
    pub fn with_runner(
        pool: PgPool,
        config: ServeConfig,
        runner: Option<crate::platform::routine::Health>,
    ) -> Self {
        // The site root is only where the shell's script tags point
        // (`/pkg/streamkeeper*`); `router` serves `/pkg` from `config.site`
        // and nothing else from disk.
        let leptos = LeptosOptions::builder()
            .output_name("streamkeeper")
            .site_pkg_dir("pkg")
            .site_addr(config.bind)
            .build();
        let outbound = &config.outbound;
        let limiter = crate::platform::limiter::LoginLimiter::new();
        let accounts = Arc::new(AccountService::new(
            pool.clone(),
            outbound.egress,
            limiter.clone(),
        ));
        let clusters = Arc::new(ClusterService::new(
            pool.clone(),
            outbound.credentials.clone(),
        ));
        let lineage = Arc::new(crate::lineage::LineageService::new(
            pool.clone(),
            crate::lineage::IngestLimits::for_body_limit(config.body_limit()),
        ));
        // A check names what a change breaks downstream by asking lineage
        // (which sits above schemas) through schemas' port.
        let schemas = Arc::new(
            SchemaService::with_limits(
                pool.clone(),
                outbound.clone(),
                crate::platform::limits::SchemaLimits::new(
                    config.max_schema_bytes,
                    crate::platform::limits::Blocking::per_core(),
                ),
            )
            .with_downstream(crate::schemas::downstream::Downstream {
                lineage: lineage.clone(),
                public_url: config.public_url.to_string(),
            }),
        );
        let connect = Arc::new(ConnectService::new(pool.clone(), outbound.clone()));
        let reviews = Arc::new(
            ReviewService::new(
                pool.clone(),
                schemas.clone(),
                connect.clone(),
                limiter.clone(),
            )
            .with_mail(
                config
                    .smtp
                    .as_ref()
                    .map(|_| crate::review::MailLinks::new(&config.public_url)),
            ),
        );
        let pilot = Arc::new(crate::pilot::PilotService::new(pool.clone()));
        let routines = crate::platform::routine::Routines::new(
            pool.clone(),
            Arc::new(crate::audit::AuditTrail(pool.clone())),
        );
        let backend = Backend {
            accounts: accounts.clone(),
            audit: Arc::new(AuditService::new(pool.clone())),
            watch: clusters.clone(),
            slo: clusters.clone(),
            flags: Arc::new(crate::flags::FlagService::new(pool.clone())),
            notify: Arc::new(
                crate::notify::NotifyService::new(pool.clone(), outbound.clone())
                    .with_mail(config.smtp.clone().map(crate::clients::smtp::Smtp::new)),
            ),
            schemas: schemas.clone(),
            reviews: reviews.clone(),
            connect: connect.clone(),
            pilot: pilot.clone(),
            lineage: lineage.clone(),
            routines: Arc::new(routines.clone()),
            sign_in: streamkeeper_app::accounts::model::SignInWays {
                provider: config.sso.as_ref().map(|s| s.provider_name.clone()),
                passwords: config.local_login == streamkeeper::accounts::sso::LocalLogin::Everyone,
            },
        };
        let sso = config.sso.clone().map(|s| {
            Arc::new(crate::accounts::sso::SsoService::new(
                s,
                pool.clone(),
                accounts.token_cache(),
            ))
        });
        Self(Arc::new(Shared {
            leptos,
            config: Arc::new(config),
            accounts,
            clusters,
            schemas,
            connect,
            reviews,
            lineage,
            pilot,
            backend,
            limiter,
            routines,
            sso,
            pool,
            runner,
            db: crate::platform::db_watch::DbWatch::new(),
        }))
    }
}

/// The app's routes, generated once per process. Generating them sets a
/// process-wide flag in leptos_server that leaves any resource first
/// polled meanwhile pending for good (leptos-rs/leptos#4773), so it must
/// never overlap a render: the tests build many routers while others serve,
/// and such a page then hung until the request timed out.
fn route_list() -> &'static [AxumRouteListing] {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App))
}

/// The whole application. Server functions are routed by
/// `leptos_routes_with_context` at `/fn/<name>`. `store` keeps the sessions (Postgres in
/// production and tests).
pub fn router(state: AppState, store: PostgresStore) -> Router {
    let routes = route_list().to_vec();
    let backend = state.backend.clone();
    // Each page renders with the backend and the zone its reader chose
    // (the auth layer put it on the request; UTC when signed out).
    let context = move || {
        provide_context(backend.clone());
        if let Some(zone) = use_context::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<ReaderZone>().copied())
        {
            provide_context(zone);
        }
    };
    let leptos = state.leptos.clone();
    let not_found = {
        let leptos = leptos.clone();
        leptos_axum::render_app_to_stream_in_order_with_context(context.clone(), move || {
            shell(leptos.clone())
        })
    };

    let sessions = SessionManagerLayer::new(store)
        .with_name(state.config.cookie_name())
        .with_secure(state.config.https())
        .with_http_only(true)
        .with_same_site(SameSite::Strict)
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(time::Duration::seconds(
            i64::try_from(state.config.session_idle.as_secs()).unwrap_or(1800),
        )));

    let assets = Router::new().nest_service(
        "/pkg",
        ServiceBuilder::new()
            .layer(SetResponseHeaderLayer::overriding(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache"),
            ))
            .service(state.config.site.router()),
    );

    Router::new()
        .route("/login", post(signin::login))
        .route("/login/code", post(signin::login_code))
        .route("/logout", post(signin::logout))
        .route("/login/sso", get(sso::start))
        .route("/login/sso/reauth", get(sso::reauth))
        .route("/login/sso/callback", get(sso::callback))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(metrics::readyz))
        .route("/metrics", get(metrics::metrics))
        .nest("/api/v1", crate::http::api::router())
        .merge(assets)
        .leptos_routes_with_context(&state, routes, context.clone(), move || {
            shell(leptos.clone())
        })
        // Any other path is a page of the app (its 404 page when no route
        // matches), never a file from disk: the site is served at `/pkg`.
        .fallback(move |req: axum::extract::Request| not_found(req))
        .layer(
            ServiceBuilder::new()
                .layer(middleware::from_fn(request_id::request_id))
                .layer(TraceLayer::new_for_http())
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    auth::client_address,
                ))
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    security::headers,
                ))
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    outage::while_database_down,
                ))
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    security::same_origin,
                ))
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    body_limit::limit,
                ))
                .layer(DefaultBodyLimit::max(state.config.body_limit()))
                .layer(sessions)
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    auth::authenticate,
                ))
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    refusals::audit_refusals,
                ))
                .layer(middleware::from_fn(server_fns::error_status))
                .layer(middleware::from_fn(server_fns::refuse_controls)),
        )
        .with_state(state)
}
