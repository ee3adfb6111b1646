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
}

export interface CompletedCall extends Call {
  status: 'completed';
  completed_at: Date;
  duration_seconds: number;
  summary: string;
}
