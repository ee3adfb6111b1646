// The catalog reads behind db/schema.sql (scripts/live-schema.ts renders them).
// Each reads the public schema only, leaves out what an extension owns, and
// returns rows in a fixed order, so the file is the same on every run. They
// use PostgreSQL's own deparsers (pg_get_functiondef, pg_get_indexdef, ...),
// which print the same text on PostgreSQL 15 and 17; pg_dump cannot serve
// both, since the machine's pg_dump 15 refuses a 17 server and the embedded
// package ships no pg_dump.
import type pg from 'pg';

type Reader = Pick<pg.ClientBase, 'query'>;

const NOT_FROM_EXTENSION = (catalog: string, oid: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${catalog}'::regclass AND d.objid = ${oid} AND d.deptype = 'e')`;

/** The role that ran the migrations (owner of what they made); rendered as CURRENT_USER. */
export async function migratorRole(db: Reader): Promise<string> {
  const { rows } = await db.query<{ name: string }>('SELECT current_user AS name');
  return rows[0]!.name;
}

/** Objects of kinds the renderer does not know, so a new kind fails loudly instead of going missing. */
export async function unsupportedObjects(db: Reader): Promise<string[]> {
  const { rows } = await db.query<{ what: string }>(`
    SELECT format('%s %s', CASE c.relkind WHEN 'p' THEN 'partitioned table' WHEN 'f' THEN 'foreign table' ELSE 'relation kind ' || c.relkind::text END, c.relname) AS what
      FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('p', 'f')
    UNION ALL
    SELECT format('table partition %s', c.relname) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relispartition
    UNION ALL
    SELECT format('inherited table %s', c.relname) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE c.relnamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('type %s (typtype %s)', t.typname, t.typtype) FROM pg_type t
     WHERE t.typnamespace = 'public'::regnamespace AND t.typtype NOT IN ('c', 'e') AND t.typelem = 0
       AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.typarray = t.oid) AND ${NOT_FROM_EXTENSION('pg_type', 't.oid')}
    UNION ALL
    SELECT format('function %s (prokind %s)', p.oid::regprocedure, p.prokind) FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.prokind NOT IN ('f', 'p') AND ${NOT_FROM_EXTENSION('pg_proc', 'p.oid')}
    UNION ALL
    SELECT format('rule %s on %s', r.rulename, r.ev_class::regclass) FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
     WHERE c.relnamespace = 'public'::regnamespace AND r.rulename <> '_RETURN'
    UNION ALL
    SELECT format('schema %s', n.nspname) FROM pg_namespace n
     WHERE n.nspname NOT IN ('public', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
    UNION ALL
    SELECT format('event trigger %s', evtname) FROM pg_event_trigger
    UNION ALL
    SELECT format('publication %s', pubname) FROM pg_publication
    ORDER BY 1`);
  return rows.map((row) => row.what);
}

export async function extensions(db: Reader): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(`SELECT extname AS name FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY 1`);
  return rows.map((row) => row.name);
}

export interface TypeRow {
  name: string;
  kind: 'c' | 'e';
  /** Composite: `name type` per attribute; enum: quoted labels. */
  parts: string[];
}

export async function types(db: Reader): Promise<TypeRow[]> {
  const { rows } = await db.query<TypeRow>(`
    SELECT quote_ident(t.typname) AS name, t.typtype AS kind,
           CASE t.typtype
             WHEN 'c' THEN ARRAY(SELECT format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)) FROM pg_attribute a
                                 WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum)
             ELSE ARRAY(SELECT quote_literal(e.enumlabel) FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder)
           END AS parts
      FROM pg_type t
     WHERE t.typnamespace = 'public'::regnamespace AND t.typtype IN ('c', 'e')
       AND (t.typtype = 'e' OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c')
       AND ${NOT_FROM_EXTENSION('pg_type', 't.oid')}
     ORDER BY t.typname`);
  return rows;
}

export async function sequences(db: Reader): Promise<{ name: string; definition: string }[]> {
  const { rows } = await db.query<{ name: string; definition: string }>(`
    SELECT quote_ident(s.sequencename) AS name,
           format('AS %s INCREMENT BY %s MINVALUE %s MAXVALUE %s START WITH %s CACHE %s%s', s.data_type, s.increment_by,
                  s.min_value, s.max_value, s.start_value, s.cache_size, CASE WHEN s.cycle THEN ' CYCLE' ELSE '' END) AS definition
      FROM pg_sequences s
     WHERE s.schemaname = 'public'
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                          AND d.objid = format('public.%I', s.sequencename)::regclass AND d.deptype IN ('i', 'e'))
     ORDER BY 1`);
  return rows;
}

export interface TableRow {
  name: string;
  unlogged: boolean;
  rowSecurity: boolean;
  forceRowSecurity: boolean;
  options: string[] | null;
}

export async function tables(db: Reader): Promise<TableRow[]> {
  const { rows } = await db.query<TableRow>(`
    SELECT quote_ident(c.relname) AS name, c.relpersistence = 'u' AS unlogged, c.relrowsecurity AS "rowSecurity",
           c.relforcerowsecurity AS "forceRowSecurity", c.reloptions AS options
      FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND ${NOT_FROM_EXTENSION('pg_class', 'c.oid')}
     ORDER BY c.relname`);
  return rows;
}

export interface ColumnRow {
  table: string;
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  identity: string;
  generated: string;
  collation: string | null;
}

/** Columns in their table's order (attnum): the order `SELECT *` returns. */
export async function columns(db: Reader): Promise<ColumnRow[]> {
  const { rows } = await db.query<ColumnRow>(`
    SELECT quote_ident(c.relname) AS table, quote_ident(a.attname) AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS "notNull",
           pg_get_expr(ad.adbin, ad.adrelid) AS default, a.attidentity AS identity, a.attgenerated AS generated,
           CASE WHEN a.attcollation <> t.typcollation THEN quote_ident(co.collname) END AS collation
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_type t ON t.oid = a.atttypid
      LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
      LEFT JOIN pg_collation co ON co.oid = a.attcollation
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY c.relname, a.attnum`);
  return rows;
}

/** Table constraints (primary key, unique, foreign key, check, exclusion); NOT NULL is a column's. */
export async function constraints(db: Reader): Promise<{ table: string; name: string; definition: string }[]> {
  const { rows } = await db.query<{ table: string; name: string; definition: string }>(`
    SELECT quote_ident(c.relname) AS table, quote_ident(k.conname) AS name, pg_get_constraintdef(k.oid) AS definition
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND k.contype IN ('p', 'u', 'f', 'c', 'x')
     ORDER BY c.relname, k.contype = 'f', k.conname`);
  return rows;
}

/** Indexes other than those a constraint makes. */
export async function indexes(db: Reader): Promise<{ table: string; name: string; definition: string }[]> {
  const { rows } = await db.query<{ table: string; name: string; definition: string }>(`
    SELECT quote_ident(t.relname) AS table, quote_ident(c.relname) AS name, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
     WHERE t.relnamespace = 'public'::regnamespace
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid
                          AND k.contype IN ('p', 'u', 'x'))
       AND ${NOT_FROM_EXTENSION('pg_class', 'c.oid')}
     ORDER BY t.relname, c.relname`);
  return rows;
}

export async function statistics(db: Reader): Promise<{ name: string; definition: string }[]> {
  const { rows } = await db.query<{ name: string; definition: string }>(`
    SELECT quote_ident(s.stxname) AS name, pg_get_statisticsobjdef(s.oid) AS definition
      FROM pg_statistic_ext s WHERE s.stxnamespace = 'public'::regnamespace ORDER BY 1`);
  return rows;
}

export async function views(db: Reader): Promise<{ name: string; materialized: boolean; options: string[] | null; query: string }[]> {
  const { rows } = await db.query<{ name: string; materialized: boolean; options: string[] | null; query: string }>(`
    SELECT quote_ident(c.relname) AS name, c.relkind = 'm' AS materialized, c.reloptions AS options, pg_get_viewdef(c.oid, true) AS query
      FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('v', 'm') AND ${NOT_FROM_EXTENSION('pg_class', 'c.oid')}
     ORDER BY c.relname`);
  return rows;
}

export async function functions(db: Reader): Promise<{ signature: string; definition: string }[]> {
  const { rows } = await db.query<{ signature: string; definition: string }>(`
    SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition
      FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p') AND ${NOT_FROM_EXTENSION('pg_proc', 'p.oid')}
     ORDER BY p.proname, p.oid::regprocedure::text COLLATE "C"`);
  return rows;
}

export async function triggers(db: Reader): Promise<{ table: string; name: string; definition: string }[]> {
  const { rows } = await db.query<{ table: string; name: string; definition: string }>(`
    SELECT quote_ident(c.relname) AS table, quote_ident(g.tgname) AS name, pg_get_triggerdef(g.oid, true) AS definition
      FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
     WHERE c.relnamespace = 'public'::regnamespace AND NOT g.tgisinternal
     ORDER BY c.relname, g.tgname`);
  return rows;
}

export interface PolicyRow {
  table: string;
  name: string;
  permissive: string;
  roles: string[];
  command: string;
  using: string | null;
  check: string | null;
}

export async function policies(db: Reader): Promise<PolicyRow[]> {
  const { rows } = await db.query<PolicyRow>(`
    SELECT quote_ident(p.tablename) AS table, quote_ident(p.policyname) AS name, p.permissive,
           ARRAY(SELECT CASE WHEN r = 'public' THEN 'PUBLIC' ELSE quote_ident(r) END FROM unnest(p.roles) r ORDER BY 1) AS roles, p.cmd AS command,
           p.qual AS using, p.with_check AS check
      FROM pg_policies p WHERE p.schemaname = 'public'
     ORDER BY p.tablename, p.policyname`);
  return rows;
}

export interface GrantRow {
  /** `TABLE name`, `FUNCTION name(args)`, `SCHEMA public`, ... as GRANT names it. */
  object: string;
  /** Set for a column privilege. */
  column: string | null;
  /** Null (with privilege and grantable) when only the owner holds privileges on an explicit list. */
  grantee: string | null;
  privilege: string | null;
  grantable: boolean | null;
  /** The object's privileges were set explicitly (false: the built-in defaults apply). */
  explicit: boolean;
  /** Whether PUBLIC keeps a privilege on it (functions: EXECUTE unless revoked). */
  publicGranted: boolean;
}

/**
 * Privileges granted to roles other than the object's owner. (The owner's own
 * set differs by version: PostgreSQL 17 adds MAINTAIN.)
 */
export async function grants(db: Reader): Promise<GrantRow[]> {
  const { rows } = await db.query<GrantRow>(`
    WITH objects AS (
      SELECT format('%s %I', CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.relname) AS object, NULL::name AS column,
             c.relowner AS owner, c.relacl AS acl, 1 AS kind, c.relname::text AS sort
        FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'S')
      UNION ALL
      SELECT format('TABLE %I', c.relname), a.attname, c.relowner, a.attacl, 2, c.relname::text || '.' || a.attname
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       WHERE c.relnamespace = 'public'::regnamespace AND a.attacl IS NOT NULL AND a.attnum > 0 AND NOT a.attisdropped
      UNION ALL
      SELECT format('%s %s', CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, p.oid::regprocedure), NULL, p.proowner,
             p.proacl, 3, p.oid::regprocedure::text
        FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND ${NOT_FROM_EXTENSION('pg_proc', 'p.oid')}
      UNION ALL
      SELECT format('TYPE %I', t.typname), NULL, t.typowner, t.typacl, 4, t.typname::text
        FROM pg_type t WHERE t.typnamespace = 'public'::regnamespace AND t.typacl IS NOT NULL
      UNION ALL
      SELECT 'SCHEMA public', NULL, n.nspowner, n.nspacl, 0, '' FROM pg_namespace n WHERE n.nspname = 'public'
    ),
    entries AS (
      SELECT o.*, x.grantee AS grantee_oid, x.privilege_type, x.is_grantable FROM objects o, aclexplode(o.acl) x
    )
    SELECT o.object, quote_ident(o.column) AS column, CASE WHEN e.grantee_oid = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS grantee, e.privilege_type AS privilege,
           e.is_grantable AS grantable, o.acl IS NOT NULL AS explicit,
           EXISTS (SELECT 1 FROM aclexplode(o.acl) x WHERE x.grantee = 0) AS "publicGranted"
      FROM objects o
      LEFT JOIN entries e ON e.object = o.object AND e.column IS NOT DISTINCT FROM o.column AND e.grantee_oid <> o.owner
      LEFT JOIN pg_roles r ON r.oid = e.grantee_oid
     WHERE o.acl IS NOT NULL
     ORDER BY o.kind, o.sort COLLATE "C", o.column NULLS FIRST, r.rolname NULLS FIRST, e.privilege_type COLLATE "C"`);
  return rows;
}

/** COMMENT ON for tables, views, columns, functions and types. */
export async function comments(db: Reader): Promise<{ object: string; text: string }[]> {
  const { rows } = await db.query<{ object: string; text: string }>(`
    SELECT CASE WHEN d.classoid = 'pg_class'::regclass AND d.objsubid > 0
                  THEN format('COLUMN %I.%I', c.relname, (SELECT attname FROM pg_attribute WHERE attrelid = c.oid AND attnum = d.objsubid))
                WHEN d.classoid = 'pg_class'::regclass THEN format('%s %I', CASE c.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, c.relname)
                WHEN d.classoid = 'pg_proc'::regclass THEN format('FUNCTION %s', d.objoid::regprocedure)
                ELSE format('TYPE %s', d.objoid::regtype) END AS object,
           d.description AS text
      FROM pg_description d
      LEFT JOIN pg_class c ON d.classoid = 'pg_class'::regclass AND c.oid = d.objoid
      LEFT JOIN pg_proc p ON d.classoid = 'pg_proc'::regclass AND p.oid = d.objoid
      LEFT JOIN pg_type t ON d.classoid = 'pg_type'::regclass AND t.oid = d.objoid
     WHERE COALESCE(c.relnamespace, p.pronamespace, t.typnamespace) = 'public'::regnamespace
     ORDER BY d.classoid, d.objoid, d.objsubid`);
  return rows;
}
