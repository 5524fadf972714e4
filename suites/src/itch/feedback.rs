//! Itch's feedback formats from the partial updates a plan emitted: the full format
//! (judgement → groups → tests, Itch's `OutputCollector`), one row per test for `tests.csv`
//! and TAP, and Dodona's partial format (`start-tab`, `start-context`, `start-testcase`,
//! `start-test`, … with `{enum, human}` statuses).

use serde_json::{Map, Value as J, json};

/// Itch's statuses from worst to best (a group's status is its worst child's).
pub const STATUSES: [&str; 5] = ["internal error", "testplan error", "time limit exceeded", "wrong", "correct"];

fn rank(status: &str) -> usize {
    STATUSES.iter().position(|s| *s == status).unwrap_or(0)
}

/// One test of a judgement, flattened.
#[derive(Debug, Clone, PartialEq)]
pub struct ItchTest {
    /// Names of the groups around it, outermost first.
    pub groups: Vec<String>,
    /// The test's name.
    pub name: String,
    /// `correct`, `wrong`, `time limit exceeded`, `testplan error` or `internal error`.
    pub status: String,
    /// The feedback line and messages, joined.
    pub message: String,
}

/// What is open in a partial stream (to close one that ended early).
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    pub judgement: bool,
    pub closed: bool,
    pub groups: usize,
    pub test: bool,
}

impl Tracker {
    pub(crate) fn feed(&mut self, u: &J) {
        match u.get("command").and_then(J::as_str).unwrap_or_default() {
            "start-judgement" => self.judgement = true,
            "close-judgement" => {
                self.judgement = false;
                self.closed = true;
            }
            "start-group" => self.groups += 1,
            "close-group" => self.groups = self.groups.saturating_sub(1),
            "start-test" => self.test = true,
            "close-test" => self.test = false,
            _ => {}
        }
    }

    /// Updates that end the stream with `status` and `message` (Itch's escalation).
    pub(crate) fn closing(&self, status: &str, message: &str) -> Vec<J> {
        if self.closed {
            return Vec::new();
        }
        let mut out = Vec::new();
        if !self.judgement {
            out.push(json!({"command": "start-judgement", "version": 2}));
        }
        out.push(json!({"command": "escalate-status", "status": status}));
        out.push(json!({"command": "append-message", "message": message}));
        if self.test {
            out.push(json!({"command": "close-test", "status": status}));
        }
        for _ in 0..self.groups {
            out.push(json!({"command": "close-group"}));
        }
        out.push(json!({"command": "close-judgement"}));
        out
    }
}

/// A level of the full format being built.
struct Level {
    start: J,
    items: Vec<J>,
}

fn put(obj: &mut Map<String, J>, key: &str, v: Option<&J>) {
    if let Some(v) = v.filter(|v| !v.is_null()) {
        obj.insert(key.to_string(), v.clone());
    }
}

/// The full format (Itch's `Judgement`) of a partial stream, and its tests flattened.
pub fn full_format(updates: &[J]) -> (J, Vec<ItchTest>) {
    let mut stack: Vec<Level> = Vec::new();
    let mut tests = Vec::new();
    let (mut total, mut correct) = (0u64, 0u64);
    let mut judgement =
        json!({"version": 2, "children": [], "messages": [], "meta": {"totalTests": 0, "correctTests": 0}});
    for u in updates {
        let cmd = u.get("command").and_then(J::as_str).unwrap_or_default();
        match cmd {
            "start-judgement" | "start-group" | "start-test" => {
                stack.push(Level { start: u.clone(), items: Vec::new() })
            }
            "append-message" | "append-diff" | "escalate-status" => {
                if let Some(l) = stack.last_mut() {
                    l.items.push(u.clone());
                }
            }
            "close-test" => {
                let Some(level) = stack.pop() else { continue };
                let mut messages = Vec::new();
                let mut diff = None;
                let mut escalated = None;
                for i in &level.items {
                    match i.get("command").and_then(J::as_str) {
                        Some("append-message") => messages.push(i.get("message").cloned().unwrap_or(J::Null)),
                        Some("append-diff") => {
                            diff = Some(json!({"expected": i.get("expected"), "actual": i.get("actual")}));
                        }
                        Some("escalate-status") => escalated = Some(i.clone()),
                        _ => {}
                    }
                }
                let status = escalated
                    .as_ref()
                    .and_then(|e| e.get("status").cloned())
                    .or_else(|| u.get("status").cloned())
                    .unwrap_or(json!("internal error"));
                let mut t = Map::new();
                t.insert("name".into(), level.start.get("name").cloned().unwrap_or(json!("")));
                t.insert("status".into(), status.clone());
                t.insert("messages".into(), J::Array(messages.clone()));
                put(&mut t, "feedback", u.get("feedback"));
                put(&mut t, "diff", diff.as_ref());
                total += 1;
                if status == "correct" {
                    correct += 1;
                }
                let groups: Vec<String> = stack
                    .iter()
                    .filter(|l| l.start.get("command").and_then(J::as_str) == Some("start-group"))
                    .map(|l| l.start.get("name").and_then(J::as_str).unwrap_or_default().to_string())
                    .collect();
                let mut text: Vec<String> =
                    u.get("feedback").and_then(J::as_str).map(str::to_string).into_iter().collect();
                text.extend(messages.iter().filter_map(J::as_str).map(str::to_string));
                tests.push(ItchTest {
                    groups,
                    name: level.start.get("name").and_then(J::as_str).unwrap_or_default().to_string(),
                    status: status.as_str().unwrap_or("internal error").to_string(),
                    message: text.join("; "),
                });
                if let Some(l) = stack.last_mut() {
                    if let Some(e) = escalated {
                        l.items.push(e);
                    }
                    l.items.push(J::Object(t));
                }
            }
            "close-group" => {
                let Some(level) = stack.pop() else { continue };
                let mut g = Map::new();
                let mut children = Vec::new();
                let mut messages = Vec::new();
                let mut escalated = None;
                for i in level.items {
                    match i.get("command").and_then(J::as_str) {
                        Some("append-message") => messages.push(i.get("message").cloned().unwrap_or(J::Null)),
                        Some("escalate-status") => escalated = Some(i),
                        Some(_) => {}
                        None => children.push(i),
                    }
                }
                g.insert("name".into(), level.start.get("name").cloned().unwrap_or(json!("")));
                g.insert("visibility".into(), level.start.get("visibility").cloned().unwrap_or(json!("show")));
                g.insert("children".into(), J::Array(children));
                g.insert("messages".into(), J::Array(messages));
                put(&mut g, "sprite", level.start.get("sprite"));
                put(&mut g, "status", escalated.as_ref().and_then(|e| e.get("status")));
                put(&mut g, "summary", u.get("summary"));
                if let Some(l) = stack.last_mut() {
                    if let Some(e) = escalated {
                        l.items.push(e);
                    }
                    l.items.push(J::Object(g));
                }
            }
            "close-judgement" => {
                let Some(level) = stack.pop() else { continue };
                let mut children = Vec::new();
                let mut messages = Vec::new();
                let mut status = None;
                for i in level.items {
                    match i.get("command").and_then(J::as_str) {
                        Some("append-message") => messages.push(i.get("message").cloned().unwrap_or(J::Null)),
                        Some("escalate-status") => status = i.get("status").cloned(),
                        Some(_) => {}
                        None => children.push(i),
                    }
                }
                judgement = json!({"version": 2, "children": children, "messages": messages,
                    "meta": {"totalTests": total, "correctTests": correct}});
                if let (Some(s), Some(o)) = (status, judgement.as_object_mut()) {
                    o.insert("status".into(), s);
                }
            }
            _ => {}
        }
    }
    (judgement, tests)
}

/// The overall status: the judgement's escalation, else its worst test (`correct` when empty).
pub fn overall_status(full: &J, tests: &[ItchTest]) -> String {
    if let Some(s) = full.get("status").and_then(J::as_str) {
        return s.to_string();
    }
    tests.iter().map(|t| t.status.as_str()).min_by_key(|s| rank(s)).unwrap_or("correct").to_string()
}

fn dodona_status(status: &str) -> J {
    let (e, human) = match status {
        "correct" => ("correct", "Correct"),
        "wrong" => ("wrong", "Wrong"),
        "time limit exceeded" => ("time limit exceeded", "Time limit exceeded"),
        "testplan error" => ("internal error", "Test plan error"),
        _ => ("internal error", "Internal error"),
    };
    json!({"enum": e, "human": human})
}

/// Dodona's partial format of an Itch stream: top-level groups are tabs, deeper groups
/// contexts (groups below the second level are folded into their context, their names
/// prefixed to the test descriptions), a test is a testcase with one test; tests outside
/// any group get a tab of their own.
pub fn dodona(updates: &[J]) -> Vec<J> {
    let mut out = vec![json!({"command": "start-judgement"})];
    let mut groups: Vec<String> = Vec::new();
    let (mut tab, mut context, mut testcase) = (false, false, false);
    let mut pending_status: Option<String> = None;
    for u in updates {
        let cmd = u.get("command").and_then(J::as_str).unwrap_or_default();
        let name = u.get("name").and_then(J::as_str).unwrap_or_default().to_string();
        match cmd {
            "start-group" => {
                groups.push(name.clone());
                if groups.len() == 1 {
                    out.push(json!({"command": "start-tab", "title": name}));
                    tab = true;
                } else if groups.len() == 2 {
                    out.push(json!({"command": "start-context", "description": name}));
                    context = true;
                }
            }
            "close-group" => {
                if groups.len() == 2 && context {
                    out.push(json!({"command": "close-context"}));
                    context = false;
                } else if groups.len() == 1 && tab {
                    out.push(json!({"command": "close-tab"}));
                    tab = false;
                }
                groups.pop();
            }
            "start-test" => {
                if !tab {
                    out.push(json!({"command": "start-tab", "title": "Tests"}));
                    tab = true;
                }
                if !context {
                    out.push(json!({"command": "start-context"}));
                }
                let prefix: Vec<&str> = groups.iter().skip(2).map(String::as_str).collect();
                let description = if prefix.is_empty() { name } else { format!("{} › {name}", prefix.join(" › ")) };
                out.push(json!({"command": "start-testcase", "description": description}));
                testcase = true;
                pending_status = None;
            }
            "append-message" => {
                out.push(json!({"command": "append-message", "message": u.get("message").cloned().unwrap_or(J::Null)}));
            }
            "escalate-status" => {
                let s = u.get("status").and_then(J::as_str).unwrap_or("internal error").to_string();
                if testcase {
                    pending_status = Some(s);
                } else {
                    out.push(json!({"command": "escalate-status", "status": dodona_status(&s)}));
                }
            }
            "close-test" => {
                let status = pending_status
                    .take()
                    .or_else(|| u.get("status").and_then(J::as_str).map(str::to_string))
                    .unwrap_or_else(|| "internal error".into());
                let feedback = u.get("feedback").and_then(J::as_str).unwrap_or_default();
                out.push(json!({"command": "start-test", "expected": "correct"}));
                if !feedback.is_empty() {
                    out.push(json!({"command": "append-message", "message": feedback}));
                }
                out.push(json!({"command": "close-test", "generated": status, "status": dodona_status(&status)}));
                out.push(json!({"command": "close-testcase"}));
                testcase = false;
                if !context {
                    out.push(json!({"command": "close-context"}));
                }
                if groups.is_empty() {
                    out.push(json!({"command": "close-tab"}));
                    tab = false;
                }
            }
            _ => {}
        }
    }
    out.push(json!({"command": "close-judgement"}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> Vec<J> {
        [
            r#"{"command":"start-judgement","version":2}"#,
            r#"{"command":"start-group","name":"G","visibility":"show","tags":[]}"#,
            r#"{"command":"start-test","name":"a","tags":[]}"#,
            r#"{"command":"close-test","status":"correct","feedback":"fine"}"#,
            r#"{"command":"start-group","name":"H","visibility":"summary","tags":[]}"#,
            r#"{"command":"start-test","name":"b","tags":[]}"#,
            r#"{"command":"close-test","status":"wrong"}"#,
            r#"{"command":"close-group","summary":"s"}"#,
            r#"{"command":"close-group"}"#,
            r#"{"command":"close-judgement"}"#,
        ]
        .iter()
        .map(|s| serde_json::from_str(s).unwrap_or(J::Null))
        .collect()
    }

    #[test]
    fn the_full_format_nests_groups_and_counts_tests() {
        let (full, tests) = full_format(&stream());
        assert_eq!(full["meta"], json!({"totalTests": 2, "correctTests": 1}));
        assert_eq!(full["children"][0]["children"][1]["summary"], json!("s"));
        assert_eq!(tests[1].groups, vec!["G".to_string(), "H".to_string()]);
        assert_eq!(overall_status(&full, &tests), "wrong");
    }

    #[test]
    fn dodona_has_tabs_contexts_and_testcases() {
        let d = dodona(&stream());
        let cmds: Vec<&str> = d.iter().filter_map(|u| u["command"].as_str()).collect();
        assert_eq!(cmds.first(), Some(&"start-judgement"));
        assert_eq!(cmds.iter().filter(|c| **c == "start-tab").count(), 1);
        assert_eq!(cmds.iter().filter(|c| **c == "start-context").count(), 2);
        assert_eq!(cmds.last(), Some(&"close-judgement"));
    }

    #[test]
    fn an_open_stream_is_closed_with_the_escalation() {
        let mut t = Tracker::default();
        for u in stream().iter().take(3) {
            t.feed(u);
        }
        let c = t.closing("time limit exceeded", "m");
        let cmds: Vec<&str> = c.iter().filter_map(|u| u["command"].as_str()).collect();
        assert_eq!(cmds, ["escalate-status", "append-message", "close-test", "close-group", "close-judgement"]);
    }
}
