/** src/start.mjs, as TypeScript sees it (src/main.ts writes its first line with it). */
export declare const say: (message: string) => void
