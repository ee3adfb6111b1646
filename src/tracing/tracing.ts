// The process's trace export, when it is on: one object set at start-up
// (startTracing, start-tracing.ts), read where spans are made. While export is
// off it is undefined and no OpenTelemetry module is even loaded: every
// caller tests `activeTracing()` and goes its own way (the W3C headers of
// trace-context.ts still work), so export off costs nothing but that test.
import type { FastifyInstance } from 'fastify';
import type { StoredTraceContext } from './trace-context.ts';

/** An attribute value as OpenTelemetry takes it. */
export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue | undefined>;

/** A context captured where work was handed over (an item of a group commit): what a batch span links to. */
export type Captured = unknown;

export interface SpanHandle {
  /** Its span id (16 hex digits). */
  readonly spanId: string;
  /** Its trace flags (sampled or not). */
  readonly flags: number;
  setAttributes(attributes: Attributes): void;
  /** Links it to a call's trace (a batch that served the call). */
  link(stored: StoredTraceContext): void;
  /** Ends it; `error` marks it failed (the error's kind only: no message, which may quote values). */
  end(error?: string): void;
  /** Runs `fn` with this span active (its statements become its children). */
  run<T>(fn: () => T): T;
}

export interface Tracing {
  /** The active span as stored with a call: the request's server span. */
  currentContext(): StoredTraceContext | undefined;
  /** The active context, to link to or run in later. */
  capture(): Captured;
  /** Runs `fn` in a captured context. */
  within<T>(captured: Captured, fn: () => T): T;
  /** A span of its own (a new trace), for work done for many: linked to each captured context it served. */
  batch<T>(name: string, served: Captured[], fn: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** An internal span, a child of the active span (one MCP tool call); `fn` runs with it active. */
  child<T>(name: string, attributes: Attributes, fn: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** A client span in the stored trace, a child of the stored span: one delivery attempt. */
  startClient(name: string, parent: StoredTraceContext, attributes: Attributes): SpanHandle;
  /** A PostgreSQL statement's span, a child of the active span; none outside one. */
  statement<T>(name: string, run: (end: (error?: unknown) => void) => T): T;
  /** trace_id and span_id of the active span, for a log line. */
  logFields(): { trace_id: string; span_id: string } | undefined;
  /** Registers the server span hooks on an application. */
  serverSpans(app: FastifyInstance): void;
  /** Exports what is waiting and stops. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The export, or undefined while it is off. */
export function activeTracing(): Tracing | undefined {
  return active;
}

export function setActiveTracing(tracing: Tracing | undefined): void {
  active = tracing;
}
