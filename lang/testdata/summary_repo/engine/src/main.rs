//! The job engine: runs pricing jobs behind a small HTTP API.
mod jobs;

use axum::{
    routing::{get, post},
    Router,
};
use crate::jobs::{Job, JobQueue};
use std::sync::Arc;

/* A block comment with "a string" and a fake route: .route("/nope", get(x)) */

#[tokio::main]
async fn main() {
    let queue = Arc::new(JobQueue::default());
    let app = Router::new()
        .route("/health", get(health))
        .route("/jobs", post(create_job).get(list_jobs))
        .nest("/admin", admin());
    let label = r#"raw "string" with route("/raw")"#;
    println!("{label} {}", 'x');
    axum::serve(listener(), app).await.unwrap();
}

async fn health() -> &'static str {
    "ok"
}

async fn create_job() {}
async fn list_jobs() {}
fn admin() -> Router { Router::new() }
fn listener() {}
