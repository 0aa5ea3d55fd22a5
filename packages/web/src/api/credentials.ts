/**
 * The Authorization header the UI sends (Basic or Bearer), kept in sessionStorage so it lasts
 * for the tab and is gone when the tab closes. OIDC sessions live in the server's cookie instead.
 */
const KEY = 'trellis.authorization';

export interface CredentialStore {
  get: () => string | undefined;
  set: (header: string) => void;
  clear: () => void;
}

export const basicHeader = (user: string, password: string): string => {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
};

export const bearerHeader = (token: string): string => `Bearer ${token.trim()}`;

export const sessionCredentials = (storage: Storage): CredentialStore => ({
  get: () => storage.getItem(KEY) ?? undefined,
  set: (header) => storage.setItem(KEY, header),
  clear: () => storage.removeItem(KEY),
});
