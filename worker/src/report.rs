//! Reporting: each run's timeline samples while it runs, then its result, re-sent until the
//! coordinator acknowledges it (it does so only after storing it).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use clowder_proto::{ReportMessage, RunResult, report_message};
use tokio::sync::mpsc;

use crate::Client;
use crate::inner::{Backoff, Inner, Started, is_fatal};

/// The reporter: one task per started run.
pub(crate) fn spawn_reporter(
    inner: Arc<Inner>,
    client: Client,
    mut started_rx: mpsc::UnboundedReceiver<Started>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(s) = started_rx.recv().await {
            inner.unacked.fetch_add(1, Ordering::SeqCst);
            let inner = Arc::clone(&inner);
            let client = client.clone();
            tokio::spawn(async move {
                report_run(&inner, client, s).await;
                inner.unacked.fetch_sub(1, Ordering::SeqCst);
                inner.delivered.notify_waiters();
            });
        }
    })
}

/// Streams a run's samples while it runs, then its result; re-sends the
/// result until it is acknowledged.
async fn report_run(inner: &Inner, client: Client, s: Started) {
    let Started { mut samples, mut result } = s;
    let (tx, rx) = mpsc::channel::<ReportMessage>(64);
    let call = {
        let mut client = client.clone();
        tokio::spawn(async move { client.report(tokio_stream::wrappers::ReceiverStream::new(rx)).await })
    };
    let mut samples_open = true;
    let final_result = loop {
        tokio::select! {
            s = samples.recv(), if samples_open => match s {
                // Progress only: dropped when the coordinator is slow or gone.
                Some(s) => { let _ = tx.try_send(ReportMessage { body: Some(report_message::Body::Sample(s)) }); }
                None => samples_open = false,
            },
            r = &mut result => break r,
        }
    };
    let Ok(final_result) = final_result else {
        // The slot went away without a result (worker shutting down).
        call.abort();
        return;
    };
    let sent = tx.send(ReportMessage { body: Some(report_message::Body::Result(final_result.clone())) }).await.is_ok();
    drop(tx);
    if sent && let Ok(Ok(ack)) = call.await {
        inner.note_ack(&final_result, ack.get_ref());
        inner.forget_delivering(&final_result.lease_id);
        return;
    }
    deliver(inner, client, final_result).await;
}

/// Sends a result until the coordinator acknowledges (or definitively refuses) it.
pub(crate) async fn deliver(inner: &Inner, client: Client, r: RunResult) {
    deliver_until_done(inner, client, &r).await;
    inner.forget_delivering(&r.lease_id);
}

async fn deliver_until_done(inner: &Inner, mut client: Client, r: &RunResult) {
    let mut backoff = Backoff::new(&r.run_id);
    loop {
        let msg = ReportMessage { body: Some(report_message::Body::Result(r.clone())) };
        match client.report(tokio_stream::iter(vec![msg])).await {
            Ok(ack) => {
                inner.note_ack(r, ack.get_ref());
                return;
            }
            Err(s) if is_fatal(&s) => {
                inner.log(format!("result of run {} refused: {}", r.run_id, s.message()));
                return;
            }
            Err(_) => {
                if inner.give_up.load(Ordering::SeqCst) {
                    return;
                }
                tokio::time::sleep(backoff.next()).await;
            }
        }
    }
}
