import { runUntilSignalled } from '../../server.js';
export function serve(ctx) {
    return runUntilSignalled(ctx.config, { http: true, workers: ctx.flags['no-worker'] !== true });
}
export function worker(ctx) {
    return runUntilSignalled(ctx.config, { http: false, workers: true });
}
//# sourceMappingURL=serve.js.map