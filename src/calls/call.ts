// A call as stored (the calls table's columns), as every module of calls reads it.

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
