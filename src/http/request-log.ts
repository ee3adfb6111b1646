// One log line per request, written when it completes (method, masked URL,
// status, time), instead of Fastify's two (`incoming request` and `request
// completed`). Each line costs a child-logger write with redaction (see
// logger.ts), and the pair was about a third of the CPU of a cached read
// (docs/performance.md). A request that never completes (the process dies
// under it) leaves no line; errors, 404s and stream failures are logged as
// before. A route's logLevel (the probes: warn) still silences its line.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class CompletedRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}
