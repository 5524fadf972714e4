//! `clowder status URL`: live progress of a running study from another
//! process (progress bar with ETA, workers, failures), or one snapshot.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clowder_proto::{CancelRequest, StatusRequest, StatusUpdate};
use clowder_worker::WorkerOptions;

use super::common::{self, ClientTlsArgs, TokenArgs, human_ms};

/// Arguments of `clowder status`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Coordinator URL (or a results folder with a `coordinator.addr` file).
    pub url: String,
    #[command(flatten)]
    pub token: TokenArgs,
    #[command(flatten)]
    pub tls: ClientTlsArgs,
    /// Print one snapshot and exit.
    #[arg(long)]
    pub once: bool,
    /// With --once: print the snapshot as JSON.
    #[arg(long)]
    pub json: bool,
    /// Cancel the study: the coordinator hands out no more runs (running ones finish).
    #[arg(long)]
    pub cancel: bool,
    /// With --cancel: also revoke running runs (workers stop them).
    #[arg(long, requires = "cancel")]
    pub revoke: bool,
}

fn snapshot_text(u: &StatusUpdate) -> String {
    let mut s = format!(
        "{}: {}/{} done ({} this session, {} resumed), {} running, {} pending, {} limit (work cap), {} failed ({} infrastructure), {} determinism failures{}\n",
        u.experiment,
        u.done,
        u.total,
        u.done_this_session,
        u.resumed,
        u.running,
        u.pending,
        u.limited,
        u.failed,
        u.infra_failed,
        u.determinism_failures,
        match (u.cancelled, u.finished) {
            (true, true) => ", cancelled (nothing running)",
            (true, false) => ", cancelled (running runs finish)",
            (false, true) => ", finished",
            (false, false) => "",
        },
    );
    if !u.finished {
        s.push_str(&format!(
            "rate {:.2} runs/s, eta {}\n",
            u.rate_per_second,
            if u.eta_ms > 0 { human_ms(u.eta_ms) } else { "unknown".into() }
        ));
    }
    for w in &u.worker_list {
        s.push_str(&format!(
            "  worker {} host {} from {} slots {} running {} done {} (seen {} ms ago)\n",
            w.worker_id, w.host, w.peer, w.slots, w.running, w.done, w.last_seen_ms
        ));
    }
    for f in &u.recent_failures {
        s.push_str(&format!("  failure: {f}\n"));
    }
    s
}

fn snapshot_json(u: &StatusUpdate) -> String {
    let workers: Vec<serde_json::Value> = u
        .worker_list
        .iter()
        .map(|w| {
            serde_json::json!({"worker_id": w.worker_id, "host": w.host, "peer": w.peer, "slots": w.slots,
                "running": w.running, "done": w.done, "last_seen_ms": w.last_seen_ms})
        })
        .collect();
    serde_json::json!({
        "experiment": u.experiment, "total": u.total, "done": u.done, "running": u.running, "pending": u.pending,
        "failed": u.failed, "limited": u.limited, "infra_failed": u.infra_failed, "resumed": u.resumed,
        "done_this_session": u.done_this_session, "determinism_failures": u.determinism_failures,
        "finished": u.finished, "cancelled": u.cancelled, "eta_ms": u.eta_ms,
        "rate_per_second": u.rate_per_second, "workers": workers, "recent_failures": u.recent_failures,
    })
    .to_string()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut url = args.url.clone();
    let as_dir = std::path::Path::new(&url).join(clowder_coordinator::ADDRESS_FILE);
    if as_dir.is_file() {
        url = std::fs::read_to_string(&as_dir)?.trim().to_string();
    } else if std::path::Path::new(&url).is_dir() {
        // The coordinator removes the file when it stops: a finished study's folder has none.
        anyhow::bail!(
            "no coordinator is serving {url} (no {} there: the study finished or was stopped; \
             its results are in runs.csv, or resume it with `clowder run`)",
            clowder_coordinator::ADDRESS_FILE
        );
    }
    let mut opts = WorkerOptions::new(common::normalise_url(&url));
    opts.token = args.token.get()?;
    if opts.token.is_none() {
        // A results folder given as the URL: use its token file if there is one.
        let t = std::path::Path::new(&args.url).join("token");
        if t.is_file() {
            opts.token = Some(std::fs::read_to_string(&t)?.trim().to_string());
        }
    }
    opts.tls_ca_pem = args.tls.ca()?;
    opts.tls_domain = args.tls.tls_domain.clone();
    common::runtime(1)?.block_on(async move {
        // Inside the runtime: the channel spawns its connection task there.
        let mut client = clowder_worker::client(&opts)?;
        if args.cancel {
            let n = client
                .cancel(CancelRequest { revoke_leased: args.revoke })
                .await
                .with_context(|| format!("cancelling the study at {}", opts.coordinator))?
                .into_inner()
                .cancelled;
            println!("cancelled: {n} runs will not be started{}", if args.revoke { " or were stopped" } else { "" });
            // With nothing running, the coordinator finishes at once: it may be gone already.
            if args.once {
                return Ok(ExitCode::SUCCESS);
            }
        }
        let mut stream =
            tokio::time::timeout(Duration::from_secs(15), client.status(StatusRequest { follow: !args.once }))
                .await
                .with_context(|| format!("coordinator {} did not answer", opts.coordinator))?
                .with_context(|| format!("coordinator {}", opts.coordinator))?
                .into_inner();
        if args.once {
            let u = stream.message().await?.context("empty status stream")?;
            println!("{}", if args.json { snapshot_json(&u) } else { snapshot_text(&u) });
            return Ok(ExitCode::SUCCESS);
        }
        let mut pb = None;
        let mut shown_failures: Vec<String> = Vec::new();
        let mut last = None;
        while let Some(u) = stream.message().await? {
            let bar = pb.get_or_insert_with(|| {
                let b = super::run::progress_bar(u.total, false);
                b.set_position(u.done);
                b.reset_eta();
                b
            });
            bar.set_length(u.total);
            bar.set_position(u.done);
            bar.set_message(format!(
                "{} running, {} limit, {} failed, {} workers, {:.1}/s, coordinator eta {}",
                u.running,
                u.limited,
                u.failed,
                u.workers,
                u.rate_per_second,
                if u.eta_ms > 0 { human_ms(u.eta_ms) } else { "?".into() }
            ));
            for f in &u.recent_failures {
                if !shown_failures.contains(f) {
                    bar.println(format!("failure: {f}"));
                    shown_failures.push(f.clone());
                }
            }
            let finished = u.finished;
            last = Some(u);
            if finished {
                break;
            }
        }
        if let Some(b) = pb {
            b.finish_and_clear();
        }
        match last {
            Some(u) => {
                print!("{}", snapshot_text(&u));
                Ok(ExitCode::SUCCESS)
            }
            None => anyhow::bail!("the coordinator closed the status stream"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_runs_are_counted_on_their_own() {
        let u = StatusUpdate {
            experiment: "x".into(),
            total: 10,
            done: 6,
            limited: 2,
            failed: 1,
            infra_failed: 1,
            ..Default::default()
        };
        let text = snapshot_text(&u);
        assert!(text.contains("2 limit (work cap), 1 failed (1 infrastructure)"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&snapshot_json(&u)).unwrap();
        assert_eq!((json["limited"].as_u64(), json["failed"].as_u64()), (Some(2), Some(1)));
    }
}
