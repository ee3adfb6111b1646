// What a reader's terminal shows for a program's output: carriage returns and
// the cursor and erase sequences act on the line as a terminal would, colours
// are dropped. npm's spinner (npx, npm exec) draws on the current line and
// then erases the whole of it, so a line another program printed without a
// newline is gone from the screen; `wiped` keeps what was erased that way.

/** The characters of npm's spinner (braille dots, or -\|/ without Unicode). */
const SPINNER = /[\u2800-\u28ff\-\\|/\s]/gu;

export interface Screen {
  /** The lines as the terminal shows them, joined with "\n". */
  text: string;
  /** Text that was on the screen and was erased (spinner frames aside), in order. */
  wiped: string[];
}

export function renderTerminal(raw: string): Screen {
  const lines: string[] = [];
  const wiped: string[] = [];
  let line: string[] = [];
  let column = 0;
  const erase = (from: number, to: number) => {
    const gone = line.slice(from, to).join('');
    if (gone.replace(SPINNER, '') !== '') wiped.push(gone.replace(/[\u2800-\u28ff]/gu, '').trim());
    for (let i = from; i < Math.min(to, line.length); i++) line[i] = ' ';
    if (to >= line.length) line.length = Math.min(line.length, from);
  };
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i]!;
    if (char === '\n') {
      lines.push(line.join('').trimEnd());
      line = [];
      column = 0;
    } else if (char === '\r') {
      column = 0;
    } else if (char === '\b') {
      column = Math.max(0, column - 1);
    } else if (char === '\x1b') {
      const csi = /^\[([?\d;]*)([@-~])/.exec(raw.slice(i + 1, i + 32));
      if (csi) {
        i += csi[0].length;
        const n = Number.parseInt(csi[1]!.replace('?', ''), 10);
        switch (csi[2]) {
          case 'G': // cursor to column n
            column = (Number.isNaN(n) ? 1 : n) - 1;
            break;
          case 'C': // cursor forward
            column += Number.isNaN(n) ? 1 : n;
            break;
          case 'D': // cursor back
            column = Math.max(0, column - (Number.isNaN(n) ? 1 : n));
            break;
          case 'K': // erase in line: 0 to the end, 1 to the cursor, 2 all of it
            if (Number.isNaN(n) || n === 0) erase(column, Number.POSITIVE_INFINITY);
            else if (n === 1) erase(0, column + 1);
            else erase(0, Number.POSITIVE_INFINITY);
            break;
          default: // colours, cursor visibility: nothing on the line changes
        }
        continue;
      }
      i++; // another escape (none of the tools the documents run prints one) is two characters
    } else {
      while (line.length < column) line.push(' ');
      line[column++] = char;
    }
  }
  if (line.length > 0) lines.push(line.join('').trimEnd());
  return { text: lines.join('\n'), wiped };
}
