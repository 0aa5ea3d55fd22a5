import { existsSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import type { NextFunction, Request, Response } from 'express';

/** Encodings the build precompresses (packages/web/vite.config.ts), best first. */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;

/** The encodings a request's Accept-Encoding allows (`q=0` refuses one). */
const accepted = (header: string | undefined): Set<string> => {
  const out = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [token = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (token && !(q !== undefined && Number(q.slice(2)) === 0)) out.add(token);
  }
  return out;
};

/**
 * Middleware for `<basePath>/assets`: when the browser accepts brotli or gzip and the build left
 * `<file>.br` / `<file>.gz` beside the asset, rewrites the request to that file and sets
 * `Content-Encoding` and the original file's type; every asset answer carries
 * `Vary: Accept-Encoding` (caches keep one copy per encoding). The static handler after it sends
 * the file, with its caching headers. Which files exist is remembered (hashed names never change).
 */
export const compressedAssets = (dir: string) => {
  const exists = new Map<string, boolean>();
  const has = (file: string): boolean => {
    let v = exists.get(file);
    if (v === undefined) {
      v = existsSync(file);
      exists.set(file, v);
    }
    return v;
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Vary', 'Accept-Encoding');
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    let rel: string;
    try {
      rel = normalize(decodeURIComponent(req.path));
    } catch {
      return next(); // a malformed escape: the static handler answers it
    }
    if (rel.split(sep).includes('..') || !extname(rel)) return next();
    const ok = accepted(req.headers['accept-encoding']);
    const enc = ENCODINGS.find((e) => ok.has(e.name) && has(join(dir, rel + e.suffix)));
    if (!enc) return next();
    res.type(extname(rel));
    res.setHeader('Content-Encoding', enc.name);
    req.url = `${req.path}${enc.suffix}`;
    next();
  };
};
