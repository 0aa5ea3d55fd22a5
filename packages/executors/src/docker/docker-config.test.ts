import { describe, expect, it } from 'vitest';
import { createOptionsFor, resolveBind } from './docker-config.js';

describe('docker create options', () => {
  it('resolves relative bind paths against the base directory', () => {
    expect(resolveBind('./data:/data', '/work', '/home/ada')).toBe('/work/data:/data');
    expect(resolveBind('data/in:/in:ro', '/work', '/home/ada')).toBe('/work/data/in:/in:ro');
    expect(resolveBind('/abs:/x', '/work', '/home/ada')).toBe('/abs:/x');
    expect(resolveBind('named-volume:/x', '/work', '/home/ada')).toBe('named-volume:/x');
    expect(resolveBind('/only-in-container', '/work', '/home/ada')).toBe('/only-in-container');
  });

  it('expands a leading ~ of the host path to the home directory', () => {
    expect(resolveBind('~/data:/data', '/work', '/home/ada')).toBe('/home/ada/data:/data');
    expect(resolveBind('~:/h:ro', '/work', '/home/ada')).toBe('/home/ada:/h:ro');
  });

  it('maps the spec keys to the Docker API and passes API fields through', () => {
    const o = createOptionsFor(
      {
        pull: 'missing',
        autoRemove: true,
        platform: 'linux/amd64',
        container: {
          env: ['A=1'],
          workingDir: '/w',
          exposedPorts: ['80'],
          user: 'nobody',
          Memory: 1,
        },
        host: {
          binds: ['./d:/d'],
          portBindings: { '80': [{ hostPort: '8080' }] },
          networkMode: 'net1',
          autoRemove: true,
        },
        network: { aliases: ['db'] },
      },
      { image: 'img', cmd: ['echo', 'hi'], env: ['S=2'], name: 'n', cwd: '/base', home: '/root' },
    );
    expect(o).toMatchObject({
      Image: 'img',
      name: 'n',
      Cmd: ['echo', 'hi'],
      Env: ['S=2', 'A=1'],
      WorkingDir: '/w',
      User: 'nobody',
      Memory: 1,
      ExposedPorts: { '80/tcp': {} },
      HostConfig: {
        Binds: ['/base/d:/d'],
        PortBindings: { '80/tcp': [{ HostPort: '8080' }] },
        NetworkMode: 'net1',
      },
      NetworkingConfig: { EndpointsConfig: { net1: { Aliases: ['db'] } } },
      platform: 'linux/amd64',
    });
    expect(o.HostConfig).not.toHaveProperty('AutoRemove');
  });

  it('leaves Cmd unset without a command, so the image default runs', () => {
    expect(
      createOptionsFor(
        { pull: 'never', autoRemove: true },
        { image: 'i', cmd: undefined, env: [], cwd: '/', home: '/root' },
      ),
    ).not.toHaveProperty('Cmd');
  });
});
