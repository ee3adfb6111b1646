import { boolean, rate } from '../kinds.ts';
import { setting } from '../setting.ts';

export const MCP = {
  MCP_ENABLED: setting({
    kind: boolean,
    default: 'true',
    meaning: 'Serve the MCP server at `{BASE_URL}/mcp` and its protected resource metadata ([mcp.md](mcp.md)); `false`: both answer 404.',
  }),
  MCP_RATE_LIMIT: setting({
    kind: rate,
    default: '120/min',
    meaning: 'Requests to `/mcp` per grant (one assistant’s connection for one user); past it, 429.',
  }),
};
