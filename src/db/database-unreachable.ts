// Its own module, with no import: the CLI tells this error apart (its message
// alone, exit 1) without loading the driver for every command and --help.
/** No PostgreSQL answered at the address `variable` names. */
export class DatabaseUnreachableError extends Error {
  readonly variable: string;
  readonly address: string;
  readonly reason: string;
  constructor(variable: string, address: string, reason: string) {
    super(`${variable}: no PostgreSQL answers at ${address} (${reason}); start it, or set ${variable} to its host and port`);
    this.variable = variable;
    this.address = address;
    this.reason = reason;
    this.name = 'DatabaseUnreachableError';
  }
}
