#!/usr/bin/env node
// The weir CLI. Built from src/cli/main.ts by `npm run build` (run by `npm install`).
import { main } from '../dist/cli/main.js';

await main(process.argv);
