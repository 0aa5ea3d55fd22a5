/**
 * What the server tells the UI before it starts: the API base path and the auth mode. The server
 * injects it into index.html as `window.__TRELLIS__` (docs/decisions.md, web UI), so the first
 * render needs no request; `vite dev` has no injection and gets the defaults.
 */
export interface BootConfig {
  /** `server.basePath`: `''` or `/prefix`. */
  readonly basePath: string;
  /** Where the REST API answers: `<basePath>/api/v2`. */
  readonly apiBase: string;
  /** `none`, `basic` or `bearer` (config `auth.mode`). */
  readonly authMode: 'none' | 'basic' | 'bearer';
  /** OpenID Connect sign-in is configured (`auth.oidc`). */
  readonly oidc: boolean;
  /** Users or tokens are configured: offer the user/password and token form. */
  readonly passwordLogin: boolean;
  readonly version: string;
}

declare global {
  interface Window {
    __TRELLIS__?: Partial<BootConfig>;
  }
}

export const DEFAULT_BOOT: BootConfig = {
  basePath: '',
  apiBase: '/api/v2',
  authMode: 'none',
  oidc: false,
  passwordLogin: false,
  version: 'dev',
};

/** The injected config with defaults for anything missing. */
export const readBootConfig = (injected: Partial<BootConfig> | undefined): BootConfig => {
  const basePath = injected?.basePath ?? DEFAULT_BOOT.basePath;
  return {
    ...DEFAULT_BOOT,
    ...injected,
    basePath,
    apiBase: injected?.apiBase ?? `${basePath}/api/v2`,
  };
};
