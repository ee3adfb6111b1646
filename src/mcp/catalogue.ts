// The tools, built once per process: the tools/list answer as plain JSON and
// each tool's argument validator compiled. A request only looks them up.
import { compileStrict } from '../http/validation.ts';
import { getCallTool, listRecentCalls, searchCalls } from './tools/calls.tools.ts';
import { getDeliveryHealth } from './tools/delivery-health.tools.ts';
import { locationTools } from './tools/locations.tools.ts';
import type { Tool } from './tools/tool.ts';

export const TOOLS: readonly Tool[] = [listRecentCalls, searchCalls, getCallTool, ...locationTools, getDeliveryHealth];

export interface CatalogueEntry {
  tool: Tool;
  validate: ReturnType<typeof compileStrict>;
}

export interface Catalogue {
  /** The tools/list result: every tool, whatever the token's scopes. */
  list: { tools: Record<string, unknown>[] };
  byName: ReadonlyMap<string, CatalogueEntry>;
}

/** A schema as JSON (TypeBox's own markers dropped). */
function plain(schema: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export function buildCatalogue(tools: readonly Tool[] = TOOLS): Catalogue {
  const byName = new Map<string, CatalogueEntry>();
  const list = tools.map((tool) => {
    const inputSchema = plain(tool.input);
    byName.set(tool.name, { tool, validate: compileStrict(inputSchema) });
    return {
      name: tool.name,
      title: tool.title,
      description: `${tool.description} Needs the ${tool.scope} scope.`,
      inputSchema,
      outputSchema: plain(tool.output),
      annotations: { title: tool.title, ...tool.annotations, openWorldHint: false },
    };
  });
  return { list: { tools: list }, byName };
}
