// The engine's SQL lives in ./sql/, one verb-named file per statement family. This re-export stays only for
// discovery.ts, which is being rewritten on another branch; once it imports from ./sql/ this file goes.
export * from './sql/index.js';
