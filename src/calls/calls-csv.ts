// Calls as CSV (RFC 4180): one header line, then one line per call, CRLF
// line ends. Summaries, transcripts and names are typed by callers and agents, so
// every cell must stay inert text in any spreadsheet (OWASP "CSV injection"),
// whichever separator it splits on: `,`, the `;` of locales whose decimal
// mark is a comma, or tab when the file is read as tab-separated. Hence:
//   - every text cell is quoted (quotes doubled), so a reader honouring the
//     quotes keeps it whole whatever its separator;
//   - wherever a cell could begin for a reader that splits inside it (the
//     cell's start, and after `,` `;` a quote, tab, or a line break), with any
//     whitespace skipped as an import that trims it would, a formula start
//     (=, +, -, @, tab, CR) gets an apostrophe before it, which spreadsheets
//     read as "text".
// "Any" reader means Unicode-aware ones too: an import that folds
// compatibility forms (NFKC) reads the full-width `＝` as `=` and `；` as `;`,
// one that trims Unicode whitespace drops a no-break or ideographic space, and
// Python's splitlines() breaks at \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029.
// So each of these sets holds every character that folds to one of its members.
// Numbers (durations) and empty cells are written bare: they carry no text.
import type { CallView } from './call.ts';

export const CALLS_CSV_HEADER = [
  'id',
  'created_at',
  'completed_at',
  'status',
  'agent_id',
  'agent_name',
  'duration_seconds',
  'summary',
  'direction',
  'from_number',
  'to_number',
  'location_id',
  'location_name',
  'recording_url',
  'transcript',
];

/** Line breaks of some reader: LF, VT, FF, CR, the file/group/record separators, NEL, U+2028, U+2029. */
const LINE_BREAKS = String.raw`\n\v\f\r\x1c-\x1e\x85\u2028\u2029`;
/** `,` `;` and `"` and the forms NFKC folds to them (full-width, small, Greek question mark, vertical). */
const SEPARATORS = String.raw`,;"\uff0c\uff1b\uff02\ufe50\ufe54\ufe10\ufe14\u037e`;
/** = + - @ and the forms NFKC folds to them (full-width, small, super- and subscript, Hebrew plus), then tab and CR. */
const FORMULA_STARTS = String.raw`=+\-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u207c\u207a\u208c\u208a\ufb29\t\r`;
/** Whitespace a trimming import drops (Unicode White_Space, BOM, zero-width space), but not a break: that starts a cell itself. */
const SPACE = String.raw`(?![\t${LINE_BREAKS}])[\p{White_Space}\ufeff\u200b]`;

/** The whitespace (maybe none) at a place a cell may begin (see above), when a formula start follows. */
const CELL_START_FORMULA = new RegExp(String.raw`(?<=^|[${SEPARATORS}\t${LINE_BREAKS}])(?:${SPACE})*(?=[${FORMULA_STARTS}])`, 'gu');

export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  return `"${value.replace(CELL_START_FORMULA, "$&'").replace(/"/g, '""')}"`;
}

export function csvLine(cells: (string | number | null)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

export function callCsvLine(call: CallView, agentName: string | null): string {
  return csvLine([
    call.id,
    call.created_at,
    call.completed_at,
    call.status,
    call.agent_id,
    agentName,
    call.duration_seconds,
    call.summary,
    call.direction,
    call.from_number,
    call.to_number,
    call.location_id,
    call.location_name,
    call.recording_url,
    call.transcript,
  ]);
}
