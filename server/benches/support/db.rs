//! A bench's own Postgres database: created next to `DATABASE_URL`'s,
//! migrated, and dropped when the bench is done, so a bench never touches
//! data it did not make.

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

pub struct BenchDb {
    admin: PgPool,
    name: String,
    pub pool: PgPool,
}

impl BenchDb {
    /// `sk_bench_<bench>_<pid>` on the server of `base`, with a pool of
    /// `connections`.
    pub async fn create(base: &str, bench: &str, connections: u32) -> BenchDb {
        let admin = PgPoolOptions::new()
            .max_connections(1)
            .connect(base)
            .await
            .expect("connect");
        let name = format!("sk_bench_{bench}_{}", std::process::id());
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&admin)
            .await
            .expect("create database");
        let mut url = url::Url::parse(base).expect("DATABASE_URL");
        url.set_path(&name);
        // As the console connects (JIT off).
        let options = streamkeeper_server::platform::db::connect_options(url.as_str())
            .expect("the bench database's URL");
        let pool = PgPoolOptions::new()
            .max_connections(connections)
            .connect_with(options)
            .await
            .expect("connect to the bench database");
        streamkeeper_server::platform::db::migrate(&pool)
            .await
            .expect("migrate");
        BenchDb { admin, name, pool }
    }

    pub async fn drop(self) {
        self.pool.close().await;
        sqlx::query(&format!("DROP DATABASE {} WITH (FORCE)", self.name))
            .execute(&self.admin)
            .await
            .expect("drop database");
    }
}
