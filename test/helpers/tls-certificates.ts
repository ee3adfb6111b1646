// A throwaway certificate authority and a server certificate for the
// loopback names, made with the openssl CLI. scripts/test.ts trusts the CA
// in the test processes through NODE_EXTRA_CA_CERTS, so HTTPS targets on
// 127.0.0.1 are verified exactly as a real target would be.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestTls {
  caCertPath: string;
  certPath: string;
  keyPath: string;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  try {
    await run('openssl', args, { cwd: dir });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl ${args[0]} failed: ${stderr.trim() || (err as Error).message}`);
  }
}

/** Writes ca.pem, server.pem and server-key.pem (valid 7 days, SANs 127.0.0.1, ::1, localhost) into `dir`. */
export async function generateTestTls(dir: string): Promise<TestTls> {
  const serial = () => `0x${randomBytes(16).toString('hex')}`;
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '7',
    '-set_serial',
    serial(),
    '-subj',
    '/CN=Switchboard throwaway test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await openssl(dir, ['req', ...ec, '-keyout', 'server-key.pem', '-out', 'server.csr', '-subj', '/CN=localhost']);
  await writeFile(
    path.join(dir, 'server.ext'),
    [
      'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      '',
    ].join('\n'),
  );
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-set_serial',
    serial(),
    '-days',
    '7',
    '-extfile',
    'server.ext',
    '-out',
    'server.pem',
  ]);
  return { caCertPath: path.join(dir, 'ca.pem'), certPath: path.join(dir, 'server.pem'), keyPath: path.join(dir, 'server-key.pem') };
}
