// A call as stored (the calls table's columns), as every module of calls reads
// it, and as every answer and page shows it (CallView: instants as ISO text).

export type CallStatus = 'in_progress' | 'completed';

export interface Call {
  id: string;
  organization_id: string;
  agent_id: string | null;
  status: CallStatus;
  created_at: Date;
  completed_at: Date | null;
  duration_seconds: number | null;
  summary: string | null;
  direction: 'inbound' | 'outbound' | null;
  from_number: string | null;
  to_number: string | null;
  agent_name: string | null;
  location_id: string | null;
  location_name: string | null;
  recording_url: string | null;
  transcript: string | null;
  metadata: Record<string, string>;
  /** The call's page in the web UI (app_call_url). */
  url: string;
}

export interface CompletedCall extends Call {
  status: 'completed';
  completed_at: Date;
  duration_seconds: number;
  summary: string;
}

export interface CallView extends Omit<Call, 'created_at' | 'completed_at'> {
  created_at: string;
  completed_at: string | null;
}

export function callView(call: Call): CallView {
  return {
    id: call.id,
    organization_id: call.organization_id,
    agent_id: call.agent_id,
    status: call.status,
    created_at: call.created_at.toISOString(),
    completed_at: call.completed_at?.toISOString() ?? null,
    duration_seconds: call.duration_seconds,
    summary: call.summary,
    direction: call.direction,
    from_number: call.from_number,
    to_number: call.to_number,
    agent_name: call.agent_name,
    location_id: call.location_id,
    location_name: call.location_name,
    recording_url: call.recording_url,
    transcript: call.transcript,
    metadata: call.metadata,
    url: call.url,
  };
}
