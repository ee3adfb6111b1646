// Calls as CSV (RFC 4180): one header line, then one line per call, CRLF
// line ends. Summaries and agent names are typed by callers and agents, so
// every cell must stay inert text in any spreadsheet (OWASP "CSV injection"),
// whichever separator it splits on: `,`, the `;` of locales whose decimal
// mark is a comma, or tab when the file is read as tab-separated. Hence:
//   - every text cell is quoted (quotes doubled), so a reader honouring the
//     quotes keeps it whole whatever its separator;
//   - wherever a cell could begin for a reader that splits inside it (the
//     cell's start, and after `,` `;` tab CR LF or a quote, spaces skipped as
//     an import that trims them would), a formula start (=, +, -, @, tab, CR)
//     gets an apostrophe before it, which spreadsheets read as "text".
// Numbers (durations) and empty cells are written bare: they carry no text.
import type { CallView } from './calls.service.ts';

export const CALLS_CSV_HEADER = ['id', 'created_at', 'completed_at', 'status', 'agent_id', 'agent_name', 'duration_seconds', 'summary'];

/** The spaces (maybe none) at a place a cell may begin (see above), when a formula start follows. */
const CELL_START_FORMULA = /(?<=^|[,;\t\r\n"]) *(?=[=+\-@\t\r])/g;

export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  return `"${value.replace(CELL_START_FORMULA, "$&'").replace(/"/g, '""')}"`;
}

export function csvLine(cells: (string | number | null)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

export function callCsvLine(call: CallView, agentName: string | null): string {
  return csvLine([call.id, call.created_at, call.completed_at, call.status, call.agent_id, agentName, call.duration_seconds, call.summary]);
}
