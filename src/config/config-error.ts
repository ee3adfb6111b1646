/** A setting the process cannot run with: its message names the variable, and the process exits 78. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.variable = variable;
    this.name = 'ConfigError';
  }
}
