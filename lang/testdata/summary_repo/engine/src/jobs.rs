use std::collections::HashMap;

/// A pricing job.
pub struct Job {
    pub id: u64,
    name: String,
}

#[derive(Default)]
pub struct JobQueue {
    jobs: HashMap<u64, Job>,
}

pub enum State {
    Queued,
    Done,
}

pub const MAX_JOBS: usize = 1_000;

impl Job {
    pub fn new(id: u64, name: &str) -> Self {
        Job { id, name: name.to_string() }
    }

    fn secret_sauce(&self) -> u64 {
        self.id * 2
    }

    pub fn query(&self) -> String {
        format!("SELECT * FROM jobs WHERE name = '{}'", self.name)
    }
}

pub(crate) fn internal_only() {}

pub fn raw_bytes(p: *const u8) -> u8 {
    unsafe { *p }
}
