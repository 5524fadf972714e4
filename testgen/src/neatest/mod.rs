//! Neatest (Feldmeier & Fraser, ASE 2022): test suites made of neural networks that play the
//! game, chosen by neuroevolution. The networks, NEAT and the surprise oracle live in
//! `clowder-neuro`; this module connects them to the VM:
//!
//! * [`features`]: what a network sees (Whisker's `InputExtraction`);
//! * [`events`]: what it can do (the neuroevolution event extractor and Whisker's event names);
//! * [`NetworkPolicy`]: a network as the [`crate::execution::Policy`] the executor plays with
//!   (Whisker's `NetworkExecutor` choices, activation traces, uncertainty);
//! * [`replay`]: dynamic test suites replayed on seeds, with coverage and the surprise verdict.

pub mod events;
pub mod features;
pub mod replay;

pub use clowder_neuro::{DynamicSuite, Network, VersionHint};

use clowder_neuro::network::Features;
use clowder_neuro::surprise::{ActivationTrace, is_trace_step};
use clowder_neuro::{EventSpec, Innovations};

use crate::execution::Policy;
use crate::rng::Rng;
use events::NeuroEvent;

impl clowder_neuro::Random for Rng {
    fn next_double(&mut self) -> f64 {
        Rng::next_double(self)
    }
    fn next_int(&mut self, min: i64, max: i64) -> i64 {
        Rng::next_int(self, min, max)
    }
    fn gaussian(&mut self, mean: f64, std: f64) -> f64 {
        Rng::gaussian(self, mean, std)
    }
}

/// How a network picks events (a suite's `eventSelection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventSelection {
    /// The most probable event of the classification outputs (Whisker's `activation`).
    Activation,
    /// A uniformly random available event (Whisker's `random`).
    Random,
}

/// A network playing a game: grows input and output nodes for new features and events as
/// Whisker does during a playthrough, and records what the surprise oracle needs.
pub struct NetworkPolicy<'n> {
    /// The network (grown in place).
    pub network: &'n mut Network,
    innovations: &'n mut Innovations,
    rng: &'n mut Rng,
    selection: EventSelection,
    input_rate: f64,
    /// Activation trace of the playthrough, when recording.
    pub trace: Option<ActivationTrace>,
    /// Uncertainty (1 − Σp²) at the recorded steps.
    pub uncertainty: Vec<f64>,
    /// Event ids the network got new output nodes for during the playthrough.
    pub new_events: Vec<String>,
    /// The events of the last observation (id and parameters): the network has an output node
    /// for each of them since, so the same events again need no growth (it adds nodes only).
    seen_events: Vec<(String, &'static [&'static str])>,
}

impl<'n> NetworkPolicy<'n> {
    /// A policy for `network`; `record` keeps an activation trace.
    pub fn new(
        network: &'n mut Network,
        innovations: &'n mut Innovations,
        rng: &'n mut Rng,
        selection: EventSelection,
        input_rate: f64,
        record: bool,
    ) -> Self {
        Self {
            network,
            innovations,
            rng,
            selection,
            input_rate,
            trace: record.then(ActivationTrace::new),
            uncertainty: Vec::new(),
            new_events: Vec::new(),
            seen_events: Vec::new(),
        }
    }
}

/// A dynamic suite of `networks` in Whisker's JSON format, with the run's playthrough settings
/// as its `Configs` (timeout in Whisker milliseconds at acceleration 10). A suite of networks
/// that may drag (`drag_events`) says so in clowder's own key `dragEvents`, so that its replays
/// offer drags too; other suites are as Whisker writes them.
pub fn dynamic_suite_json(networks: Vec<Network>, p: &crate::config::Params) -> String {
    let mut configs = serde_json::json!({
        "testSuiteType": "dynamic",
        "timeout": f64::from(p.play_steps) * 1000.0 / 30.0 / 10.0,
        "eventSelection": if p.random_event_selection { "random" } else { "activation" },
        "durations": {
            "waitStepUpperBound": p.wait_upper_bound,
            "pressDurationUpperBound": p.press_duration,
            "soundDuration": p.sound_duration,
            "clickDuration": p.click_duration,
        },
    });
    if p.drag_events
        && let Some(obj) = configs.as_object_mut()
    {
        obj.insert(DRAG_EVENTS_KEY.into(), serde_json::Value::Bool(true));
    }
    DynamicSuite { configs, networks }.to_json()
}

/// The `Configs` key of suites whose networks may drag (clowder's extension).
const DRAG_EVENTS_KEY: &str = "dragEvents";

/// Whether `suite`'s networks may drag sprites (written with `drag_events`).
pub fn suite_drags(suite: &DynamicSuite) -> bool {
    suite.configs.get(DRAG_EVENTS_KEY).and_then(serde_json::Value::as_bool).unwrap_or(false)
}

fn specs(events: &[NeuroEvent]) -> Vec<EventSpec> {
    events
        .iter()
        .map(|e| EventSpec { id: e.id.clone(), parameters: e.params().iter().map(|p| p.to_string()).collect() })
        .collect()
}

impl Policy for NetworkPolicy<'_> {
    fn observe(&mut self, features: &Features, events: &[NeuroEvent]) -> bool {
        self.network.update_input_nodes(features, self.innovations);
        let seen = self.seen_events.len() == events.len()
            && self.seen_events.iter().zip(events).all(|((id, p), e)| *id == e.id && *p == e.params());
        if !seen {
            for e in events {
                if self.network.classification_node(&e.id).is_none() && !self.new_events.contains(&e.id) {
                    self.new_events.push(e.id.clone());
                }
            }
            self.network.update_output_nodes(&specs(events), self.input_rate, self.innovations, self.rng);
            self.seen_events.clear();
            self.seen_events.extend(events.iter().map(|e| (e.id.clone(), e.params())));
        }
        self.network.activate(features)
    }

    fn choose(&mut self, events: &[NeuroEvent]) -> Option<(usize, Vec<f64>)> {
        let i = match self.selection {
            EventSelection::Random => self.rng.below(events.len()),
            EventSelection::Activation => {
                let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
                self.network.select_event(&ids)?
            }
        };
        let e = events.get(i)?;
        let values = self.network.regression_values(&e.id);
        let args = e.params().iter().map(|p| values.iter().find(|(n, _)| n == p).map_or(0.0, |(_, v)| *v)).collect();
        Some((i, args))
    }

    fn after_iteration(&mut self, iteration: u32, _features: &Features, events: &[NeuroEvent]) {
        if !is_trace_step(iteration) {
            return;
        }
        if let Some(trace) = &mut self.trace {
            trace.record_step(iteration, &self.network.traced_activations());
            let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
            if let Some(u) = self.network.uncertainty(&ids) {
                self.uncertainty.push(u);
            }
        }
    }
}
