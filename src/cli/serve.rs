//! `sqsprobe serve`: the embedded emulator as a standalone local SQS.

use super::args::ServeArgs;
use crate::emulator::{EmulatorConfig, serve};
use crate::exit_code;

pub async fn run(args: ServeArgs) -> i32 {
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("sqsprobe: failed to listen on {}: {e}", args.listen);
            return exit_code::RUNTIME_ERROR;
        }
    };
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let config = EmulatorConfig {
        region: args.region,
        account_id: args.account_id,
        strict_cooldowns: !args.no_cooldowns,
        chaos: args.chaos.unwrap_or_default(),
        ..EmulatorConfig::default()
    };
    if let Some(chaos) = args.chaos.filter(|c| !c.is_off()) {
        eprintln!("sqsprobe: chaos on: {chaos}");
    }
    eprintln!("sqsprobe: SQS emulator listening on http://{addr} (Ctrl-C to stop)");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match serve(listener, config, shutdown).await {
        Ok(()) => {
            eprintln!("sqsprobe: emulator stopped");
            exit_code::OK
        }
        Err(e) => {
            eprintln!("sqsprobe: emulator failed: {e}");
            exit_code::RUNTIME_ERROR
        }
    }
}
