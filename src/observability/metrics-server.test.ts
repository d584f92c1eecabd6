import { afterEach, describe, expect, it } from 'vitest';
import { MetricsServer } from './metrics-server.js';

describe('MetricsServer', () => {
  const servers: MetricsServer[] = [];
  const server = (): MetricsServer => {
    const s = new MetricsServer({ exposition: async () => ({ contentType: 'text/plain', body: 'weir_up 1\n' }) });
    servers.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('binds the address it is given (--metrics-host) and says which', async () => {
    const { address, port } = await server().listen(0, '127.0.0.1');
    expect(address).toBe('127.0.0.1');
    expect(port).toBeGreaterThan(0);
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(await response.text()).toBe('weir_up 1\n');
  });

  it('binds every interface by default', async () => {
    const { address } = await server().listen(0);
    expect(['::', '0.0.0.0']).toContain(address);
  });

  it('fails with the listen error when the address is not this host’s', async () => {
    await expect(server().listen(0, '192.0.2.1')).rejects.toMatchObject({ code: 'EADDRNOTAVAIL' });
  });
});
