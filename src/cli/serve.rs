//! `sqsprobe serve`: the embedded emulator as a standalone local SQS (and STS
//! GetCallerIdentity), stopped by Ctrl-C, SIGTERM or SIGHUP alike.

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;

use super::args::{QueueUrlsArg, ServeArgs};
use super::error::{CommandError, Outcome};
use sqsprobe_emulator::{EmulatorConfig, QueueUrls, serve};

/// Serves until a signal; a signal is how it is meant to stop, so it ends [`Outcome::Done`].
pub(super) async fn run(args: ServeArgs) -> Result<Outcome, CommandError> {
    // Signal handlers go in before the port opens, so a signal sent as soon as the port answers
    // is never the default (killing) action.
    let (stop_tx, stop_rx) = oneshot::channel();
    let first = first_signal().map_err(CommandError::Signals)?;
    let stop_signal = tokio::spawn(async move {
        let _ = stop_tx.send(first.await);
    });
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|source| CommandError::Listen {
            addr: args.listen,
            source,
        })?;
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let config = EmulatorConfig {
        region: args.region,
        account_id: args.account_id,
        strict_cooldowns: !args.no_cooldowns,
        chaos: args.chaos.unwrap_or_default(),
        max_queues: args.max_queues,
        max_messages: args.max_messages,
        max_stored_bytes: args.max_stored_bytes,
        max_request_bytes: usize::try_from(args.max_request_bytes).unwrap_or(usize::MAX),
        max_connections: args.max_connections as usize,
        header_read_timeout: args.header_read_timeout,
        idle_timeout: args.idle_timeout,
        shutdown_grace: args.shutdown_grace,
        reject_access_keys: args.reject_access_key,
        expire_access_keys: args.expire_access_key,
        queue_urls: match args.queue_urls {
            QueueUrlsArg::Regional => QueueUrls::Regional,
            QueueUrlsArg::RegionLess => QueueUrls::RegionLess,
        },
        ..EmulatorConfig::default()
    };
    if let Some(chaos) = args.chaos.filter(|c| !c.is_off()) {
        eprintln!("sqsprobe: chaos on: {chaos}");
    }
    eprintln!("sqsprobe: SQS emulator listening on http://{addr} (Ctrl-C to stop)");
    let (name_tx, name_rx) = oneshot::channel();
    let shutdown = async move {
        let name = stop_rx.await.unwrap_or("shutdown");
        let _ = name_tx.send(name);
    };
    let served = serve(listener, config, shutdown).await;
    stop_signal.abort();
    let signal = name_rx.await.unwrap_or("shutdown");
    served.map_err(CommandError::Emulator)?;
    eprintln!("sqsprobe: emulator stopped ({signal})");
    Ok(Outcome::Done)
}

/// Installs SIGINT, SIGTERM and SIGHUP handlers; the future resolves to the first one's name.
fn first_signal() -> std::io::Result<impl Future<Output = &'static str>> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
            _ = hangup.recv() => "SIGHUP",
        }
    })
}
