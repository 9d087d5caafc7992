//! A message move task's record: what StartMessageMoveTask started and how far it got.

use serde_json::{Map, Value, json};

/// A task's status as AWS names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskStatus {
    Running,
    Completed,
    Cancelling,
    Cancelled,
    Failed,
}

impl TaskStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Running => "RUNNING",
            Self::Completed => "COMPLETED",
            Self::Cancelling => "CANCELLING",
            Self::Cancelled => "CANCELLED",
            Self::Failed => "FAILED",
        }
    }

    pub(crate) fn active(self) -> bool {
        matches!(self, Self::Running | Self::Cancelling)
    }
}

/// One move task.
#[derive(Debug, Clone)]
pub(crate) struct MoveTask {
    pub handle: String,
    pub source_arn: String,
    pub destination_arn: Option<String>,
    pub max_rate: Option<u32>,
    pub status: TaskStatus,
    pub moved: u64,
    pub to_move: u64,
    pub started_ms: u64,
    pub failure_reason: Option<String>,
}

impl MoveTask {
    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        if self.status == TaskStatus::Running {
            out.insert("TaskHandle".into(), json!(self.handle));
        }
        out.insert("Status".into(), json!(self.status.as_str()));
        out.insert("SourceArn".into(), json!(self.source_arn));
        if let Some(d) = &self.destination_arn {
            out.insert("DestinationArn".into(), json!(d));
        }
        if let Some(r) = self.max_rate {
            out.insert("MaxNumberOfMessagesPerSecond".into(), json!(r));
        }
        out.insert("ApproximateNumberOfMessagesMoved".into(), json!(self.moved));
        out.insert(
            "ApproximateNumberOfMessagesToMove".into(),
            json!(self.to_move),
        );
        if let Some(f) = &self.failure_reason {
            out.insert("FailureReason".into(), json!(f));
        }
        out.insert("StartedTimestamp".into(), json!(self.started_ms));
        Value::Object(out)
    }
}
