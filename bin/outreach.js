#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx so that `npm install && npm start` needs no build step.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/main.ts');
