// A statement with a name and named parameters, as the delivery engine's
// statements are written (src/webhooks/worker/*.queries.ts): the SQL says
// `@limit`, the caller passes `{ limit }`, and nothing depends on the order of either.
// PostgreSQL itself knows only positions ($1, $2, ...): this module numbers the
// names in the order the statement declares them, once, when it is defined.

/** Each parameter's name and its SQL type, in the order PostgreSQL numbers them. */
export type ParameterTypes = Readonly<Record<string, string>>;

export interface NamedStatement<P extends ParameterTypes> {
  /** The name it is prepared under on each connection. */
  readonly name: string;
  /** The parameters' names and types, in their order. */
  readonly parameters: P;
  /** The SQL as written, with `@name` references. */
  readonly source: string;
  /** The SQL with each `@name` replaced by its position ($1, $2, ...). */
  readonly text: string;
}

/** Arguments by name, one for each parameter of `P`. */
export type Arguments<P extends ParameterTypes, V = unknown> = { readonly [K in keyof P]: V };

// `@name` where an identifier starts; `@` is otherwise only an operator nobody here uses.
const REFERENCE = /@([A-Za-z_][A-Za-z0-9_]*)/g;

/** Defines a statement; throws if the SQL names a parameter it does not declare, or declares one it never uses. */
export function namedStatement<P extends ParameterTypes>(name: string, parameters: P, source: string): NamedStatement<P> {
  const names = Object.keys(parameters);
  const used = new Set<string>();
  const text = source.replace(REFERENCE, (_, reference: string) => {
    const position = names.indexOf(reference);
    if (position < 0) throw new TypeError(`statement ${name}: @${reference} is not one of its parameters (${names.join(', ')})`);
    used.add(reference);
    return `$${position + 1}`;
  });
  const unused = names.filter((parameter) => !used.has(parameter));
  if (unused.length > 0) throw new TypeError(`statement ${name}: parameters never used: ${unused.join(', ')}`);
  return { name, parameters, source, text };
}

/** The values in PostgreSQL's order, for a parameterised query. */
export function valuesOf<P extends ParameterTypes>(statement: NamedStatement<P>, args: Arguments<P>): unknown[] {
  return Object.keys(statement.parameters).map((parameter) => args[parameter as keyof P]);
}

/** `PREPARE name (types) AS text`: a statement for the simple query protocol. */
export function prepareText<P extends ParameterTypes>(statement: NamedStatement<P>): string {
  const types = Object.values(statement.parameters);
  return `PREPARE ${statement.name}${types.length > 0 ? ` (${types.join(', ')})` : ''} AS ${statement.text}`;
}

/**
 * `EXECUTE name (literals)`: its arguments as SQL literals, which the caller
 * has checked (numbers it validated, ids matched against a pattern; never free text).
 */
export function executeText<P extends ParameterTypes>(statement: NamedStatement<P>, literals: Arguments<P, string>): string {
  const args = Object.keys(statement.parameters).map((parameter) => literals[parameter as keyof P]);
  return `EXECUTE ${statement.name}${args.length > 0 ? ` (${args.join(', ')})` : ''}`;
}

/** The statement with its arguments written in (checked literals, as executeText's): for EXPLAIN. */
export function inlined<P extends ParameterTypes>(statement: NamedStatement<P>, literals: Arguments<P, string>): string {
  return statement.source.replace(
    REFERENCE,
    (_, reference: string) => `(${literals[reference as keyof P]})::${statement.parameters[reference]}`,
  );
}
