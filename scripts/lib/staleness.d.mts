// Types of staleness.mjs for its TypeScript test.
export declare const globToRegExp: (glob: string) => RegExp;
export declare const staleBuilds: (root: string) => {
  tsc: string | undefined;
  web: string | undefined;
};
export declare const markBuilt: (root: string, at: Date) => void;
