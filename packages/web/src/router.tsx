import {
  createContext,
  useContext,
  useEffect,
  useState,
  type MouseEvent,
  type ReactNode,
} from 'react';

/*
 * A small history-API router: the app has a handful of routes, so a table of patterns is clearer
 * than a routing library. Paths are app paths (`/dags/x`); the `basePath` prefix is added and
 * removed here only.
 */

export interface RouterValue {
  readonly path: string;
  readonly search: URLSearchParams;
  navigate: (to: string, opts?: { replace?: boolean }) => void;
  href: (to: string) => string;
}

const RouterContext = createContext<RouterValue | undefined>(undefined);

const stripBase = (pathname: string, basePath: string): string => {
  const rest =
    basePath && pathname.startsWith(basePath) ? pathname.slice(basePath.length) : pathname;
  return rest === '' ? '/' : rest;
};

export const RouterProvider = ({
  basePath,
  children,
}: {
  basePath: string;
  children: ReactNode;
}) => {
  const read = () => ({
    path: stripBase(window.location.pathname, basePath),
    search: new URLSearchParams(window.location.search),
  });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const onPop = () => setLoc(read());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const value: RouterValue = {
    ...loc,
    href: (to) => `${basePath}${to}`,
    navigate: (to, opts) => {
      const url = `${basePath}${to}`;
      if (opts?.replace) window.history.replaceState(null, '', url);
      else window.history.pushState(null, '', url);
      setLoc(read());
      if (!opts?.replace) window.scrollTo(0, 0);
    },
  };
  return <RouterContext.Provider value={value}>{children}</RouterContext.Provider>;
};

export const useRouter = (): RouterValue => {
  const r = useContext(RouterContext);
  if (!r) throw new Error('useRouter outside RouterProvider');
  return r;
};

/** Matches `/dags/:fileName` against a path; params are URI-decoded. */
export const matchPath = (pattern: string, path: string): Record<string, string> | undefined => {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return undefined;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const want = p[i] ?? '';
    const got = s[i] ?? '';
    if (want.startsWith(':')) out[want.slice(1)] = decodeURIComponent(got);
    else if (want !== got) return undefined;
  }
  return out;
};

/** An in-app link: a real `<a href>` (open in new tab works) that navigates without reloading. */
export const Link = ({
  to,
  children,
  className,
  title,
}: {
  to: string;
  children: ReactNode;
  className?: string;
  title?: string;
}) => {
  const r = useRouter();
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)
      return;
    e.preventDefault();
    r.navigate(to);
  };
  return (
    <a href={r.href(to)} onClick={onClick} className={className} title={title}>
      {children}
    </a>
  );
};
