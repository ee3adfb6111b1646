// Calls as CSV (RFC 4180): one header line, then one line per call, CRLF
// line ends. Every text cell is quoted when it holds a comma, quote, CR or LF
// (quotes doubled), and a cell that a spreadsheet would run as a formula
// (starting with =, +, -, @, tab or CR) is prefixed with an apostrophe
// (OWASP "CSV injection"): summaries are typed by callers and agents.
import type { CallView } from './calls.service.ts';

export const CALLS_CSV_HEADER = ['id', 'created_at', 'completed_at', 'status', 'agent_id', 'agent_name', 'duration_seconds', 'summary'];

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvLine(cells: (string | number | null)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

export function callCsvLine(call: CallView, agentName: string | null): string {
  return csvLine([call.id, call.created_at, call.completed_at, call.status, call.agent_id, agentName, call.duration_seconds, call.summary]);
}
