// The baseline of bench:delivery, in its own process: the same POSTs as the
// worker sends (same body size, same concurrency), straight to the targets
// with undici and a keep-alive agent.
//
// Warmed up first, as the worker is (bench/delivery.ts sends it a burst of
// `warmUp` deliveries before anything is timed): the same loop runs `warmUp`
// requests untimed, so connections, TLS sessions and the JIT are as in a
// process that has been running a while; a cold loop, timed while the JIT
// compiles it, would be compared with a warm worker.
//
// Prints two JSON lines: {"warm":true} once the warm-up is over (the parent
// starts counting the receivers' CPU there), then latencies, elapsed ms and
// the CPU ms this process spent on the timed loop.
// argv: urlsJson total concurrency bodyBytes warmUp
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

const [urlsJson, totalText, concurrencyText, bodyBytesText, warmUpText = '0'] = process.argv.slice(2);
const urls = JSON.parse(urlsJson);
const concurrency = Number(concurrencyText);
const body = JSON.stringify({ id: 'raw', pad: 'x'.repeat(Math.max(0, Number(bodyBytesText) - 20)) });
const agent = new Agent({ keepAliveTimeout: 60_000 });

/** `total` POSTs, `concurrency` at a time; each one's latency pushed to `latencies`. */
async function loop(total, latencies) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const index = next++;
        const sent = performance.now();
        const res = await request(urls[index % urls.length], {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
          dispatcher: agent,
        });
        await res.body.dump();
        latencies.push(performance.now() - sent);
      }
    }),
  );
}

await loop(Number(warmUpText), []);
process.stdout.write(`${JSON.stringify({ warm: true })}\n`);

const latencies = [];
const started = performance.now();
const cpuBefore = process.cpuUsage();
await loop(Number(totalText), latencies);
const elapsedMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
await agent.close();
process.stdout.write(`${JSON.stringify({ latencies, elapsedMs, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
