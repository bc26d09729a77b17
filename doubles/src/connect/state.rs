//! The connectors the double holds, and how their states move.

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// A connector's or task's state (`AbstractStatus.State`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Unassigned,
    Running,
    Paused,
    Failed,
    Restarting,
    /// Connectors only: a stopped connector has no tasks.
    Stopped,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Unassigned => "UNASSIGNED",
            State::Running => "RUNNING",
            State::Paused => "PAUSED",
            State::Failed => "FAILED",
            State::Restarting => "RESTARTING",
            State::Stopped => "STOPPED",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<State> {
        Some(match s {
            "RUNNING" => State::Running,
            "PAUSED" => State::Paused,
            "STOPPED" => State::Stopped,
            _ => return None,
        })
    }
}

pub(crate) const WORKER: &str = "127.0.0.1:8083";

#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub state: State,
    pub trace: Option<String>,
}

impl Instance {
    fn new(state: State) -> Self {
        Instance { state, trace: None }
    }

    fn json(&self) -> Value {
        let mut v = json!({"state": self.state.as_str(), "worker_id": WORKER});
        if let Some(t) = self.trace.as_ref().filter(|_| self.state == State::Failed) {
            v["trace"] = json!(t);
        }
        v
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Connector {
    pub config: BTreeMap<String, String>,
    pub connector: Instance,
    pub tasks: Vec<Instance>,
    pub topics: BTreeSet<String>,
    pub offsets: Vec<Value>,
    pub restarts: u32,
    /// Tasks that fail again with this trace after each restart.
    pub sticky: BTreeMap<usize, String>,
}

/// `source` or `sink` by the class's name, as the worker would learn from
/// the class itself; `unknown` otherwise.
pub(crate) fn kind(config: &BTreeMap<String, String>) -> &'static str {
    let class = config
        .get("connector.class")
        .map(String::as_str)
        .unwrap_or("");
    if class.contains("Sink") {
        "sink"
    } else if class.contains("Source") || class.contains("debezium.connector.") {
        "source"
    } else {
        "unknown"
    }
}

fn task_count(config: &BTreeMap<String, String>) -> usize {
    config
        .get("tasks.max")
        .and_then(|t| t.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, 64)
}

impl Connector {
    fn new(config: BTreeMap<String, String>, state: State) -> Self {
        let tasks = if state == State::Stopped {
            Vec::new()
        } else {
            vec![Instance::new(state); task_count(&config)]
        };
        let topics = if kind(&config) == "sink" {
            config
                .get("topics")
                .map(|t| {
                    t.split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        } else {
            BTreeSet::new()
        };
        Connector {
            config,
            connector: Instance::new(state),
            tasks,
            topics,
            offsets: Vec::new(),
            restarts: 0,
            sticky: BTreeMap::new(),
        }
    }

    pub fn kind(&self) -> &'static str {
        kind(&self.config)
    }

    pub fn status(&self, name: &str) -> Value {
        json!({
            "name": name,
            "connector": self.connector.json(),
            "tasks": self.tasks.iter().enumerate().map(|(i, t)| {
                let mut v = t.json();
                v["id"] = json!(i);
                v
            }).collect::<Vec<_>>(),
            "type": self.kind(),
        })
    }

    pub fn info(&self, name: &str) -> Value {
        json!({
            "name": name,
            "config": self.config,
            "tasks": (0..self.tasks.len()).map(|i| json!({"connector": name, "task": i})).collect::<Vec<_>>(),
            "type": self.kind(),
        })
    }

    pub fn set_state(&mut self, state: State) {
        self.connector = Instance::new(state);
        if state == State::Stopped {
            self.tasks.clear();
        } else if self.tasks.is_empty() {
            self.tasks = vec![Instance::new(state); task_count(&self.config)];
        } else {
            for t in &mut self.tasks {
                *t = Instance::new(state);
            }
        }
    }

    /// Restarting instances come up: running, or failed again when sticky.
    fn settle(&mut self) {
        if self.connector.state == State::Restarting {
            self.connector = Instance::new(State::Running);
        }
        for (i, t) in self.tasks.iter_mut().enumerate() {
            if t.state == State::Restarting {
                *t = match self.sticky.get(&i) {
                    Some(trace) => Instance {
                        state: State::Failed,
                        trace: Some(trace.clone()),
                    },
                    None => Instance::new(State::Running),
                };
            }
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Store {
    connectors: BTreeMap<String, Connector>,
}

impl Store {
    pub fn names(&self) -> impl Iterator<Item = (&String, &Connector)> {
        self.connectors.iter()
    }

    pub fn get(&self, name: &str) -> Option<&Connector> {
        self.connectors.get(name)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Connector> {
        self.connectors.get_mut(name)
    }

    /// Creates or reconfigures; true when it was created. A new config
    /// restarts the tasks (their number may change), keeping the state.
    pub fn upsert(&mut self, name: &str, config: BTreeMap<String, String>, state: State) -> bool {
        match self.connectors.get_mut(name) {
            Some(c) => {
                let keep = c.connector.state;
                let offsets = std::mem::take(&mut c.offsets);
                *c = Connector::new(config, keep);
                c.offsets = offsets;
                false
            }
            None => {
                self.connectors
                    .insert(name.to_owned(), Connector::new(config, state));
                true
            }
        }
    }

    pub fn remove(&mut self, name: &str) -> bool {
        self.connectors.remove(name).is_some()
    }

    pub fn set_task(&mut self, name: &str, task: usize, state: State, trace: Option<String>) {
        if let Some(t) = self
            .connectors
            .get_mut(name)
            .and_then(|c| c.tasks.get_mut(task))
        {
            *t = Instance { state, trace };
        }
    }

    pub fn set_connector(&mut self, name: &str, state: State, trace: Option<String>) {
        if let Some(c) = self.connectors.get_mut(name) {
            c.connector = Instance { state, trace };
        }
    }

    /// What a status read sees: restarts requested earlier have finished.
    pub fn settle(&mut self) {
        for c in self.connectors.values_mut() {
            c.settle();
        }
    }
}
